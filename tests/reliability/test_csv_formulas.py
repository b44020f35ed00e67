"""Every command that writes a CSV file writes it formula-safe: ids and labels that a spreadsheet
would run (``=HYPERLINK(…)``, ``=SUM(1+1)``, ``+cmd|'/c calc'!A0``) get a leading ``'`` in
``report --csv`` and ``compare --csv`` as in ``export`` (one function, ``formula_safe``), and
numbers stay numbers."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

from core.formats.base import ImportResult
from core.model import Preference, Query, Session, Turn, User, UserBundle
from storage.db import open_db
from storage.users import save_import
from tests.storage.export_fixtures import Writer, judgment
from tui.cli import main

USER = '=HYPERLINK("http://evil.example/x","click")'
QUERIES = ["=SUM(1+1)", "+cmd|'/c calc'!A0"]
LABEL = "@SUM(A1:A9)"
FORMULAS = {USER, *QUERIES, LABEL}


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "formulas.db"
    bundle = UserBundle(
        user=User(id=USER, name="U"),
        sessions=[
            Session(
                id="s1",
                kind="preference",
                expression_type=1,
                preference_ids=["p1"],
                turns=[Turn(role="user", content="I like tea.")],
            )
        ],
        preferences=[Preference(id="p1", text="Likes tea", origin="original")],
        queries=[Query(id=q, kind="open", text="Drink?", preference_id="p1") for q in QUERIES],
    )
    conn = open_db(path)
    try:
        save_import(conn, ImportResult(format="native", bundles=[bundle], fillers=[], notes=[]))
    finally:
        conn.close()
    w = Writer(path)
    for model, scores in (("openai:a", (2.0, 4.0)), ("openai:b", (5.0, 1.0))):
        for query, score in zip(QUERIES, scores):
            w.run(user=USER, query=query, model=model, label=LABEL, judgments=[judgment(score=score)])
    w.close()
    return path


def read_csv(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def assert_formula_safe(rows: list[list[str]]) -> set[str]:
    """Every cell that would start a formula starts with ', and each of those is one of ours."""
    cells = [c for row in rows for c in row]
    for c in cells:
        assert not c.startswith(("=", "+", "@", "\t", "\r")), f"formula cell written as is: {c!r}"
        if c.startswith("-"):
            float(c)  # a negative number, not text: numbers pass through
    return {c[1:] for c in cells if c.startswith("'")}


def invoke(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), *args])


def test_report_csv_neutralises_formulas_in_ids_and_labels(db, tmp_path):
    out = tmp_path / "report.csv"
    result = invoke(db, "report", "--by", "user,query,label", "--csv", str(out))
    assert result.exit_code == 0, result.output
    rows = read_csv(out)
    assert assert_formula_safe(rows) >= FORMULAS
    header = rows[0]
    assert len(rows) == 3, rows  # one table: a row per query
    means = sorted(float(r[header.index("mean")]) for r in rows[1:])
    assert means == [2.5, 3.5]  # numbers are written as they are


def test_compare_csv_neutralises_formulas_and_keeps_numbers(db, tmp_path):
    out = tmp_path / "pairs.csv"
    result = invoke(
        db, "compare", "model=openai:a", "model=openai:b", "--metric", "rubric:alignment", "--csv", str(out)
    )
    assert result.exit_code == 0, result.output
    rows = read_csv(out)
    assert assert_formula_safe(rows) >= {USER, *QUERIES}
    header = rows[0]
    diffs = sorted(float(r[header.index("diff")]) for r in rows[1:])
    assert diffs == [-3.0, 3.0]  # "-3.0" is a number, written as it is
    for r in rows[1:]:
        assert float(r[header.index("b")]) - float(r[header.index("a")]) == float(r[header.index("diff")])
