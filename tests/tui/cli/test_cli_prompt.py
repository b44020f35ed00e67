import json
import os

from click.testing import CliRunner

from tests.core.conftest import FIXTURES
from tui.cli import main

BUNDLE = str(FIXTURES / "mara.json")
FILLER = str(FIXTURES / "filler.json")


def run(*args):
    result = CliRunner().invoke(main, ["prompt", *args], catch_exceptions=False)
    return result


def test_prints_messages_tokens_and_evidence():
    r = run("fx-mara", "q1-open", "--bundle", BUNDLE, "--expression", "1", "--method", "reminder")
    assert r.exit_code == 0, r.output
    assert "evidence: s-p1-e1 at position 2" in r.output
    assert "step 1/1: answer" in r.output and "tokens" in r.output
    assert "recall my preference indicated in the conversation history" in r.output
    assert not os.path.exists(os.environ["PREFSCOPE_DB"])  # --bundle never creates a database


def test_rag_json_with_filler_and_retrieved_turns():
    r = run(
        "fx-mara",
        "q1-mcq",
        "--bundle",
        BUNDLE,
        "--expression",
        "1",
        "--context",
        "normal",
        "--filler",
        FILLER,
        "--method",
        "rag",
        "--retriever",
        "bm25",
        "--k",
        "3",
        "--seed",
        "2",
        "--json",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["context"]["within_target"] is True and out["context"]["reused_filler"] is True
    assert len(out["plan"]["retrieved"]) == 3 and out["plan"]["answer_format"] == "mcq"
    assert out["plan"]["steps"][0]["tokens"] > 35_000


def test_long_messages_are_cut_unless_full():
    args = ("fx-mara", "q1-open", "--bundle", BUNDLE, "--expression", "1", "--method", "fewshot-cot")
    cut = run(*args).output
    full = run(*args, "--full").output
    assert "characters omitted" in cut and "characters omitted" not in full and len(full) > len(cut)


def test_window_refusal_and_force():
    args = ("fx-mara", "q1-open", "--bundle", BUNDLE, "--expression", "1", "--window", "100")
    r = run(*args)
    assert r.exit_code != 0 and "window is 100 tokens" in r.output and "--force" in r.output
    assert run(*args, "--force").exit_code == 0


def test_clear_errors():
    assert "no query 'nope'" in run("fx-mara", "nope", "--bundle", BUNDLE).output
    assert "unknown method" in run("fx-mara", "q1-open", "--bundle", BUNDLE, "--method", "magic").output
    assert "has no user" in run("someone", "q1-open", "--bundle", BUNDLE).output
    assert "unknown context" in run("fx-mara", "q1-open", "--bundle", BUNDLE, "--context", "giant").output


def test_list_methods():
    r = CliRunner().invoke(main, ["prompt", "--list-methods"])
    assert r.exit_code == 0 and "self-critic" in r.output and "RealPref App. C.2" in r.output
