"""storage.compare on batches stored by the real CLI: sides (run id, batch, FACTOR=VALUE), pairing,
and the statistics checked against scipy on the scores read back with sqlite3; several judges,
duplicates (latest wins), parse failures and the errors a user can hit."""

from __future__ import annotations

import statistics

import pytest
from scipy.stats import binomtest, wilcoxon

from core.metrics import bootstrap_ci
from storage.compare import ITEM_FACTORS, paired_comparison, side_for
from storage.db import open_db
from storage.report import ReportError
from tests.storage.stored_batches import (
    MCQ_SIMPLE,
    OPEN_NORMAL,
    SCORES,
    SWEEP,
    batch,
    build_env,
    judge_again,
    new_db,
    rows,
)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """forget / oracle: the same 16 open cases (maya + priya, expression 1, normal context) answered by
    demo:forgetful and demo:oracle; forget-again repeats forget (same cells) and is also judged by an
    LLM judge whose replies never parse (demo:generic); mcq: generic and retrieval on 16 MCQ cases;
    mcq-oracle: the oracle on them; sweep: a depth × repeat sweep. Every batch judged by demo:heuristic."""
    root = tmp_path_factory.mktemp("compare")
    with build_env(root):
        path = new_db(root)
        batch(path, "forget", *OPEN_NORMAL, "--model", "demo:forgetful")
        batch(path, "oracle", *OPEN_NORMAL, "--model", "demo:oracle")
        batch(path, "forget-again", *OPEN_NORMAL, "--model", "demo:forgetful")
        assert judge_again(path, "forget-again", "--judge", "demo:generic", "--kind", "rubric") == 1
        batch(path, "mcq", *MCQ_SIMPLE, "--model", "demo:generic", "--model", "demo:retrieval")
        batch(path, "mcq-oracle", *MCQ_SIMPLE, "--model", "demo:oracle")
        batch(path, "sweep", *SWEEP)
    return path


@pytest.fixture
def conn(db):
    c = open_db(db)
    yield c
    c.close()


def stored(db: str, kind: str, dimension: str, judge: str, where=lambda r: True) -> list[tuple]:
    return [r for r in rows(db, SCORES, kind, dimension, judge) if where(r)]


def by_key(found: list[tuple]) -> dict:
    """key (the item factors, method and temperature) -> (score, (run id, response id)); later rows win."""
    return {(*r[:9], r[15]): (r[10], (r[12], r[13])) for r in found if r[11]}


def paired_by_hand(a: dict, b: dict) -> tuple[list, list[float]]:
    common = sorted(set(a) & set(b), key=repr)  # the documented key order
    return common, [b[k][0] - a[k][0] for k in common]


# -- sides ------------------------------------------------------------------------------------------
def test_a_batch_name_a_run_id_or_prefix_and_factor_values(db, conn):
    s = side_for(conn, "forget")
    assert (s.label, s.filter.labels, s.filter.run_ids, s.factor, s.filter.probes) == (
        "forget",
        ["forget"],
        [],
        None,
        False,
    )

    [(run_id,)] = rows(db, "SELECT id FROM runs WHERE label = 'oracle' ORDER BY id LIMIT 1")
    assert side_for(conn, run_id).filter.run_ids == [run_id]
    assert side_for(conn, run_id[:-3]).filter.run_ids == [run_id]  # a unique prefix
    assert side_for(conn, run_id, ["mcq"]).filter.run_ids == [run_id]

    s = side_for(conn, "model=demo:oracle", ["mcq-oracle"])
    assert (s.factor, s.value, s.filter.labels, s.filter.probes) == ("model", "demo:oracle", ["mcq-oracle"], False)
    s = side_for(conn, " Depth = 0.5 ")
    assert (s.factor, s.value, s.filter.labels) == ("evidence_depth", "0.5", [])


