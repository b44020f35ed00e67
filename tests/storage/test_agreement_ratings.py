"""Who rated what (storage.agreement): every rater's latest score per item, read from stored
judgments, labels and relevance decisions of a real demo batch, and the agreement computed on them.

The batch: maya, open queries, expressions 1 and 2, normal context, three demo models judged by
the heuristic (48 answers), plus an attribute extraction verified by `demo:extractor`."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from core.analysis.relevance import Decision
from storage.agreement import agreement, load_ratings
from storage.analyses import (
    save_human_judgment,
    save_human_relevance,
    save_judgments,
    save_relevance,
    set_operator_verdict,
)
from storage.annotation_labels import Label, save_label
from storage.annotation_queues import QueueSpec, create_queue, load_item
from tests.cli_runner import cli
from tests.storage.annotation_fixtures import (  # noqa: F401 (fixtures)
    B1_ONLY,
    building_b1,
    fixture_db,
    fixture_path,
    heuristic_scores,
    pair_judgment,
    runs_of,
    save_human_pair_label,
)
from tests.storage.export_fixtures import judgment
from tests.storage.stored_batches import rows


def dims_of(db, **kw) -> dict:
    return {d.dimension: d for d in load_ratings(db, B1_ONLY, **kw)}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    with building_b1(tmp_path_factory, "agreement-ratings") as path:
        cli(path, "attributes", "maya", "--model", "demo:extractor", "--verify-with", "demo:extractor", "--no-dedup")
    return path


def test_the_heuristics_scores_are_one_rater_per_dimension(db, path):
    dims = dims_of(db)
    assert {"rubric:alignment", "rubric:awareness", "rubric:quality"} <= set(dims)
    d = dims["rubric:alignment"]
    assert (d.level, d.scale, d.raters) == ("ordinal", (1.0, 5.0), ["demo:heuristic"])
    assert d.ratings["demo:heuristic"] == heuristic_scores(path)
    assert len(d.ratings["demo:heuristic"]) == 48


def test_a_parse_failure_is_an_abstention_not_an_item_in_n(db, path):
    h = heuristic_scores(path)
    runs = runs_of(path)
    ids = sorted(h)
    failed = ids[0]
    second = {rid: (h[rid] % 5) + 1 if i % 8 == 1 else h[rid] for i, rid in enumerate(ids)}
    for rid in ids:
        j = judgment(score=second[rid], judge="test:second", parse_ok=rid != failed)
        save_judgments(db, runs[rid], [(rid, j)])
    d = dims_of(db)["rubric:alignment"]
    assert d.ratings["test:second"][failed] is None
    assert len(d.ratings["test:second"]) == 48

    [a] = [x for x in agreement(db, B1_ONLY) if x.dimension == "rubric:alignment"]
    [p] = a.pairs
    assert (p.rater_a, p.rater_b, p.n, p.abstained_a, p.abstained_b) == ("demo:heuristic", "test:second", 47, 0, 1)
    scored = [rid for rid in ids if rid != failed]
    xs, ys = [h[r] for r in scored], [second[r] for r in scored]
    assert p.exact == pytest.approx(np.mean([x == y for x, y in zip(xs, ys)]))
    assert p.exact == pytest.approx((47 - 6) / 47)
    assert p.cohen_kappa == pytest.approx(cohen_kappa_score(xs, ys))
    assert p.weighted_kappa_quadratic == pytest.approx(
        cohen_kappa_score(xs, ys, weights="quadratic", labels=[1, 2, 3, 4, 5])
    )
    assert a.items == 48 and a.raters == ("demo:heuristic", "test:second")


def test_the_latest_judgment_wins_even_a_failed_one(db, path):
    rid = sorted(heuristic_scores(path))[3]
    run = runs_of(path)[rid]
    save_judgments(db, run, [(rid, judgment(score=1.0, judge="test:second"))])
    save_judgments(db, run, [(rid, judgment(score=5.0, judge="test:second"))])
    assert dims_of(db)["rubric:alignment"].ratings["test:second"] == {rid: 5.0}
    save_judgments(db, run, [(rid, judgment(score=None, judge="test:second", parse_ok=False))])
    assert dims_of(db)["rubric:alignment"].ratings["test:second"] == {rid: None}
    save_human_judgment(db, run, rid, kind="rubric", dimension="alignment", score=2, annotator="alice", scale=(1, 5))
    save_human_judgment(db, run, rid, kind="rubric", dimension="alignment", score=4, annotator="alice", scale=(1, 5))
    ratings = dims_of(db)["rubric:alignment"].ratings
    assert ratings["alice"] == {rid: 4.0}  # the annotator's name, without "human:"
    assert "human:alice" not in ratings


def same_prompt(path: str) -> list[list[str]]:
    """The three answers of each prompt, sorted by id."""
    groups: dict[str, list[str]] = {}
    for rid, key in rows(
        path,
        "SELECT p.id, r.query_id || '/' || r.expression_type FROM responses p JOIN runs r ON r.id = p.run_id "
        "WHERE r.label = 'b1'",
    ):
        groups.setdefault(key, []).append(rid)
    return [sorted(g) for g in groups.values()]


def test_a_human_pair_label_is_read_as_the_outcome_of_the_pairs_smaller_id(db, path):
    runs = runs_of(path)
    small, big, _ = same_prompt(path)[0]
    # stored with the bigger id as answer 1: answer 1 wins, so the smaller one loses
    save_human_pair_label(db, runs[big], big, small, 1.0)
    d = dims_of(db)["pairwise:preferred"]
    assert (d.level, d.scale) == ("ordinal", (0.0, 1.0))
    assert d.ratings["alice"] == {(small, big): 0.0}
    # the latest label counts, whichever orientation it was stored in
    save_human_pair_label(db, runs[small], small, big, 0.5)
    assert dims_of(db)["pairwise:preferred"].ratings["alice"] == {(small, big): 0.5}
    save_human_pair_label(db, runs[big], big, small, 0.0)
    assert dims_of(db)["pairwise:preferred"].ratings["alice"] == {(small, big): 1.0}


def test_a_pair_queue_label_is_normalised_to_the_smaller_id(db):
    create_queue(db, "P", QueueSpec(kind="pair", batches=["b1"], seed=3))
    labelled = {}
    for position in range(48):
        item = load_item(db, "P", position)
        save_label(db, item, "bob", Label(choice="A"), blind=True)  # bob always picks the answer shown first
        shown_first = item.other_response_id if item.swapped else item.response_id
        key = tuple(sorted((item.response_id, item.other_response_id)))
        labelled[key] = 1.0 if shown_first == key[0] else 0.0
    assert dims_of(db)["pairwise:preferred"].ratings["bob"] == labelled
    assert set(labelled.values()) == {0.0, 1.0}


def pair_votes(db, runs, judge: str, first: str, second: str, votes) -> None:
    """A judge's verdicts in both orders, stored under ``first`` as answer 1 (as audit-judge stores them)."""
    save_judgments(
        db, runs[first], [(first, pair_judgment(judge, v, second, order)) for order, v in enumerate(votes, 1)]
    )


