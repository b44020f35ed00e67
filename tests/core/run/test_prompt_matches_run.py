"""`prefscope prompt` prints the plan `prefscope run` sends: for every method (and the option sets
that used to differ), the sha256 of the messages of all steps printed by `prompt --json` equals
that of the plan `run` stored (runs + prompts tables, read back through storage). Multi-step
methods store their steps as templates (earlier answers are filled in when sent), so the stored
plan is what is compared."""

from __future__ import annotations

import json
import re

import pytest

from core.methods import list_methods
from core.run.prepare import messages_sha256
from storage.db import open_db
from storage.runs import load_run
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401

METHODS = [m.name for m in list_methods()]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """One real SQLite file for the module: the sample users are imported by the first command."""
    return str(tmp_path_factory.mktemp("same-plan") / "prefscope.db")


pytestmark = pytest.mark.usefixtures("unpaced_demo_models")


def run_then_prompt(db: str, user: str, query: str, *options: str) -> tuple[object, dict]:
    """(the plan `run` stored, what `prompt --json` printed) for the same options."""
    same = [user, query, *options, "--model", "demo:generic"]
    run_id = re.search(r"stored as run (\S+)", cli(db, "run", *same, "--plain")).group(1)
    conn = open_db(db)
    try:
        stored = load_run(conn, run_id)
    finally:
        conn.close()
    printed = json.loads(cli(db, "prompt", *same, "--json"))
    assert printed["spec"]["method"] == stored.spec.method
    return stored, printed


@pytest.mark.parametrize("method", METHODS)
def test_prompt_prints_what_run_sends_for_every_method(db, method):
    stored, printed = run_then_prompt(db, "maya", "p1-open", "--method", method, "--retriever", "bm25")
    assert printed["messages_sha256"] == messages_sha256(stored.plan)
    assert [len(s["messages"]) for s in printed["plan"]["steps"]] == [len(s.messages) for s in stored.plan.steps]
    assert printed["spec"] == stored.spec.model_dump(mode="json")  # one option → RunSpec path


@pytest.mark.parametrize(
    ("method", "context", "extra"),
    [
        ("zero-shot", "simple", []),  # no --expression: both take the most implicit type present
        ("reminder", "normal", []),
        ("rag", "normal", ["--retriever", "bm25", "--k", "3"]),
        ("fewshot-cot", "long", ["--expression", "2"]),
        ("td", "simple", ["--expression", "1"]),
        ("cupid-generate", "full", []),
        ("cupid-generate", "summaries", []),  # the run wrote the summaries; prompt reads them cached
    ],
)
def test_prompt_prints_what_run_sends_for_the_option_sets_that_used_to_differ(db, method, context, extra):
    stored, printed = run_then_prompt(db, "maya", "p1-open", "--method", method, "--context", context, *extra)
    assert printed["messages_sha256"] == messages_sha256(stored.plan)
    assert printed["plan"]["context"] == [c.model_dump(mode="json") for c in stored.plan.context]
    assert printed["pending_summary_calls"] == []
    if not extra:
        assert stored.spec.expression_type == 4  # maya has all four types


def test_a_different_option_changes_the_digest(db):
    """The comparison can fail: another seed draws other filler, so other messages."""
    a = json.loads(cli(db, "prompt", "maya", "p1-open", "--context", "normal", "--seed", "1", "--json"))
    b = json.loads(cli(db, "prompt", "maya", "p1-open", "--context", "normal", "--seed", "2", "--json"))
    assert a["messages_sha256"] != b["messages_sha256"]