@pytest.mark.parametrize(
    "given,message",
    [
        ("no-such-thing", "neither a batch name nor a run id"),
        ("colour=red", "unknown factor 'colour'"),
        ("method=", "write FACTOR=VALUE"),
        ("=zero-shot", "write FACTOR=VALUE"),
    ],
)
def test_what_is_not_a_side_is_an_error(conn, given, message):
    with pytest.raises(ReportError, match=message):
        side_for(conn, given)


# -- open answers: Wilcoxon -------------------------------------------------------------------------
def test_forgetful_against_oracle_matches_scipy_on_the_stored_scores(db, conn):
    heuristic = stored(db, "rubric", "alignment", "demo:heuristic")
    a = by_key([r for r in heuristic if r[14] == "forget"])
    b = by_key([r for r in heuristic if r[14] == "oracle"])
    common, diffs = paired_by_hand(a, b)
    assert len(common) == len(a) == len(b) == 16

    result = paired_comparison(conn, side_for(conn, "forget"), side_for(conn, "oracle"), "rubric:alignment")
    [(version,)] = rows(db, "SELECT DISTINCT prompt_version FROM judgments WHERE judge_model = 'demo:heuristic'")
    assert result.judge == f"heuristic · demo:heuristic · {version}"
    assert result.key_factors == [*ITEM_FACTORS, "method", "temperature"]  # the model is what differs
    assert result.duplicates == result.failed_a == result.failed_b == 0
    assert any("heuristic demo judge" in n for n in result.notes)

    c = result.comparison
    assert (c.n, c.unpaired_a, c.unpaired_b, c.binary) == (16, 0, 0, False)
    assert c.mean_a == pytest.approx(statistics.mean(a[k][0] for k in common))
    assert c.mean_b == pytest.approx(statistics.mean(b[k][0] for k in common))
    assert c.mean_diff == pytest.approx(statistics.mean(diffs))
    assert c.mean_b > c.mean_a  # the oracle is the upper bound of a forgetful reader
    nonzero = [d for d in diffs if d != 0]
    expected = wilcoxon(nonzero)
    assert c.test == "Wilcoxon signed-rank"
    assert c.statistic == pytest.approx(expected.statistic) and c.p_value == pytest.approx(expected.pvalue)
    plus, minus = rank_sums(nonzero)
    assert c.rank_biserial == pytest.approx((plus - minus) / (plus + minus))
    assert c.effect_dz == pytest.approx(statistics.mean(diffs) / statistics.stdev(diffs))
    assert (c.ci_low, c.ci_high) == pytest.approx(bootstrap_ci(diffs))
    assert len(c.improved) == sum(d > 0 for d in diffs) and len(c.regressed) == sum(d < 0 for d in diffs)
    for p in [*c.improved, *c.regressed, *c.ties]:
        assert (p.a_ref, p.b_ref) == (a[p.key][1], b[p.key][1])  # the two stored answers to open

    default = paired_comparison(conn, side_for(conn, "forget"), side_for(conn, "oracle"))
    assert default.metric == "rubric:alignment" and default.comparison == c


def rank_sums(nonzero: list[float]) -> tuple[float, float]:
    """Signed-rank sums with average ranks for ties, by hand."""
    order = sorted(abs(d) for d in nonzero)
    ranks = [(order.index(abs(d)) + 1 + len(order) - order[::-1].index(abs(d))) / 2 for d in nonzero]
    return sum(r for r, d in zip(ranks, nonzero) if d > 0), sum(r for r, d in zip(ranks, nonzero) if d < 0)


