"""Every command takes ids in full or as a unique short form: the ids `prefscope runs` prints in an
80-column terminal are accepted by `export --runs`, and unknown ids are "not found" with exit 1."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")


@pytest.fixture
def two_runs(tmp_path):
    db = str(tmp_path / "p.db")
    for query in ("p1-open", "p2-open"):
        cli(db, "run", "maya", query, "--model", "demo:oracle", "--plain")
    return db


def printed_ids(db, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    out = cli(db, "runs")
    rows = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│") and line[2:3] != " "]
    assert max(map(len, out.splitlines())) <= columns
    return rows


def test_ids_printed_at_80_columns_are_accepted_by_export(two_runs, monkeypatch):
    shown = printed_ids(two_runs, monkeypatch, 80)
    full = [r["id"] for r in json.loads(cli(two_runs, "runs", "--json"))]
    assert len(shown) == 2 and all(s and s not in full for s in shown)  # the short form
    for short, run_id in zip(shown, full):
        result = CliRunner().invoke(main, ["--db", two_runs, "export", "--runs", short])
        assert result.exit_code == 0, result.output
        exported = list(csv.DictReader(io.StringIO(result.stdout)))
        assert {row["run_id"] for row in exported} == {run_id}


def test_a_wide_terminal_shows_full_ids(two_runs, monkeypatch):
    full = [r["id"] for r in json.loads(cli(two_runs, "runs", "--json"))]
    assert printed_ids(two_runs, monkeypatch, 200) == full


def test_unknown_and_ambiguous_ids_exit_1_saying_so(two_runs):
    for args, says in [
        (["export", "--runs", "run-nope"], "run 'run-nope' not found"),
        (["report", "--runs", "run-nope"], "run 'run-nope' not found"),
        (["judge", "run-nope"], "run 'run-nope' not found"),
        (["relevance", "run-nope"], "run 'run-nope' not found"),
        (["export", "--runs", "run-"], "is ambiguous: it matches run-"),
        (["export", "--user", "nobody"], "user 'nobody' not found"),
        (["runs", "--user", "nobody"], "user 'nobody' not found"),
        (["run", "maya", "p1", "--plain"], "query 'p1' is ambiguous: it matches p1-mcq, p1-open"),
    ]:
        result = CliRunner().invoke(main, ["--db", two_runs, *args])
        assert result.exit_code == 1 and says in result.output, (args, result.output)
        assert "run_id," not in result.output  # no header written before the refusal


def test_prefixes_work_for_runs_users_and_queries(two_runs):
    full = [r["id"] for r in json.loads(cli(two_runs, "runs", "--json"))]
    out = cli(two_runs, "judge", full[0][:-3], "--judge", "demo:heuristic", "--dry-run")
    assert full[0] in out
    assert json.loads(cli(two_runs, "runs", "--json", "--user", "ma"))[0]["user_id"] == "maya"
    cli(two_runs, "run", "ma", "p3-o", "--model", "demo:generic", "--plain")
    cases = {(r["user_id"], r["query_id"]) for r in json.loads(cli(two_runs, "runs", "--json"))}
    assert ("maya", "p3-open") in cases


def test_users_json_has_full_ids_and_counts(two_runs):
    doc = json.loads(cli(two_runs, "users", "--json"))
    maya = next(u for u in doc["users"] if u["id"] == "maya")
    assert maya["queries"] > 0 and maya["source"] == "sample"
    assert all("id" in p for p in doc["filler_pools"])
