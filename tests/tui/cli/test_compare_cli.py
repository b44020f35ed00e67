"""`prefscope compare` on real demo batches in a real SQLite file: the paired statistics it prints
equal scipy's on the same pairs, read back from the stored judgments by this test."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import binomtest, wilcoxon

from core.metrics import bootstrap_ci
from storage.db import open_db
from tests.cli_runner import cli
from tui.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data"
CASE = ["--user", "maya", "--user", "priya", "--user", "tomasz", "--expression", "1"]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    path = str(tmp_path_factory.mktemp("compare") / "c.db")
    cli(path, "import", str(SAMPLE / "users"))
    cli(path, "import", str(SAMPLE / "filler"))
    for model in ("demo:forgetful", "demo:oracle"):  # two batches that differ in one factor: the model
        name = model.split(":")[1]
        cli(path, "batch", "--name", name, *CASE, "--query-kind", "open", "--context", "normal",
            "--model", model, "--judge", "demo:heuristic", "--yes")  # fmt: skip
    cli(path, "batch", "--name", "mcq", *CASE, "--query-kind", "mcq", "--model", "demo:generic",
        "--model", "demo:retrieval", "--yes")  # fmt: skip
    yield path
    mp.undo()


def compare_json(db: str, *args: str) -> dict:
    out = CliRunner().invoke(main, ["--db", db, "compare", *args, "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def scores(db: str, where: str, kind: str, dimension: str) -> dict[tuple, float]:
    conn = open_db(db)
    try:
        rows = conn.execute(
            "SELECT r.user_id, r.query_id, j.score FROM runs r JOIN responses p ON p.run_id = r.id "
            f"JOIN judgments j ON j.response_id = p.id WHERE {where} AND j.kind = ? AND j.dimension = ? AND j.parse_ok",
            [kind, dimension],
        ).fetchall()
    finally:
        conn.close()
    return {(u, q): s for u, q, s in rows}


def test_two_batches_differing_in_the_model_match_scipy_wilcoxon(db):
    got = compare_json(db, "forgetful", "oracle", "--metric", "rubric:alignment")
    a = scores(db, "r.label = 'forgetful'", "rubric", "alignment")
    b = scores(db, "r.label = 'oracle'", "rubric", "alignment")
    keys = sorted(set(a) & set(b))
    diffs = [b[k] - a[k] for k in keys]
    assert got["n"] == len(keys) > 10
    assert "method" in got["key"] and "model" not in got["key"]  # the model is what differs
    assert got["mean_diff"] == pytest.approx(np.mean(diffs))
    assert (got["ci_low"], got["ci_high"]) == pytest.approx(bootstrap_ci(diffs))
    expected = wilcoxon([d for d in diffs if d != 0])
    assert got["test"] == "Wilcoxon signed-rank"
    assert got["statistic"] == pytest.approx(expected.statistic)
    assert got["p_value"] == pytest.approx(expected.pvalue)
    assert got["effect_dz"] == pytest.approx(np.mean(diffs) / np.std(diffs, ddof=1))
    assert len(got["improved"]) == sum(d > 0 for d in diffs)
    assert len(got["regressed"]) == sum(d < 0 for d in diffs)
    for item in got["improved"]:
        assert item["b"] - item["a"] > 0 and (item["user"], item["query"]) in a


def test_two_values_of_a_factor_in_one_batch_match_scipy_mcnemar(db):
    got = compare_json(db, "model=demo:generic", "model=demo:retrieval", "--batch", "mcq")
    a = scores(db, "r.label = 'mcq' AND p.model = 'demo:generic'", "choice", "accuracy")
    b = scores(db, "r.label = 'mcq' AND p.model = 'demo:retrieval'", "choice", "accuracy")
    keys = set(a) & set(b)
    only_a = sum(1 for k in keys if a[k] == 1 and b[k] == 0)
    only_b = sum(1 for k in keys if a[k] == 0 and b[k] == 1)
    assert got["metric"] == "choice:accuracy" and got["binary"] is True
    assert got["test"] == "McNemar (exact)"
    assert (got["a_only"], got["b_only"]) == (only_a, only_b)
    assert only_a + only_b > 0
    assert got["p_value"] == pytest.approx(binomtest(only_b, only_a + only_b, 0.5).pvalue)
    assert got["n"] == len(keys)
    assert got["unpaired_a"] == len(set(a) - keys) and got["unpaired_b"] == len(set(b) - keys)


def test_a_factor_over_two_batches_uses_both_batches(db):
    """`--batch` twice: the runs of either batch (the second used to replace the first silently)."""
    got = compare_json(db, "model=demo:forgetful", "model=demo:oracle", "--batch", "forgetful", "--batch", "oracle")
    alone = compare_json(db, "forgetful", "oracle")  # the same pairs, named by batch
    assert got["n"] == alone["n"] > 10 and got["mean_diff"] == pytest.approx(alone["mean_diff"])


def test_the_printed_summary_and_the_pairs_csv(db, tmp_path):
    out = CliRunner().invoke(
        main, ["--db", db, "compare", "forgetful", "oracle", "--csv", str(tmp_path / "p.csv")],
        terminal_width=120, catch_exceptions=False,
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    for text in ("B − A", "95% paired bootstrap CI", "Wilcoxon signed-rank", "Cohen's d_z", "improved"):
        assert text in out.output
    with open(tmp_path / "p.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    got = compare_json(db, "forgetful", "oracle")
    assert len(rows) == got["n"]
    assert {r["b_response"] for r in rows} >= {i["b_response"] for i in got["improved"]}
    assert all(float(r["diff"]) == float(r["b"]) - float(r["a"]) for r in rows)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchbatch", "oracle"], "neither a batch name nor a run id"),
        (["method=zero-shot", "model=demo:oracle"], "ONE factor"),
        (["forgetful", "oracle", "--metric", "rubric"], "one dimension at a time"),
        (["forgetful", "mcq", "--metric", "rubric:alignment"], "no rubric:alignment judgments for 'mcq'"),
    ],
)
def test_what_cannot_be_compared_is_named(db, args, message):
    out = CliRunner().invoke(main, ["--db", db, "compare", *args])
    assert out.exit_code == 1
    assert message in out.output
