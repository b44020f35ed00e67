"""storage.report for position sweeps and repeats, on batches stored by the real CLI: the factors
evidence_depth / repeat / temperature, heatmap panels, the repeats and judge-retest tables, and
load_judgments' every_judgment / item_columns; every number recomputed from the rows read with sqlite3."""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict

import pytest

from core.metrics import wilson_ci
from storage.db import open_db
from storage.export import RunFilter
from storage.report import (
    ReportError,
    factor_names,
    has_repeats,
    heatmap_panels,
    load_judgments,
    repeats_table,
    retest_table,
)
from tests.storage.stored_batches import OPEN_NORMAL, SWEEP, batch, build_env, judge_again, new_db, rows

SWEEP_ONLY = RunFilter(labels=["sweep"])


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """sweep: maya p1/p2-open × simple/normal × depths 0/0.5/1 × forgetful/oracle × 2 repeats at T 0.8;
    forget: no sweep, no repeats; retest: two answers judged once by the batch, then 3 times more."""
    root = tmp_path_factory.mktemp("report-sweeps")
    with build_env(root):
        path = new_db(root)
        batch(path, "sweep", *SWEEP)
        batch(path, "forget", *OPEN_NORMAL, "--model", "demo:forgetful")
        retest = ("--user", "maya", "--query", "p1-open", "--query", "p2-open", "--expression", "1")
        batch(path, "retest", *retest, "--context", "simple", "--model", "demo:generic")
        assert judge_again(path, "retest", "--judge", "demo:heuristic", "--judge-repeats", "3") == 0
    return path


@pytest.fixture
def conn(db):
    c = open_db(db)
    yield c
    c.close()


#: The latest heuristic alignment score of every final answer of the sweep, with its cell.
SWEPT = """
    SELECT r.query_id, r.context, json_extract(r.spec, '$.evidence_depth'), json_extract(r.spec, '$.repeat'),
           p.model, json_extract(p.params, '$.temperature'), j.score, p.id
    FROM judgments j JOIN responses p ON p.id = j.response_id JOIN runs r ON r.id = j.run_id
    WHERE r.label = ? AND j.kind = 'rubric' AND j.dimension = 'alignment'
      AND j.id = (SELECT max(id) FROM judgments WHERE response_id = j.response_id AND dimension = 'alignment')"""


def test_the_new_factors_read_the_spec_and_the_params(db, conn):
    assert factor_names(["depth", "repeat", "temperature"]) == ["evidence_depth", "repeat", "temperature"]
    got = load_judgments(conn, "rubric", "alignment", ["evidence_depth", "repeat", "temperature", "model"], SWEEP_ONLY)
    assert len(got) == 48
    assert {j.factors[:3] for j in got} == set(itertools.product([0.0, 0.5, 1.0], [0, 1], [0.8]))
    by_response = {r[7]: (r[2], r[3] or 0, r[5], r[4]) for r in rows(db, SWEPT, "sweep")}
    assert {j.response_id: j.factors for j in got} == by_response

    plain = load_judgments(
        conn, "rubric", "alignment", ["evidence_depth", "repeat", "temperature"], RunFilter(labels=["forget"])
    )
    assert len(plain) == 16 and {j.factors for j in plain} == {(None, 0, None)}  # no depth, repeat 0, default T


def test_item_columns_follow_the_factors(db, conn):
    got = load_judgments(conn, "rubric", "alignment", ["model"], SWEEP_ONLY, item_columns=["r.id", "p.id"])
    assert all(len(j.factors) == 3 and j.factors[2] == j.response_id for j in got)
    run_of = dict(rows(db, "SELECT p.id, p.run_id FROM responses p"))
    assert all(run_of[j.response_id] == j.factors[1] for j in got)
    only_items = load_judgments(conn, "rubric", "alignment", [], SWEEP_ONLY, item_columns=["p.model"])
    assert {j.factors for j in only_items} == {("demo:forgetful",), ("demo:oracle",)}


def test_every_judgment_keeps_the_rejudgings(db, conn):
    f = RunFilter(labels=["retest"])
    latest = load_judgments(conn, "rubric", "alignment", [], f)
    every = load_judgments(conn, "rubric", "alignment", [], f, every_judgment=True)
    [(stored,)] = rows(
        db,
        "SELECT count(*) FROM judgments j JOIN runs r ON r.id = j.run_id WHERE r.label = 'retest' AND j.dimension = 'alignment'",
    )
    assert len(latest) == 2 and len(every) == stored == 2 * 4  # the batch's judgment + 3 more each
    assert {j.response_id for j in every} == {j.response_id for j in latest}


