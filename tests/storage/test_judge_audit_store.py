"""What a judge bias audit reads (storage.judge_audit) from a real demo batch: the pairs of
answers to the same prompt, a judge's two-order verdicts and humans' on them, and a judge's scores
with each answer's model and length.

The batch: maya, open queries, expressions 1 and 2, normal context, three demo models judged by
the heuristic: 16 prompts × 3 models = 48 answers, 48 same-prompt pairs."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import replace
from itertools import combinations

import pytest

from core.analysis.judge_audit import answer_words
from core.judges.base import Judgment
from core.judges.heuristic import score_heuristic
from core.judges.preference_pair import PreferencePairJudge
from storage.analyses import save_human_judgment, save_judgments
from storage.annotation_queues import query_and_preference
from storage.export import RunFilter
from storage.judge_audit import judged_dimensions, same_prompt_pairs, scored_answers, stored_pair_orders
from tests.storage.annotation_fixtures import (  # noqa: F401 (fixtures)
    B1_ONLY,
    building_b1,
    fixture_db,
    fixture_path,
    pair_judgment,
    runs_of,
    save_human_pair_label,
)
from tests.storage.stored_batches import batch, rows


def answers(path: str, label: str = "b1") -> dict[str, tuple]:
    """response id -> (run, prompt key, model, text, created order)."""
    return {
        rid: (run, prompt, model, text, n)
        for n, (rid, run, prompt, model, text) in enumerate(
            rows(
                path,
                "SELECT p.id, r.id, r.user_id || '/' || r.query_id || '/' || r.expression_type || '/' || r.context, "
                "p.model, p.text FROM responses p JOIN runs r ON r.id = p.run_id WHERE r.label = ? "
                "ORDER BY r.created_at, r.id, p.slot",
                label,
            )
        )
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    with building_b1(tmp_path_factory, "judge-audit-store") as path:
        batch(
            path,
            "b2",
            "--user",
            "priya",
            "--query-kind",
            "open",
            "--expression",
            "1",
            "--context",
            "simple",
            "--model",
            "demo:generic",
            "--model",
            "demo:oracle",
        )
    return path


def test_same_prompt_pairs_are_every_two_answers_to_a_prompt_in_a_stable_order(db, path):
    found = answers(path)
    pairs = same_prompt_pairs(db, B1_ONLY)
    assert len(pairs) == 48
    by_prompt = defaultdict(list)
    for rid, (_, prompt, *_rest) in sorted(found.items(), key=lambda kv: kv[1][4]):
        by_prompt[prompt].append(rid)
    expected = [(a, b) for ids in by_prompt.values() for a, b in combinations(ids, 2)]
    assert sorted(p.key for p in pairs) == sorted(expected)
    for p in pairs:
        assert p.run_id == found[p.response_1][0]
        assert found[p.response_1][4] < found[p.response_2][4]  # answer 1 is the earlier one
    assert same_prompt_pairs(db, B1_ONLY) == pairs


def test_same_prompt_pairs_take_extra_conditions_and_other_batches(db, path):
    pairs = same_prompt_pairs(db, B1_ONLY, " AND p.model != ?", ["demo:violator"])
    found = answers(path)
    assert len(pairs) == 16
    assert all({found[p.response_1][2], found[p.response_2][2]} == {"demo:oracle", "demo:generic"} for p in pairs)
    b2 = same_prompt_pairs(db, RunFilter(labels=["b2"], probes=False))
    priya = answers(path, "b2")
    assert len(b2) == len(priya) // 2 > 0
    assert all(priya[p.response_1][1] == priya[p.response_2][1] for p in b2)
    assert len(same_prompt_pairs(db, RunFilter(probes=False))) == 48 + len(b2)  # never across users


def heuristic_pair_verdicts(db, pairs) -> None:
    """Judge each pair in both orders with the offline pair judge and store it as audit-judge does."""
    judge = PreferencePairJudge(None)
    for p in pairs:
        query, preference = query_and_preference(db, p.run_id)
        texts = dict(db.execute("SELECT id, text FROM responses WHERE id IN (?, ?)", [p.response_1, p.response_2]))
        both = asyncio.run(
            judge.judge_both_orders(query, preference, texts[p.response_1], texts[p.response_2], complete=None)
        )
        save_judgments(
            db, p.run_id, [(p.response_1, replace(j, extra={**j.extra, "other_response": p.response_2})) for j in both]
        )


def test_stored_pair_orders_give_each_orders_outcome_of_answer_1(db, path):
    pairs = same_prompt_pairs(db, B1_ONLY)
    heuristic_pair_verdicts(db, pairs[:6])
    judged, humans = stored_pair_orders(db, B1_ONLY, "demo:heuristic")
    assert humans == {}
    assert set(judged) == {p.key for p in pairs[:6]}
    for p in pairs[:6]:
        query, preference = query_and_preference(db, p.run_id)
        texts = dict(db.execute("SELECT id, text FROM responses WHERE id IN (?, ?)", [p.response_1, p.response_2]))
        s1, s2 = (score_heuristic(preference, query, texts[r])["alignment"][0] for r in p.key)
        if s1 == s2:  # equal: whichever is shown first wins (the heuristic's documented position bias)
            assert judged[p.key] == [1.0, 0.0]
        else:
            assert judged[p.key] == [float(s1 > s2)] * 2
    assert stored_pair_orders(db, B1_ONLY, "test:other")[0] == {}


def test_the_latest_verdict_per_order_counts_and_humans_are_averaged_both_ways(db):
    p, q = same_prompt_pairs(db, B1_ONLY)[:2]
    a, b = p.key
    save_judgments(db, p.run_id, [(a, pair_judgment("test:pj", 1.0, b, 1)), (a, pair_judgment("test:pj", 1.0, b, 2))])
    save_judgments(db, p.run_id, [(a, pair_judgment("test:pj", None, b, 2))])  # a later failure of order 2
    save_judgments(db, q.run_id, [(q.response_1, pair_judgment("test:pj", 0.5, q.response_2, 2))])
    # no other_response: not a pair verdict; an unknown order: ignored
    save_judgments(db, p.run_id, [(a, replace(pair_judgment("test:pj", 0.0, b, 1), extra={"shown_first": 1}))])
    save_judgments(db, p.run_id, [(a, pair_judgment("test:pj", 0.0, b, 3))])
    for who, rid, other, score in (("alice", a, b, 1.0), ("bob", b, a, 1.0), ("carol", a, b, 0.5)):
        save_human_pair_label(db, p.run_id, rid, other, score, annotator=who)
    judged, humans = stored_pair_orders(db, B1_ONLY, "test:pj")
    assert judged == {(a, b): [1.0, None], q.key: [None, 0.5]}
    assert humans[(a, b)] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert humans[(b, a)] == pytest.approx((0.0 + 1.0 + 0.5) / 3)
    assert q.key not in humans


def test_scored_answers_are_the_judges_latest_parsed_scores_with_model_and_length(db, path):
    found = answers(path)
    got = scored_answers(db, B1_ONLY, "demo:heuristic", "rubric", "alignment")
    stored = dict(
        rows(
            path,
            "SELECT response_id, score FROM judgments WHERE judge_model = 'demo:heuristic' AND dimension = 'alignment'",
        )
    )
    assert len(got) == 48
    for a in got:
        assert (a.model, a.words, a.score, a.human) == (
            found[a.response_id][2],
            answer_words(found[a.response_id][3]),
            stored[a.response_id],
            None,
        )
    assert all(a.words > 20 for a in got)


def test_scored_answers_skip_failed_latest_and_average_humans(db, path):
    got = {a.response_id: a for a in scored_answers(db, B1_ONLY, "demo:heuristic", "rubric", "alignment")}
    x, y, z = sorted(got)[:3]
    run = runs_of(path)
    judge = "demo:heuristic"
    rescored = Judgment("rubric", "alignment", 2.0, "", "", True, judge, "again", scale_min=1.0, scale_max=5.0)
    failed = replace(rescored, score=None, parse_ok=False)
    save_judgments(db, run[x], [(x, rescored)])
    save_judgments(db, run[y], [(y, failed)])
    for who, score in (("alice", 4), ("bob", 5)):
        save_human_judgment(
            db, run[z], z, kind="rubric", dimension="alignment", score=score, annotator=who, scale=(1.0, 5.0)
        )
    again = {a.response_id: a for a in scored_answers(db, B1_ONLY, judge, "rubric", "alignment")}
    assert again[x].score == 2.0
    assert y not in again and len(again) == 47
    assert again[z].human == 4.5 and again[z].score == got[z].score


def test_judged_dimensions_are_the_judges_scores_without_pair_verdicts(db):
    assert judged_dimensions(db, B1_ONLY, "demo:heuristic") == [
        "rubric:alignment",
        "rubric:awareness",
        "rubric:quality",
    ]
    heuristic_pair_verdicts(db, same_prompt_pairs(db, B1_ONLY)[:2])
    assert judged_dimensions(db, B1_ONLY, "demo:heuristic") == [
        "rubric:alignment",
        "rubric:awareness",
        "rubric:quality",
    ]
    assert judged_dimensions(db, B1_ONLY, "openai:gpt-4o-mini") == []
    assert judged_dimensions(db, RunFilter(labels=["nosuch"], probes=False), "demo:heuristic") == []