def test_a_judges_two_order_votes_become_one_rating_of_the_smaller_id(db, path):
    runs = runs_of(path)
    groups = same_prompt(path)
    (a1, b1, _), (a2, b2, _), (a3, b3, _), (a4, b4, _) = groups[:4]
    pair_votes(db, runs, "test:pj", b1, a1, (1.0, 1.0))  # bigger id wins in both orders: the smaller loses
    pair_votes(db, runs, "test:pj", b2, a2, (1.0, 0.0))  # the orders disagree: a tie
    pair_votes(db, runs, "test:pj", b3, a3, (0.0, None))  # one order unread: abstained
    pair_votes(db, runs, "test:pj", a4, b4, (1.0, 1.0))  # judged again: the latest two votes count
    pair_votes(db, runs, "test:pj", a4, b4, (0.0, 0.0))
    assert dims_of(db)["pairwise:preferred"].ratings["test:pj"] == {
        (a1, b1): 0.0,
        (a2, b2): 0.5,
        (a3, b3): None,
        (a4, b4): 0.0,
    }
    # and against a human who labelled the same pairs
    for (a, b), score in (((a1, b1), 0.0), ((a2, b2), 0.5), ((a3, b3), 1.0), ((a4, b4), 1.0)):
        save_human_pair_label(db, runs[a], a, b, score)
    [p] = next(x for x in agreement(db, B1_ONLY) if x.dimension == "pairwise:preferred").pairs
    assert (p.rater_a, p.rater_b, p.n, p.abstained_a, p.abstained_b) == ("alice", "test:pj", 3, 0, 1)
    assert p.exact == pytest.approx(2 / 3)


