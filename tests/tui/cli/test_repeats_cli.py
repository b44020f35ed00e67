"""Repeats and judge test–retest end to end on a real SQLite file: a 3-repeat batch stores three
answers per cell with their temperature, the report's flip rates and variances equal a computation
from the stored rows, and `judge --judge-repeats` keeps every judging."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from statistics import mean, variance

import pytest
from click.testing import CliRunner

from core.metrics import wilson_ci
from storage.db import open_db
from tests.cli_runner import cli
from tui.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    path = str(tmp_path_factory.mktemp("repeats") / "r.db")
    cli(path, "import", str(SAMPLE / "users"))
    cli(path, "import", str(SAMPLE / "filler"))
    cli(path, "batch", "--name", "rep", "--user", "maya", "--user", "priya", "--query-kind", "open", "--expression", "1",
        "--model", "demo:oracle", "--model", "demo:generic", "--judge", "demo:heuristic",
        "--repeats", "3", "--temperature", "0.9", "--yes")  # fmt: skip
    yield path
    mp.undo()


def rows(db: str, sql: str) -> list[tuple]:
    conn = open_db(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_three_answers_per_cell_with_their_temperature(db):
    cells = rows(
        db,
        "SELECT r.query_id, p.model, r.user_id, count(*), group_concat(coalesce(json_extract(r.spec, '$.repeat'), 0)), "
        "group_concat(json_extract(p.params, '$.temperature')) FROM runs r JOIN responses p ON p.run_id = r.id "
        "WHERE r.label = 'rep' AND p.is_final GROUP BY 1, 2, 3",
    )
    assert len(cells) == 32  # 16 open queries × 2 models
    for *_, n, repeats, temps in cells:
        assert n == 3
        assert sorted(repeats.split(",")) == ["0", "1", "2"]
        assert {float(t) for t in temps.split(",")} == {0.9}


def test_report_flip_rates_and_variances_equal_the_stored_scores(db):
    out = CliRunner().invoke(main, ["--db", db, "report", "--batch", "rep", "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    tables = {t["title"]: t for t in json.loads(out.stdout)["tables"]}
    table = tables["rubric:alignment across repeats by model"]
    stored = rows(
        db,
        "SELECT p.model, r.user_id, r.query_id, j.score FROM runs r JOIN responses p ON p.run_id = r.id "
        "JOIN judgments j ON j.response_id = p.id WHERE r.label = 'rep' AND j.dimension = 'alignment'",
    )
    items: dict[str, dict[tuple, list[float]]] = defaultdict(lambda: defaultdict(list))
    for model, user, query, score in stored:
        items[model][(user, query)].append(score)
    by_model = {r["model"]: r for r in table["rows"]}
    assert set(by_model) == set(items)
    for model, per_item in items.items():
        row = by_model[model]
        flipped = sum(1 for s in per_item.values() if len({x >= 4 for x in s}) > 1)
        assert row["items"] == len(per_item) == 16
        assert row["repeats"] == 3
        assert row["verdict"] == "passes 4"
        assert row["flip_rate"] == pytest.approx(flipped / 16)
        assert (row["flip_ci_low"], row["flip_ci_high"]) == pytest.approx(wilson_ci(flipped, 16))
        assert row["item_variance"] == pytest.approx(mean(variance(s) for s in per_item.values()))
    # at 0.9 the oracle answers generically in ~45% of calls; the generic model is deterministic
    assert by_model["demo:generic"]["flip_rate"] == 0
    assert by_model["demo:oracle"]["flip_rate"] > 0


def test_the_batch_names_its_repeats_and_temperature(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    path = str(tmp_path / "d.db")
    cli(path, "import", str(SAMPLE / "users"))
    out = cli(
        path, "batch", "--user", "maya", "--query", "p1-open", "--model", "demo:oracle", "--repeats", "2", "--dry-run"
    )
    assert "2 answers per cell at temperature the model's default" in out
    assert "measure only what the provider varies" in out


def test_judge_repeats_keeps_every_judging_and_prints_test_retest(db):
    run = rows(db, "SELECT id FROM runs WHERE label = 'rep' ORDER BY id LIMIT 1")[0]
    out = CliRunner().invoke(
        main, ["--db", db, "judge", run[0], "--judge", "demo:heuristic", "--judge-repeats", "2"],
        terminal_width=160, catch_exceptions=False,
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "judge test–retest" in out.output
    judged = rows(
        db,
        f"SELECT count(*), count(DISTINCT json_extract(extra, '$.judge_repeat')) FROM judgments WHERE run_id = '{run[0]}'",
    )
    assert judged[0] == (9, 2)  # the batch's 3 rubric dimensions + 2 × 3 more, marked 0 and 1
    retest = CliRunner().invoke(
        main, ["--db", db, "report", "--runs", run[0], "--judge-retest", "--json"], catch_exceptions=False
    )
    tables = {t["title"]: t for t in json.loads(retest.stdout)["tables"]}
    (row,) = tables["rubric:alignment: judge test–retest"]["rows"]
    assert row["answers"] == 1 and row["judgings"] == 3
    assert row["exact"] == 1.0  # the heuristic judge is deterministic
