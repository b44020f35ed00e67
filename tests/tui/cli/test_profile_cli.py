"""`prompt` and `run` start from the user's benchmark's profile: a PrefEval user with no options gets
PrefEval's protocol (its inter-turn context, 5 turns, its zero-shot method) and the output says so;
`--profile none` gives prefscope's defaults exactly as an option-less run of a user of no benchmark;
an option given wins; a LoCoMo user gets locomo-qa and the locomo F1 judge, stored with the run."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from app.workbench import Workbench
from core.settings import Settings
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.conftest import SAMPLE_DATA
from tests.core.formats.builders import locomo_sample, prefeval_files, write_tree
from tui.cli import main

PE_USER = "prefeval-demo_topic-000"
PE_QUERY = f"{PE_USER}-open"
LOCOMO_USER = "locomo-demo-1"
LOCOMO_QUERY = f"{LOCOMO_USER}-qa000"
PREFEVAL_NOTE = (
    "defaults from the PrefEval profile: context prefeval-turns, turns 5, method prefeval-zero-shot, "
    "judge demo:heuristic (taxonomy needs a judge model and none is configured: set `judge` to one)"
)


def prefeval_tree(root):
    """The builders' PrefEval topic, with an inter-turn pool long enough for 5 turns (10 messages)."""
    files = prefeval_files()
    pool = files["filtered_inter_turns.json"]
    for i in range(3):
        conversation = [{"role": "user", "content": f"Question {i}?"}, {"role": "assistant", "content": f"Answer {i}."}]
        pool.append({**pool[0], "conversation_id": f"conv-{i}", "conversation": conversation})
    return write_tree(root, files)


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "profiles.db")
    cli(path, "import", str(SAMPLE_DATA / "users"))
    cli(path, "import", str(prefeval_tree(tmp_path / "prefeval")))
    (tmp_path / "locomo.json").write_text(json.dumps([locomo_sample()]))
    cli(path, "import", str(tmp_path / "locomo.json"))
    return path


def prompt_json(db: str, *args: str) -> dict:
    return json.loads(cli(db, "prompt", *args, "--json"))


def test_a_prefeval_user_with_no_options_gets_prefevals_protocol_and_is_told_so(db):
    text = cli(db, "prompt", PE_USER, PE_QUERY)
    assert text.startswith("prefeval-zero-shot (PrefEval;") and "context prefeval-turns" in text
    assert f"note: {PREFEVAL_NOTE}; an option given wins; --profile none: prefscope's defaults" in text
    assert "the first 10 messages of the pool, as PrefEval" in text  # 5 inter turns were built

    out = prompt_json(db, PE_USER, PE_QUERY)
    spec = out["spec"]
    assert (spec["context"], spec["turns"], spec["method"], spec["judges"]) == (
        "prefeval-turns",
        5,
        "prefeval-zero-shot",
        ["demo:heuristic"],
    )
    assert out["profile"]["name"] == "prefeval"
    assert out["profile"]["applied"] == {
        "context": "prefeval-turns",
        "turns": 5,
        "method": "prefeval-zero-shot",
        "judge": "demo:heuristic",
    }
    assert out["plan"]["notes"][0].startswith(PREFEVAL_NOTE)


def test_profile_none_is_prefscopes_zero_shot_as_the_options_would_give_it(db):
    none = cli(db, "prompt", PE_USER, PE_QUERY, "--profile", "none", "--json")
    spec = json.loads(none)["spec"]
    assert (spec["context"], spec.get("turns"), spec["method"]) == ("simple", None, "zero-shot")
    explicit = ("--context", "simple", "--method", "zero-shot", "--judge", "demo:heuristic", "--json")
    assert none == cli(db, "prompt", PE_USER, PE_QUERY, *explicit)  # byte for byte: no profile key, no note
    assert "profile" not in json.loads(none) and "defaults from" not in none
    # A user of no benchmark: no profile, with or without --profile none.
    assert cli(db, "prompt", "maya", "p1-open", "--json") == cli(
        db, "prompt", "maya", "p1-open", "--profile", "none", "--json"
    )


def test_an_option_given_wins_over_the_profile(db):
    out = prompt_json(db, PE_USER, PE_QUERY, "--method", "prefeval-remind", "--turns", "2")
    spec = out["spec"]
    assert (spec["context"], spec["turns"], spec["method"]) == ("prefeval-turns", 2, "prefeval-remind")
    assert out["profile"]["applied"] == {"context": "prefeval-turns", "judge": "demo:heuristic"}
    simple = prompt_json(db, PE_USER, PE_QUERY, "--context", "simple")
    assert (simple["spec"]["context"], simple["spec"].get("turns")) == ("simple", None)  # the turns went with it
    judged = prompt_json(db, PE_USER, PE_QUERY, "--judge", "choice")
    assert judged["spec"]["judges"] == ["choice"] and "judge" not in judged["profile"]["applied"]


def test_a_configured_judge_model_makes_the_profiles_judge_an_llm_judge(db, monkeypatch):
    monkeypatch.setenv("PREFSCOPE_JUDGE", "openai:gpt-4o-mini")
    out = prompt_json(db, PE_USER, PE_QUERY)
    assert out["spec"]["judges"] == ["taxonomy:openai:gpt-4o-mini"] and out["profile"]["reasons"] == []


def test_another_profile_by_name_and_an_unknown_one(db):
    spec = prompt_json(db, "maya", "p1-open", "--profile", "locomo")["spec"]
    assert (spec["method"], spec["judges"]) == ("locomo-qa", ["locomo"])
    bad = CliRunner().invoke(main, ["--db", db, "prompt", "maya", "p1-open", "--profile", "nope"])
    assert bad.exit_code == 2
    assert "unknown profile 'nope'; expected one of realpref, interpref, cupid, prefeval" in bad.output
    assert bad.output.rstrip().endswith("none")


def test_turns_for_a_context_that_takes_none_is_refused(db):
    bad = CliRunner().invoke(main, ["--db", db, "prompt", "maya", "p1-open", "--turns", "3"])
    assert bad.exit_code != 0 and "--turns goes with --context prefeval-turns (got --context simple)" in bad.output


@pytest.mark.usefixtures("unpaced_demo_models")
def test_a_locomo_user_runs_locomo_qa_judged_by_f1_and_the_run_remembers_why(db):
    out = prompt_json(db, LOCOMO_USER, LOCOMO_QUERY)
    assert (out["spec"]["context"], out["spec"]["method"], out["spec"]["judges"]) == ("full", "locomo-qa", ["locomo"])
    assert out["profile"]["applied"] == {"context": "full", "method": "locomo-qa", "judge": "locomo"}

    printed = cli(db, "run", LOCOMO_USER, LOCOMO_QUERY, "--model", "demo:generic", "--plain")
    run_id = re.search(r"stored as run (\S+)", printed).group(1)
    wb = Workbench(Settings(db=db))
    try:
        run = wb.load_run(run_id)
        kinds = {j.kind for j in wb.judgments(run_id)}
    finally:
        wb.close()
    assert (run.spec.method, run.spec.judges) == ("locomo-qa", ["locomo"]) and kinds == {"locomo"}
    assert run.plan.notes[0] == (
        "defaults from the LoCoMo profile: context full, method locomo-qa, judge locomo; "
        "an option given wins; --profile none: prefscope's defaults"
    )
    assert run.plan.notes == out["plan"]["notes"]  # what prompt printed is what run stored