# -- MCQ: McNemar -----------------------------------------------------------------------------------
def test_two_models_of_one_batch_on_mcq_get_mcnemar(db, conn):
    judges = rows(db, "SELECT DISTINCT judge_model FROM judgments WHERE kind = 'choice'")
    [(parser,)] = judges
    choice = stored(db, "choice", "accuracy", parser, lambda r: r[14] == "mcq")
    a_rows = [r for r in choice if r[9] == "demo:generic"]
    b_rows = [r for r in choice if r[9] == "demo:retrieval"]
    a, b = by_key(a_rows), by_key(b_rows)
    common, _ = paired_by_hand(a, b)
    only_a = sum(1 for k in common if a[k][0] == 1 and b[k][0] == 0)
    only_b = sum(1 for k in common if a[k][0] == 0 and b[k][0] == 1)

    side_a = side_for(conn, "model=demo:generic", ["mcq"])
    side_b = side_for(conn, "model=demo:retrieval", ["mcq"])
    result = paired_comparison(conn, side_a, side_b)  # the metric that fits MCQ answers
    assert result.metric == "choice:accuracy"
    assert result.key_factors == [*ITEM_FACTORS, "method", "temperature"]
    assert result.failed_a == sum(1 for r in a_rows if not r[11])
    assert result.failed_b == sum(1 for r in b_rows if not r[11])
    c = result.comparison
    assert c.binary and c.test == "McNemar (exact)"
    assert (c.n, c.unpaired_a, c.unpaired_b) == (len(common), len(set(a) - set(b)), len(set(b) - set(a)))
    assert (c.a_only, c.b_only) == (only_a, only_b)
    assert only_a + only_b > 0  # else the test below would test nothing
    assert c.p_value == pytest.approx(binomtest(only_b, only_a + only_b, 0.5).pvalue)
    assert c.statistic == min(only_a, only_b)
    diffs = [b[k][0] - a[k][0] for k in common]
    assert c.mean_diff == pytest.approx(statistics.mean(diffs))
    assert (c.ci_low, c.ci_high) == pytest.approx(bootstrap_ci(diffs))
    assert len(c.regressed) == only_a and len(c.improved) == only_b


# -- judges, duplicates, failures ------------------------------------------------------------------
def test_several_judges_must_be_chosen_between(db, conn):
    a, b = side_for(conn, "forget-again"), side_for(conn, "oracle")
    with pytest.raises(ReportError, match="several judges scored these answers.*pick one with --judge"):
        paired_comparison(conn, a, b, "rubric:alignment")
    by_heuristic = paired_comparison(conn, a, b, "rubric:alignment", judge="heuristic")
    first = paired_comparison(conn, side_for(conn, "forget"), b, "rubric:alignment")
    assert by_heuristic.comparison.n == 16
    assert by_heuristic.comparison.mean_diff == first.comparison.mean_diff  # the same demo answers again


def test_parse_failures_are_counted_per_side_and_never_paired(db, conn):
    [(failed,)] = rows(
        db,
        "SELECT count(*) FROM judgments j JOIN runs r ON r.id = j.run_id WHERE r.label = 'forget-again' "
        "AND j.judge_model = 'demo:generic' AND j.dimension = 'alignment' AND NOT j.parse_ok",
    )
    assert failed == 16
    result = paired_comparison(
        conn, side_for(conn, "forget-again"), side_for(conn, "oracle"), "rubric:alignment", judge="demo:generic"
    )
    assert result.judge.startswith("llm · demo:generic")
    assert (result.failed_a, result.failed_b) == (failed, 0)
    assert result.comparison.n == 0 and result.comparison.p_value is None


