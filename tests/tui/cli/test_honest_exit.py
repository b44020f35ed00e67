"""Exit codes tell the truth: a run or judge whose every model or judgment failed exits 1 and names
the cause (an unset key: the variable), a partly failed one exits 3, and a model id no provider
serves is refused before any work with the known providers listed, never a traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from storage.db import open_db
from storage.runs import list_runs
from tests.cli_runner import unpaced_demo_models  # noqa: F401
from tests.conftest import REPO
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def invoke(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), *args])


def test_a_run_whose_only_model_lacks_its_key_exits_1_naming_the_variable(tmp_path):
    result = invoke(tmp_path / "p.db", "run", "maya", "p1-open", "--model", "openai:gpt-4o-mini", "--plain")
    assert result.exit_code == 1, result.output
    assert "every model failed" in result.output and "OPENAI_API_KEY is not set" in result.output
    conn = open_db(tmp_path / "p.db")
    assert [r.status for r in list_runs(conn)] == ["error"]  # the failed run is still stored


def test_a_run_where_some_models_failed_exits_3(tmp_path):
    args = ("run", "maya", "p1-open", "--model", "demo:oracle", "--model", "anthropic:claude-3-5-haiku-latest")
    result = invoke(tmp_path / "p.db", *args, "--plain")
    assert result.exit_code == 3, result.output
    assert "1 of 2 models failed" in result.output and "ANTHROPIC_API_KEY" in result.output


def test_a_run_where_every_model_answered_exits_0(tmp_path):
    result = invoke(tmp_path / "p.db", "run", "maya", "p1-open", "--model", "demo:oracle", "--plain")
    assert result.exit_code == 0, result.output


def test_judge_whose_every_judgment_failed_exits_1_naming_the_variable(tmp_path):
    db = tmp_path / "p.db"
    assert invoke(db, "run", "maya", "p1-open", "--model", "demo:oracle", "--plain").exit_code == 0
    run_id = list_runs(open_db(db))[0].id
    result = invoke(db, "judge", run_id, "--judge", "rubric:openai:gpt-4o-mini")
    assert result.exit_code == 1, result.output
    assert "every judgment failed" in result.output and "OPENAI_API_KEY" in result.output
    assert invoke(db, "judge", run_id, "--judge", "demo:heuristic", "--dry-run").exit_code == 0


def test_an_attribute_extraction_whose_every_call_failed_exits_1(tmp_path):
    db = tmp_path / "p.db"
    assert invoke(db, "import", str(REPO / "sample_data" / "users" / "maya.json")).exit_code == 0
    result = invoke(db, "attributes", "maya", "--model", "openai:gpt-4o-mini", "--no-dedup")
    assert result.exit_code == 1, result.output
    assert "every chunk extraction failed" in result.output and "OPENAI_API_KEY" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["run", "maya", "p1-open", "--model", "foo:bar", "--plain"],
        ["judge", "RUN", "--judge", "rubric:foo:bar"],
        ["relevance", "RUN", "--model", "foo:bar", "--no-embedding"],
        ["attributes", "maya", "--model", "foo:bar", "--no-dedup"],
        ["pairwise", "RUN", "RUN", "--judge", "foo:bar"],
        ["batch", "--user", "maya", "--query", "p1-open", "--model", "foo:bar", "--name", "b", "-y"],
    ],
    ids=lambda a: a[0],
)
def test_an_unknown_provider_lists_the_known_ones_without_a_traceback(tmp_path, args):
    db = tmp_path / "p.db"
    assert invoke(db, "run", "maya", "p1-open", "--model", "demo:oracle", "--plain").exit_code == 0
    run_id = list_runs(open_db(db))[0].id
    result = invoke(db, *[run_id if a == "RUN" else a for a in args])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "unknown provider 'foo'" in result.output and "known: openai, anthropic, litellm, demo" in result.output
    assert len(list_runs(open_db(db))) == 1  # refused before any work


def test_a_usage_error_exits_2(tmp_path):
    assert invoke(tmp_path / "p.db", "runs", "--no-such-option").exit_code == 2