def test_relevance_raters_are_the_deciders_and_the_annotators(db, path):
    run, query = rows(path, "SELECT id, query_id FROM runs WHERE label = 'b1' ORDER BY created_at, id LIMIT 1")[0]
    turns = ("maya-p1-e1", "maya-life-01", "maya-p2-e1")
    save_relevance(
        db,
        run,
        query,
        [Decision("turn", t, "gold", t == "maya-p1-e1") for t in turns]
        + [Decision("turn", t, "bm25", t != "maya-p2-e1", score=1.0) for t in turns]
        + [Decision("turn", t, "embedding", t == "maya-p1-e1", model="bge-small") for t in turns]
        + [
            Decision(
                "turn",
                t,
                "llm",
                None if t == "maya-life-01" else True,
                model="demo:extractor",
                parse_ok=t != "maya-life-01",
            )
            for t in turns
        ],
    )
    save_human_relevance(db, run, query, "turn", "maya-p1-e1", True, annotator="alice")
    create_queue(db, "R", QueueSpec(kind="relevance", run_ids=[run]))
    for position in range(3):
        item = load_item(db, "R", position)
        save_label(db, item, "bob", Label(relevant=item.target_id != "maya-life-01"), blind=True)
    d = dims_of(db)["relevance"]
    assert (d.level, d.scale) == ("nominal", (0.0, 1.0))
    key = {t: (run, "turn", t) for t in turns}
    assert d.ratings == {
        "bm25": {key["maya-p1-e1"]: 1.0, key["maya-life-01"]: 1.0, key["maya-p2-e1"]: 0.0},
        "embedding:bge-small": {key["maya-p1-e1"]: 1.0, key["maya-life-01"]: 0.0, key["maya-p2-e1"]: 0.0},
        "demo:extractor": {key["maya-p1-e1"]: 1.0, key["maya-life-01"]: None, key["maya-p2-e1"]: 1.0},
        "alice": {key["maya-p1-e1"]: 1.0},
        "bob": {key["maya-p1-e1"]: 1.0, key["maya-life-01"]: 0.0, key["maya-p2-e1"]: 1.0},
    }  # gold is the reference, not a rater
    rel = next(x for x in agreement(db, B1_ONLY) if x.dimension == "relevance")
    pairs = {(p.rater_a, p.rater_b): p for p in rel.pairs}
    p = pairs[("bm25", "bob")]
    assert (p.n, p.exact, p.within1, p.weighted_kappa_linear, p.spearman) == (3, pytest.approx(1 / 3), None, None, None)
    assert pairs[("bob", "demo:extractor")].n == 2 and pairs[("bob", "demo:extractor")].abstained_b == 1
    # the queue restricts relevance to its targets
    assert set(dims_of(db, queue="R")["relevance"].ratings["bm25"]) == set(key.values())


def test_attribute_raters_are_the_verifier_the_operator_and_the_annotators(db, path):
    extraction = rows(path, "SELECT id FROM attribute_extractions")[0][0]
    set_operator_verdict(db, extraction, "x1", "accept")
    set_operator_verdict(db, extraction, "x2", "reject")
    create_queue(db, "A", QueueSpec(kind="attribute", batches=["b1"]))
    verdicts = {"x1": "uncertain", "x2": "reject", "x3": "accept"}
    for position in range(16):
        item = load_item(db, "A", position)
        if item.target_id in verdicts:
            save_label(db, item, "alice", Label(verdict=verdicts[item.target_id]), blind=True)
    d = dims_of(db)["attribute"]
    assert d.level == "nominal"
    stored = rows(path, "SELECT id, verifier_verdict FROM attributes_extracted WHERE extraction_id = ?", extraction)
    assert len(stored) == 16
    score = {"accept": 1.0, "uncertain": 0.5, "reject": 0.0}
    assert d.ratings["verifier:demo:extractor"] == {(extraction, a): score[v] for a, v in stored}
    assert d.ratings["operator"] == {(extraction, "x1"): 1.0, (extraction, "x2"): 0.0}
    assert d.ratings["alice"] == {(extraction, a): score[v] for a, v in verdicts.items()}
    [p] = [
        p
        for p in next(x for x in agreement(db, B1_ONLY) if x.dimension == "attribute").pairs
        if (p.rater_a, p.rater_b) == ("alice", "operator")
    ]
    assert (p.n, p.exact) == (2, 0.5)


def test_a_queue_restricts_answer_scores_to_its_answers(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=10, seed=4))
    ids = {r for (r,) in rows(path, "SELECT response_id FROM annotation_items WHERE queue = 'Q'")}
    d = dims_of(db, queue="Q")["rubric:alignment"]
    assert d.ratings["demo:heuristic"] == {rid: s for rid, s in heuristic_scores(path).items() if rid in ids}
    assert len(d.ratings["demo:heuristic"]) == 10
