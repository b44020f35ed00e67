"""`prefscope prompt --evidence-depth D --json`: the printed plan puts the gold session at depth D."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli
from tests.conftest import SAMPLE_DATA
from tui.cli import main

MAYA_NORMAL = ("prompt", "maya", "p1-open", "--context", "normal", "--expression", "1", "--json")


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("depth-cli") / "p.db")
    cli(path, "import", str(SAMPLE_DATA / "users"))
    cli(path, "import", str(SAMPLE_DATA / "filler"))
    return path


def test_prompt_json_shows_the_evidence_where_the_depth_put_it(db):
    printed = {d: json.loads(cli(db, *MAYA_NORMAL, "--evidence-depth", d)) for d in ("0", "0.5", "1")}
    plain = json.loads(cli(db, *MAYA_NORMAL))
    assert "evidence_depth" not in plain["spec"]
    assert {d: p["spec"]["evidence_depth"] for d, p in printed.items()} == {"0": 0.0, "0.5": 0.5, "1": 1.0}
    ev = {d: p["plan"]["evidence"] for d, p in printed.items()}
    assert all(len(e) == 1 and e[0]["session_id"] == "maya-p1-e1" for e in ev.values())
    history = plain["plan"]["history_tokens"]
    assert all(p["plan"]["history_tokens"] == history for p in printed.values())
    assert ev["1"][0]["tokens_to_query"] == 0
    assert ev["0"][0]["position"] == 0
    assert ev["0"][0]["tokens_to_query"] > ev["0.5"][0]["tokens_to_query"] > 0
    gold_tokens = history - ev["0"][0]["tokens_to_query"]  # depth 0: everything else is after it
    rest = history - gold_tokens
    half = rest - ev["0.5"][0]["tokens_to_query"]
    note = next(n for n in printed["0.5"]["context"]["notes"] if n.startswith("evidence depth 0.5 (reached"))
    assert f"reached {half / rest:.3f}" in note
    assert abs(half / rest - 0.5) <= 0.05  # the sample sessions are each well under 5% of a 35K history


def test_a_depth_outside_zero_to_one_is_refused(db):
    result = CliRunner().invoke(main, ["--db", db, *MAYA_NORMAL, "--evidence-depth", "1.5"])
    assert result.exit_code != 0 and "1.5" in result.output
