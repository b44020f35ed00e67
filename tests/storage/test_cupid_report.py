"""``prefscope report --cupid`` on a real SQLite file: CUPID's counting (zeros counted, exclusions
left out) and which instances were which; and CUPID's generation average with its 0s."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from core.benchmark import report_section
from storage.db import open_db
from storage.report import section_table
from tests.storage.export_fixtures import Writer, db_with_tiny, judgment
from tui.cli import main


def _counts(status, n_true, n_pred, tm, pm, instance):
    return {
        "cupid_status": status,
        "n_true": n_true,
        "n_predicted": n_pred,
        "true_matched": tm,
        "predicted_matched": pm,
        "instance": instance,
    }


@pytest.fixture
def db_path(tmp_path):
    """The worked example: A (3 gold, tm 2.5; 2 inferred, pm 1.5), B (2, 1; 2, 1), C empty with 2
    gold items, D without the heading (excluded) → R = 3.5/7 = 0.5, P = 2.5/4 = 0.625."""
    path = db_with_tiny(tmp_path / "c.db")
    w = Writer(path)
    rows = [
        (_counts("ok", 3, 2, 2.5, 1.5, "u1/inst-A"), True),
        (_counts("ok", 2, 2, 1.0, 1.0, "u1/inst-B"), True),
        (_counts("empty", 2, 0, 0.0, 0.0, "u1/inst-C"), True),
        ({"cupid_status": "no_heading", "instance": "u1/inst-D"}, False),
    ]
    for extra, ok in rows:
        score = 0.0 if ok else None
        j = judgment(kind="matching", dimension="precision", score=score, extra=extra, scale=(0, 1), parse_ok=ok)
        w.run(query="q-cons", method="cupid-infer", judgments=[j])
    for score, status in ((8.0, "ok"), (6.0, "ok"), (0.0, "no_score_heading")):
        extra = {"cupid_status": status, "instance": f"u1/gen-{score:g}"}
        w.run(
            query="q-cons",
            method="cupid-generate",
            judgments=[judgment(kind="checklist", dimension="preference", score=score, extra=extra, scale=(1, 10))],
        )
    w.close()
    return path


def test_matching_table_counts_like_cupid(db_path):
    db = open_db(db_path)
    try:
        t = section_table(db, report_section("cupid-matching"), [])
        g = section_table(db, report_section("cupid-generation"), [])
    finally:
        db.close()
    [row] = t.as_dicts()
    assert (row["n"], row["zero"], row["match_failed"], row["excluded"]) == (3, 1, 0, 1)
    assert row["recall"] == pytest.approx(0.5) and row["precision"] == pytest.approx(0.625)
    assert "counted as zero: u1/inst-C" in t.notes and "excluded: u1/inst-D (no_heading)" in t.notes
    [gen] = g.as_dicts()
    assert gen["average_score"] == pytest.approx(14 / 3) and gen["zeros"] == 1


def test_report_cli_names_zero_and_excluded_instances(db_path):
    result = CliRunner().invoke(main, ["--db", str(db_path), "report", "--cupid", "--cupid-by", "", "--no-chart"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "counted as zero: u1/inst-C" in text and "excluded: u1/inst-D (no_heading)" in text
