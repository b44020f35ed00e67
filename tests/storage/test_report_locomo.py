"""`prefscope report` on stored LoCoMo runs (real CLI, real SQLite): the per-category LoCoMo table
(print order 4, 1, 2, 3, 5, then the micro overall) and the ``category`` factor, checked against
numbers worked out by hand from PROTOCOL.md §3.

Fixture: our small LoCoMo sample plus a category-1 and a category-3 question (5 questions, one per
category), answered by demo:oracle (a batch: it answers with the gold answer) and by hand-written
answers imported as ``imported:hand`` and judged afterwards, both with the ``locomo`` judge.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from core.benchmark import report_section
from storage.db import open_db
from storage.report import section_table
from tests.cli_runner import cli
from tests.core.formats.builders import locomo_sample
from tui.cli import main

USER = "locomo-demo-1"
#: query -> (category, gold, hand answer, hand F1, oracle F1)
QUESTIONS = {
    # pred [she, went, to, porto] vs [porto]: P 1/4, R 1 -> 2/5; oracle says "Porto": 1
    "qa000": (4, "Porto", "She went to Porto", 2 / 5, 1.0),
    # pred [in, 2022] vs [2022]: P 1/2, R 1 -> 2/3
    "qa001": (2, "2022", "in 2022", 2 / 3, 1.0),
    # category 5: the trap answer scores 0; the oracle's "Not mentioned in the conversation" scores 1
    "qa002": (5, "Not mentioned in the conversation", "Tosca", 0.0, 1.0),
    # category 1: gold parts Porto -> 0, Lisbon -> 1 against the single pred part "Lisbon": mean 1/2
    "qa003": (1, "Porto, Lisbon", "Lisbon", 1 / 2, 1.0),
    # category 3: gold before ';' = "designer"; "an architect" -> [architect]: 0. The oracle repeats the
    # whole gold "designer; architect" -> [designer, architect] vs [designer]: P 1/2, R 1 -> 2/3
    "qa004": (3, "designer; architect", "an architect", 0.0, 2 / 3),
}
ORDER = ["4 single-hop", "1 multi-hop", "2 temporal", "3 open-domain", "5 adversarial", "overall"]
BY_CATEGORY = {4: "qa000", 1: "qa003", 2: "qa001", 3: "qa004", 5: "qa002"}
#: overall = sum / 5: hand (2/5 + 2/3 + 0 + 1/2 + 0)/5 = (47/30)/5 = 47/150; oracle (4 + 2/3)/5 = 14/15
HAND = [QUESTIONS[BY_CATEGORY[c]][3] for c in (4, 1, 2, 3, 5)] + [47 / 150]
ORACLE = [QUESTIONS[BY_CATEGORY[c]][4] for c in (4, 1, 2, 3, 5)] + [14 / 15]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    tmp = tmp_path_factory.mktemp("locomo_report")
    sample = locomo_sample()
    sample["qa"] += [
        {"question": "Which cities did Ana visit?", "answer": "Porto, Lisbon", "evidence": ["D1:1"], "category": 1},
        {"question": "What might Ana work as?", "answer": "designer; architect", "evidence": ["D1:1"], "category": 3},
    ]
    data = tmp / "locomo.json"
    data.write_text(json.dumps([sample]), encoding="utf-8")
    path = str(tmp / "r.db")
    cli(path, "import", str(data))
    cli(path, "batch", "--name", "loc", "--user", USER, "--method", "zero-shot", "--model", "demo:oracle",
        "--judge", "locomo", "--yes")  # fmt: skip
    hand = tmp / "hand.jsonl"
    lines = [{"user": USER, "query": f"{USER}-{q}", "model": "hand", "answer": v[2]} for q, v in QUESTIONS.items()]
    hand.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    cli(path, "import-results", str(hand))
    cli(path, "judge", "--label", "imported:*", "--judge", "locomo")
    yield path
    mp.undo()


def report_tables(db: str, *args: str) -> list[dict]:
    result = CliRunner().invoke(main, ["--db", db, "report", "--json", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["tables"]


def test_stored_judgments_are_the_hand_f1(db):
    conn = open_db(db)
    try:
        rows = conn.execute(
            "SELECT p.model, r.query_id, j.score FROM judgments j JOIN runs r ON r.id = j.run_id"
            " JOIN responses p ON p.id = j.response_id WHERE j.judge_model = 'metric:locomo'"
        ).fetchall()
    finally:
        conn.close()
    got = {(m, q.removeprefix(f"{USER}-")): s for m, q, s in rows}
    assert len(got) == 10
    for q, (_, _, _, hand, oracle) in QUESTIONS.items():
        assert got[("imported:hand", q)] == pytest.approx(hand) and got[("demo:oracle", q)] == pytest.approx(oracle)


def test_report_has_the_locomo_table_per_model_in_print_order(db):
    (table,) = [t for t in report_tables(db) if t["title"].startswith("LoCoMo")]
    assert table["title"] == "LoCoMo QA F1 by model"
    by_model: dict[str, list[dict]] = {}
    for row in table["rows"]:
        by_model.setdefault(row["model"], []).append(row)
    assert set(by_model) == {"demo:oracle [demo]", "imported:hand"}
    for model, expected in (("imported:hand", HAND), ("demo:oracle [demo]", ORACLE)):
        rows = by_model[model]
        assert [r["metric"] for r in rows] == ORDER
        assert [r["n"] for r in rows] == [1, 1, 1, 1, 1, 5] and all(r["failed"] == 0 for r in rows)
        assert [r["accuracy"] for r in rows] == pytest.approx(expected)
        assert all(r["judge"] == "metric:locomo" for r in rows)


def test_category_factor_names_the_category(db):
    tables = report_tables(db, "--by", "category,model", "--metric", "locomo:f1")
    score = next(t for t in tables if t["title"] == "locomo:f1 by category × model")
    got = {(r["category"], r["model"]): (r["n"], r["mean"]) for r in score["rows"]}
    assert got[("3 open-domain", "demo:oracle [demo]")] == (1, pytest.approx(2 / 3))
    assert got[("4 single-hop", "imported:hand")] == (1, pytest.approx(2 / 5))
    assert {c for c, _ in got} == set(ORDER[:5])
    loc = next(t for t in tables if t["title"].startswith("LoCoMo"))
    # Grouped by category, each block shows its own category and overall only.
    hand3 = [
        (r["metric"], r["n"]) for r in loc["rows"] if r["category"] == "3 open-domain" and r["model"] == "imported:hand"
    ]
    assert hand3 == [("3 open-domain", 1), ("overall", 1)]


def test_storage_function_across_models(db):
    conn = open_db(db)
    try:
        table = section_table(conn, report_section("locomo"), [])
    finally:
        conn.close()
    rows = {r[-4]: r for r in table.rows}  # metric -> row (judge, version, demo, metric, n, failed, accuracy)
    assert list(rows) == ORDER and rows["overall"][-3] == 10
    # Micro over both models: (47/30 + 14/3)/10 = (47/30 + 140/30)/10 = 187/300
    assert rows["overall"][-1] == pytest.approx(187 / 300)
    # 3 open-domain pooled: (0 + 2/3)/2 = 1/3
    assert rows["3 open-domain"][-1] == pytest.approx(1 / 3) and rows["3 open-domain"][-3] == 2
