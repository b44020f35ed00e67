"""`prefscope report`: aggregates match hand-computed numbers; sources never mix."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from core.benchmark import report_section
from core.metrics import bootstrap_ci
from storage.db import open_db
from storage.export import RunFilter
from storage.report import (
    ReportError,
    agreement_table,
    score_table,
    section_table,
)
from tests.storage.export_fixtures import Writer, db_with_tiny, judgment
from tui.cli import main

A, B = "openai:gpt-x", "demo:generic"


@pytest.fixture
def db_path(tmp_path):
    """Fixture, by hand (rubric:alignment, LLM judge ``openai:judge`` unless said otherwise):

    ========  ====  =======  ========  =====================  ==================================
    model     expr  context  method    LLM scores             other judgments
    ========  ====  =======  ========  =====================  ==================================
    gpt-x     1     simple   zero-shot 5, 4, 3 (3 runs)       heuristic 1, 1, 1 on the same runs
    gpt-x     2     normal   reminder  2 and a parse failure
    generic   1     simple   zero-shot 1, 1                   (demo model)
    ========  ====  =======  ========  =====================  ==================================

    Expected by expression_type × model, LLM rows: (1, gpt-x) n=3 mean 4.0; (2, gpt-x) n=1
    failed=1 mean 2.0; (1, generic [demo]) n=2 mean 1.0. Heuristic row (1, gpt-x) n=3 mean 1.0.
    Pooling heuristic with LLM would have given (5+4+3+1+1+1)/6 = 2.5 — must never appear.
    By context: simple → LLM n=5, mean (5+4+3+1+1)/5 = 2.8 (demo: mixed); normal → n=1 mean 2.0.
    """
    path = db_with_tiny(tmp_path / "r.db")
    w = Writer(path)
    for s in (5.0, 4.0, 3.0):
        w.run(
            model=A,
            expression=1,
            judgments=[judgment(score=s), judgment(score=1.0, judge="demo:heuristic", heuristic=True)],
        )
    w.run(model=A, expression=2, context="normal", method="reminder", judgments=[judgment(score=2.0)])
    w.run(model=A, expression=2, context="normal", method="reminder", judgments=[judgment(parse_ok=False)])
    for _ in range(2):
        w.run(model=B, expression=1, judgments=[judgment(score=1.0)])
    w.close()
    return path


def _rows(table) -> dict:
    return {tuple(r[: table.columns.index("n")]): dict(zip(table.columns, r)) for r in table.rows}


def test_score_by_expression_and_model_matches_hand_computation(db_path):
    db = open_db(db_path)
    t = score_table(db, "rubric:alignment", ["expression_type", "model"])
    db.close()
    rows = _rows(t)
    llm = ("llm", "openai:judge", "v1")
    assert rows[(1, A, *llm, "real")]["n"] == 3
    assert rows[(1, A, *llm, "real")]["mean"] == pytest.approx(4.0)
    assert rows[(2, A, *llm, "real")]["n"] == 1 and rows[(2, A, *llm, "real")]["failed"] == 1
    assert rows[(2, A, *llm, "real")]["mean"] == pytest.approx(2.0)
    assert rows[(1, f"{B} [demo]", *llm, "demo")]["mean"] == pytest.approx(1.0)
    heur = rows[(1, A, "heuristic", "demo:heuristic", "v1", "real")]
    assert heur["n"] == 3 and heur["mean"] == pytest.approx(1.0)
    assert len(rows) == 4
    assert all(r["mean"] != pytest.approx(2.5) for r in rows.values())
    lo, hi = bootstrap_ci([5.0, 4.0, 3.0])
    assert rows[(1, A, *llm, "real")]["ci_low"] == pytest.approx(lo)
    assert rows[(1, A, *llm, "real")]["ci_high"] == pytest.approx(hi)
    assert 3.0 <= lo <= 4.0 <= hi <= 5.0
    assert rows[(2, A, *llm, "real")]["ci_low"] is None  # one score: no interval
    assert t.scale == (1.0, 5.0)


def test_score_by_context_and_by_method(db_path):
    db = open_db(db_path)
    by_ctx = _rows(score_table(db, "rubric:alignment", ["context"], sources=["llm"]))
    by_method = _rows(score_table(db, "rubric:alignment", ["method"], sources=["llm"]))
    db.close()
    assert by_ctx[("simple", "llm", "openai:judge", "v1", "mixed")]["mean"] == pytest.approx(2.8)
    assert by_ctx[("simple", "llm", "openai:judge", "v1", "mixed")]["n"] == 5
    assert by_ctx[("normal", "llm", "openai:judge", "v1", "real")]["mean"] == pytest.approx(2.0)
    assert set(k[0] for k in by_method) == {"zero-shot", "reminder"}
    assert all(k[1] == "llm" for k in by_ctx)  # --source llm dropped the heuristic row


def test_accuracy_and_instance_type_and_origin_factors(tmp_path):
    """Accuracy: q-mcq answered right twice, wrong once → 2/3. CUPID P/R/F1 by instance type:
    consistent instances: inferred coverage [1, 0.5] & gold [1, 0, 0], and [1] & [1] →
    P = (1.5 + 1) / 3 = 0.8333, R = (1 + 1) / 4 = 0.5, F1 = 2PR/(P+R) = 0.625.
    contrastive: inferred [0] & gold [0, 1] → P 0, R 0.5, F1 0."""
    path = db_with_tiny(tmp_path / "a.db")
    w = Writer(path)
    for s in (1.0, 1.0, 0.0):
        w.run(
            query="q-mcq",
            judgments=[judgment(kind="choice", dimension="accuracy", score=s, judge="parser:choice", scale=(0.0, 1.0))],
        )
    for query, inf, gold in (("q-cons", [1, 0.5], [1, 0, 0]), ("q-cons", [1], [1]), ("q-contr", [0], [0, 1])):
        extra = {"inferred_coverage": inf, "gold_coverage": gold}
        w.run(
            query=query,
            method="cupid-infer",
            judgments=[judgment(kind="matching", dimension="precision", score=0.0, extra=extra, scale=(0, 1))],
        )
    w.close()
    db = open_db(path)
    acc = score_table(db, "accuracy", ["query_kind"])
    cupid = _rows(section_table(db, report_section("cupid-matching"), ["instance_type"]))
    origin = _rows(score_table(db, "matching:precision", ["preference_origin"]))
    db.close()
    assert acc.rows[0][0] == "mcq" and acc.rows[0][acc.columns.index("mean")] == pytest.approx(2 / 3)
    cons = cupid[("consistent", "openai:judge", "v1", "real")]
    assert cons["n"] == 2
    assert (cons["precision"], cons["recall"], cons["f1"]) == pytest.approx((2.5 / 3, 0.5, 0.625))
    contr = cupid[("contrastive", "openai:judge", "v1", "real")]
    assert (contr["precision"], contr["recall"], contr["f1"]) == pytest.approx((0.0, 0.5, 0.0))
    assert {k[0] for k in origin} == {"original", "generalized"}


def test_interpref_pass_rate_and_bradley_terry(tmp_path):
    """Pass: orders [1,1,1,1] pass, [1,0,1,1] fail, one undecided → rate 1/2, disagreement 1/2.
    Wins: X beat Y twice and lost once → W[X,Y] = 2/3; BT: xi_X − xi_Y = ln(2), centred ±ln(2)/2."""
    path = db_with_tiny(tmp_path / "p.db")
    w = Writer(path)
    pw = dict(kind="pairwise", scale=(0.0, 1.0))
    w.run(
        judgments=[
            judgment(dimension="pass", score=1.0, extra={"orders": [1, 1, 1, 1]}, **pw),
            judgment(dimension="pass", score=0.0, extra={"orders": [1, 0, 1, 1]}, **pw),
            judgment(dimension="pass", parse_ok=False, extra={"orders": [1, None, 1, 1]}, **pw),
        ]
    )
    for s in (1.0, 1.0, 0.0):
        w.run(judgments=[judgment(dimension="win", score=s, extra={"model_a": "x:m", "model_b": "y:m"}, **pw)])
    w.close()
    db = open_db(path)
    p = section_table(db, report_section("interpref-pass"), ["model"])
    bt = section_table(db, report_section("interpref-bradley-terry"))
    db.close()
    row = dict(zip(p.columns, p.rows[0]))
    assert (row["n"], row["undecided"], row["pass_rate"], row["order_disagreement"]) == (2, 1, 0.5, 0.5)
    coef = {r[0]: r[3] for r in bt.rows}
    assert coef["x:m"] == pytest.approx(math.log(2) / 2, abs=1e-6)
    assert coef["y:m"] == pytest.approx(-math.log(2) / 2, abs=1e-6)


def test_unknown_factor_is_a_clear_error(db_path):
    db = open_db(db_path)
    with pytest.raises(ReportError, match="unknown factor 'colour'"):
        score_table(db, "rubric:alignment", ["colour"])
    empty = score_table(db, "rubric:alignment", ["model"], RunFilter(users=["nobody"]))
    db.close()
    assert empty.rows == [] and "no rubric:alignment judgments" in empty.notes[0]


def test_cli_report_renders_and_writes_csv_and_png(db_path, tmp_path):
    csv_path, png_path = tmp_path / "r.csv", tmp_path / "r.png"
    result = CliRunner().invoke(
        main,
        [
            "--db",
            str(db_path),
            "report",
            "--by",
            "expression_type,model",
            "--metric",
            "rubric:alignment",
            "--csv",
            str(csv_path),
            "--png",
            str(png_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "[demo]" in result.output and "heuristic" in result.output and "█" in result.output
    import pandas as pd

    df = pd.read_csv(csv_path)
    assert len(df) == 4 and set(df["source"]) == {"llm", "heuristic"}
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def human_db(tmp_path):
    """Four responses of gpt-x scored by the LLM judge 5, 4, 3, 2 and by an annotator 5, 4, 4, 2;
    the heuristic judge says 1 on the first two; one response only the LLM judge scored.

    Human vs LLM (hand-computed): po = 3/4; marginals LLM {5,4,3,2} ¼ each, human 5 ¼, 4 ½, 2 ¼
    → pe = ¼·¼ + ¼·½ + 0 + ¼·¼ = ¼; kappa = (¾ − ¼)/(1 − ¼) = 2/3. Ranks LLM [4,3,2,1], human
    [4,2.5,2.5,1]: Σdxdy = 4.5, Σdx² = 5, Σdy² = 4.5 → rho = 4.5/√22.5. Human vs heuristic: 2
    items, human 5 and 4, heuristic 1 and 1 → po = pe = 0, kappa 0; the heuristic side is constant
    → rho undefined (None)."""
    path = db_with_tiny(tmp_path / "h.db")
    w = Writer(path)
    for k, (llm, human) in enumerate(((5.0, 5.0), (4.0, 4.0), (3.0, 4.0), (2.0, 2.0))):
        js = [judgment(score=llm), judgment(score=human, judge="human:ann", human=True)]
        if k < 2:
            js.append(judgment(score=1.0, judge="demo:heuristic", heuristic=True))
        w.run(model=A, judgments=js)
    w.run(model=A, judgments=[judgment(score=3.0)])
    w.close()
    return path


def test_human_vs_judge_agreement_matches_hand_computation(human_db):
    db = open_db(human_db)
    t = agreement_table(db, "rubric:alignment", ["model"])
    db.close()
    rows = {(r["source"], r["judge"]): r for r in t.as_dicts()}
    llm = rows[("llm", "openai:judge")]
    assert (llm["model"], llm["human"], llm["n"]) == (A, "human:ann", 4)
    assert llm["kappa"] == pytest.approx(2 / 3)
    assert llm["spearman"] == pytest.approx(4.5 / math.sqrt(22.5))
    heur = rows[("heuristic", "demo:heuristic")]
    assert heur["n"] == 2 and heur["kappa"] == 0.0 and heur["spearman"] is None
    assert len(rows) == 2


def test_cli_report_shows_agreement_only_where_human_scores_exist(human_db, db_path):
    def report(path):
        result = CliRunner().invoke(main, ["--db", str(path), "report", "--metric", "rubric:alignment", "--no-chart"])
        assert result.exit_code == 0, result.output
        return result.output

    assert "human vs judge agreement" in report(human_db) and "0.667" in report(human_db)
    with_humans_absent = report(db_path)
    assert "human vs judge agreement" not in with_humans_absent


def test_bradley_terry_counts_llm_comparisons_only(tmp_path):
    """A heuristic win judgment is neither a comparison nor a win (the old report counted it)."""
    path = db_with_tiny(tmp_path / "b.db")
    w = Writer(path)
    pw = dict(kind="pairwise", dimension="win", extra={"model_a": "x:m", "model_b": "y:m"}, scale=(0.0, 1.0))
    for s in (1.0, 0.0):
        w.run(judgments=[judgment(score=s, **pw)])
    w.run(judgments=[judgment(score=1.0, judge="demo:heuristic", heuristic=True, **pw)])
    w.close()
    db = open_db(path)
    rows = {r[0]: r for r in section_table(db, report_section("interpref-bradley-terry")).rows}
    db.close()
    assert rows["x:m"][1] == 2 and rows["x:m"][2] == pytest.approx(0.5)