def test_duplicates_count_once_and_the_latest_answer_wins(db, conn):
    """Without --batch, model=demo:forgetful holds forget AND forget-again (the same 16 cells) and the
    sweep's forgetful cells; model=demo:oracle holds oracle and the sweep's oracle cells."""
    heuristic = stored(db, "rubric", "alignment", "demo:heuristic")
    a = by_key([r for r in heuristic if r[9] == "demo:forgetful"])  # in judgment order: later rows win
    b = by_key([r for r in heuristic if r[9] == "demo:oracle"])
    common, diffs = paired_by_hand(a, b)
    again = {run for (run,) in rows(db, "SELECT id FROM runs WHERE label = 'forget-again'")}

    result = paired_comparison(
        conn,
        side_for(conn, "model=demo:forgetful"),
        side_for(conn, "model=demo:oracle"),
        "rubric:alignment",
        "heuristic",
    )
    assert result.duplicates == 16
    assert "16 items were answered more than once on one side: the latest answer counts" in result.notes
    c = result.comparison
    assert c.n == len(common) == 16 + 24  # the open cases + the sweep's 2 × 2 × 3 × 2 cells
    assert c.mean_diff == pytest.approx(statistics.mean(diffs))
    normal = [p for p in [*c.improved, *c.regressed, *c.ties] if p.key[5] is None]
    assert len(normal) == 16 and all(p.a_ref[0] in again for p in normal)


def test_a_depth_sweep_compared_inside_its_batch(db, conn):
    heuristic = stored(db, "rubric", "alignment", "demo:heuristic", lambda r: r[14] == "sweep")

    def side(depth: float) -> dict:
        return {r[:5] + r[6:10]: r[10] for r in heuristic if r[5] == depth}

    a, b = side(0.0), side(1.0)
    common = sorted(set(a) & set(b), key=repr)
    result = paired_comparison(
        conn,
        side_for(conn, "evidence_depth=0", ["sweep"]),
        side_for(conn, "depth=1", ["sweep"]),
        "rubric:alignment",
    )
    assert "evidence_depth" not in result.key_factors and {"model", "repeat", "context"} <= set(result.key_factors)
    assert result.comparison.n == len(common) == 2 * 2 * 2 * 2  # queries × contexts × models × repeats
    assert result.comparison.mean_a == pytest.approx(statistics.mean(a[k] for k in common))
    assert result.comparison.mean_b == pytest.approx(statistics.mean(b[k] for k in common))


# -- what cannot be compared -----------------------------------------------------------------------
def test_sides_that_cannot_be_paired_are_refused(conn):
    with pytest.raises(ReportError, match="differ in model but hold several"):
        paired_comparison(conn, side_for(conn, "mcq"), side_for(conn, "mcq-oracle"), "accuracy")
    with pytest.raises(ReportError, match="ONE factor"):
        paired_comparison(conn, side_for(conn, "model=demo:generic", "mcq"), side_for(conn, "mcq-oracle"), "accuracy")
    with pytest.raises(ReportError, match="ONE factor"):
        paired_comparison(conn, side_for(conn, "model=demo:generic"), side_for(conn, "method=zero-shot"), "accuracy")
    with pytest.raises(ReportError, match="one dimension at a time"):
        paired_comparison(conn, side_for(conn, "forget"), side_for(conn, "oracle"), "rubric")
    with pytest.raises(ReportError, match="no choice:accuracy judgments for 'forget'"):
        paired_comparison(conn, side_for(conn, "forget"), side_for(conn, "oracle"), "accuracy")


def test_a_run_against_a_batch_gets_the_metric_that_fits_them(db, conn):
    [(run_id,)] = rows(
        db,
        "SELECT r.id FROM runs r JOIN responses p ON p.run_id = r.id WHERE r.label = 'mcq' "
        "AND p.model = 'demo:generic' AND r.user_id = 'maya' AND r.query_id = 'p1-mcq'",
    )
    a, b = side_for(conn, run_id), side_for(conn, "mcq-oracle")
    assert paired_comparison(conn, a, b, "accuracy").comparison.n == 1  # with the metric named, it pairs
    result = paired_comparison(conn, a, b)
    assert result.metric == "choice:accuracy"


def test_numeric_factor_values_match_as_numbers(conn):
    side = side_for(conn, "evidence_depth=1.0")
    assert side.factor == "evidence_depth" and side.value == "1.0"
    from storage.compare import _is

    assert _is(1.0, "1") and _is(1.0, "1.0") and _is(0.8, "0.80") and not _is(0.5, "half")