# -- heatmap --------------------------------------------------------------------------------------
def test_heatmap_panels_are_the_stored_means(db, conn):
    scores = defaultdict(list)
    for _q, ctx, depth, _r, _m, _t, score, _id in rows(db, SWEPT, "sweep"):
        scores[(depth, ctx)].append(score)
    [panel] = heatmap_panels(conn, "rubric:alignment", ["evidence_depth", "context"], SWEEP_ONLY)
    assert panel.panel.startswith("heuristic · demo:heuristic · ")
    assert panel.rows == [0.0, 0.5, 1.0] and panel.cols == ["simple", "normal"]
    for i, depth in enumerate(panel.rows):
        for k, ctx in enumerate(panel.cols):
            assert panel.counts[i][k] == len(scores[(depth, ctx)]) == 8  # 2 queries × 2 models × 2 repeats
            assert panel.means[i][k] == pytest.approx(statistics.mean(scores[(depth, ctx)]))
    assert panel.scale == (1.0, 5.0)


def test_further_factors_and_dimensions_make_more_panels(conn):
    per_model = heatmap_panels(conn, "rubric:alignment", ["depth", "context", "model"], SWEEP_ONLY)
    assert [p.panel.rsplit(" · ", 1)[1] for p in per_model] == ["model=demo:forgetful", "model=demo:oracle"]
    assert all(sum(map(sum, p.counts)) == 24 for p in per_model)
    per_dimension = heatmap_panels(conn, "rubric", ["depth", "context"], SWEEP_ONLY)  # no dimension: split by it
    assert sorted(p.panel.rsplit("=", 1)[1] for p in per_dimension) == ["alignment", "awareness", "quality"]
    with pytest.raises(ReportError, match="needs two factors"):
        heatmap_panels(conn, "rubric:alignment", ["evidence_depth"], SWEEP_ONLY)


# -- repeats ----------------------------------------------------------------------------------------
def test_the_repeats_table_is_the_per_item_spread_of_the_stored_scores(db, conn):
    items = defaultdict(list)  # (model, query, context, depth) -> scores of its repeats
    for q, ctx, depth, _r, model, _t, score, _id in rows(db, SWEPT, "sweep"):
        items[(model, q, ctx, depth)].append(score)
    table = repeats_table(conn, "rubric:alignment", ["model"], SWEEP_ONLY)
    got = {r["model"]: r for r in table.as_dicts()}
    assert set(got) == {"demo:forgetful", "demo:oracle"}
    for model, r in got.items():
        mine = [s for k, s in items.items() if k[0] == model]
        assert len(mine) == 12 and all(len(s) == 2 for s in mine)
        flipped = sum(1 for s in mine if len({x >= 4 for x in s}) > 1)
        assert (r["items"], r["repeats"], r["failed"]) == (12, 2, 0)
        assert r["mean"] == pytest.approx(statistics.mean(x for s in mine for x in s))
        assert r["item_variance"] == pytest.approx(statistics.mean(statistics.variance(s) for s in mine))
        assert r["item_sd"] == pytest.approx(statistics.mean(statistics.stdev(s) for s in mine))
        assert r["verdict"] == "passes 4"
        assert r["flip_rate"] == pytest.approx(flipped / 12)
        assert (r["flip_ci_low"], r["flip_ci_high"]) == pytest.approx(wilson_ci(flipped, 12))


def test_without_repeats_there_are_no_items(conn):
    [r] = repeats_table(conn, "rubric:alignment", ["model"], RunFilter(labels=["forget"])).as_dicts()
    assert r["items"] == 0 and r["flip_rate"] is None


def test_has_repeats(conn):
    assert has_repeats(conn, SWEEP_ONLY) and has_repeats(conn) and has_repeats(conn, RunFilter())
    assert not has_repeats(conn, RunFilter(labels=["forget"]))
    assert not has_repeats(conn, RunFilter(labels=["retest"]))


# -- judge test–retest ------------------------------------------------------------------------------
def test_the_retest_table_counts_every_judging(db, conn):
    per_response = defaultdict(list)
    for rid, score in rows(
        db,
        "SELECT j.response_id, j.score FROM judgments j JOIN runs r ON r.id = j.run_id "
        "WHERE r.label = 'retest' AND j.kind = 'rubric' AND j.dimension = 'alignment' AND j.parse_ok",
    ):
        per_response[rid].append(score)
    [r] = retest_table(conn, "rubric:alignment", RunFilter(labels=["retest"])).as_dicts()
    assert (r["source"], r["judge"], r["dimension"]) == ("heuristic", "demo:heuristic", "alignment")
    assert (r["answers"], r["judgings"], r["failed"]) == (2, 4, 0)
    assert r["exact"] == sum(len(set(s)) == 1 for s in per_response.values()) / 2
    assert r["answer_sd"] == pytest.approx(statistics.mean(statistics.pstdev(s) for s in per_response.values()))
    assert r["exact"] == 1.0 and r["flip_rate"] == 0  # a lexical heuristic judges the same text the same way
    # Judged once only: no answer to retest.
    [once] = retest_table(conn, "rubric:alignment", RunFilter(labels=["forget"])).as_dicts()
    assert (once["answers"], once["judgings"], once["exact"], once["flip_rate"]) == (0, None, None, None)
