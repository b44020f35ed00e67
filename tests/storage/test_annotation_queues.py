"""Annotation queues (storage.annotation_queues) on a real demo batch built by the `prefscope`
commands: what a queue selects, how it is shuffled and served, and what blind mode hides.

The batch: maya, open queries, expressions 1 and 2, normal context, three demo models judged by
the heuristic: 16 prompts × 3 models = 48 answers."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from itertools import combinations

import pytest

from core.judges.base import Judgment
from storage.analyses import save_human_judgment, save_judgments
from storage.annotation_labels import Label, save_label, skip_item
from storage.annotation_queues import (
    AnnotationError,
    QueueSpec,
    create_queue,
    list_queues,
    load_item,
    next_item,
    progress,
    queue,
    reveal,
    serving_order,
)
from tests.storage.annotation_fixtures import (  # noqa: F401 (fixtures)
    MODELS,
    fixture_built,
    fixture_db,
    fixture_path,
    heuristic_scores,
)
from tests.storage.export_fixtures import judgment
from tests.storage.stored_batches import rows


def answers(path: str) -> dict[str, tuple[str, str, str]]:
    """Final, finished answers of batch b1: response id -> (run id, model, text), read with sqlite3."""
    return {
        rid: (run, model, text)
        for rid, run, model, text in rows(
            path,
            "SELECT p.id, r.id, p.model, p.text FROM responses p JOIN runs r ON r.id = p.run_id "
            "WHERE r.label = 'b1' AND p.is_final = 1 AND p.status = 'ok'",
        )
    }


def items(path: str, name: str) -> list[tuple]:
    return rows(
        path,
        "SELECT position, run_id, response_id, other_response_id, swapped FROM annotation_items "
        "WHERE queue = ? ORDER BY position",
        name,
    )


def test_the_batch_has_48_answers_to_16_prompts(path):
    found = answers(path)
    assert len(found) == 48
    assert Counter(m for _, m, _ in found.values()) == {m: 16 for m in MODELS}


# -- building --------------------------------------------------------------------------------------


def test_an_answer_sample_holds_30_distinct_final_answers_of_the_batch(db, path):
    q = create_queue(db, "Q", QueueSpec(batches=["b1"], sample=30, seed=7))
    assert (q.name, q.kind, q.size, q.blind, q.seed) == ("Q", "answer", 30, True, 7)
    assert q.spec["batches"] == ["b1"] and q.spec["sample"] == 30
    got = items(path, "Q")
    assert [p for p, *_ in got] == list(range(30))
    ids = [rid for _, _, rid, _, _ in got]
    assert len(set(ids)) == 30
    found = answers(path)
    assert set(ids) <= set(found)
    assert all(run == found[rid][0] and other is None and swapped == 0 for _, run, rid, other, swapped in got)


def test_the_same_seed_gives_the_same_items_and_another_seed_others(db, path):
    create_queue(db, "s7", QueueSpec(batches=["b1"], sample=30, seed=7))
    create_queue(db, "s7again", QueueSpec(batches=["b1"], sample=30, seed=7))
    create_queue(db, "s8", QueueSpec(batches=["b1"], sample=30, seed=8))
    first, again, other = ([r[1:] for r in items(path, n)] for n in ("s7", "s7again", "s8"))
    assert first == again
    assert first != other


def test_a_sample_larger_than_the_batch_keeps_every_answer(db, path):
    q = create_queue(db, "all", QueueSpec(batches=["b1"], sample=100))
    assert q.size == 48
    assert {r[2] for r in items(path, "all")} == set(answers(path))


def test_where_model_keeps_only_that_models_answers(db, path):
    q = create_queue(db, "oracle", QueueSpec(batches=["b1"], where=["model=demo:oracle"]))
    found = answers(path)
    assert q.size == 16
    ids = {r[2] for r in items(path, "oracle")}
    assert ids == {rid for rid, (_, model, _) in found.items() if model == "demo:oracle"}


def test_where_on_two_factors_keeps_answers_meeting_both(db, path):
    create_queue(db, "two", QueueSpec(batches=["b1"], where=["model=demo:violator", "expression_type=2"]))
    expected = {
        rid
        for (rid,) in rows(
            path,
            "SELECT p.id FROM responses p JOIN runs r ON r.id = p.run_id WHERE r.label = 'b1' "
            "AND p.model = 'demo:violator' AND r.expression_type = 2",
        )
    }
    assert len(expected) == 8
    assert {r[2] for r in items(path, "two")} == expected


def second_judge(rid: str, score: float | None, *, ok: bool = True) -> tuple[str, Judgment]:
    return rid, judgment(score=score, judge="test:second", parse_ok=ok)


def test_disagree_keeps_only_answers_two_judges_scored_gap_apart(db, path):
    found = answers(path)
    heuristic = heuristic_scores(path)
    ordered = sorted(found)
    run_of = {rid: found[rid][0] for rid in ordered}
    picked: dict[str, float] = {}
    for i, rid in enumerate(ordered):
        h = heuristic[rid]
        if i % 4 == 0:  # two apart
            picked[rid] = h + 2 if h <= 3 else h - 2
        elif i % 4 == 1:  # one apart
            picked[rid] = h + 1 if h <= 4 else h - 1
        else:
            picked[rid] = h
    late, human, failed = ordered[2], ordered[3], ordered[4]
    # an earlier verdict far apart that a later one replaces does not count …
    save_judgments(db, run_of[late], [second_judge(late, 5.0 if heuristic[late] <= 2 else 1.0)])
    for rid, score in picked.items():
        save_judgments(db, run_of[rid], [second_judge(rid, score)])
    # … nor does a human label, nor a later reply the judge failed on
    save_human_judgment(
        db,
        run_of[human],
        human,
        kind="rubric",
        dimension="alignment",
        score=1 if heuristic[human] >= 3 else 5,
        annotator="eve",
        scale=(1.0, 5.0),
    )
    save_judgments(db, run_of[failed], [second_judge(failed, None, ok=False)])
    expected = {rid for rid in ordered if abs(picked[rid] - heuristic[rid]) >= 2} - {failed}
    assert len(expected) == 11

    q = create_queue(db, "far", QueueSpec(batches=["b1"], disagree=True, gap=2))
    assert q.size == 11
    assert {r[2] for r in items(path, "far")} == expected
    create_queue(db, "near", QueueSpec(batches=["b1"], disagree=True, gap=1))
    near = {rid for rid in ordered if picked[rid] != heuristic[rid]} - {failed}
    assert len(near) == 23
    assert {r[2] for r in items(path, "near")} == near


def test_disagree_with_one_judge_selects_nothing_and_says_which_filter(db):
    with pytest.raises(AnnotationError) as err:
        create_queue(db, "far", QueueSpec(batches=["b1"], disagree=True, gap=1))
    assert "judges 1+ apart on rubric:alignment" in str(err.value)
    assert list_queues(db) == []


def test_a_pair_queue_holds_every_two_answers_to_the_same_prompt(db, path):
    q = create_queue(db, "P", QueueSpec(kind="pair", batches=["b1"], seed=3))
    assert (q.kind, q.size) == ("pair", 48)
    found = answers(path)
    prompt_of = {
        rid: prompt
        for rid, prompt in rows(
            path,
            "SELECT p.id, r.user_id || '/' || r.query_id || '/' || r.expression_type FROM responses p "
            "JOIN runs r ON r.id = p.run_id WHERE r.label = 'b1'",
        )
    }
    by_prompt = defaultdict(list)
    for rid, prompt in prompt_of.items():
        by_prompt[prompt].append(rid)
    assert len(by_prompt) == 16
    expected = {frozenset(pair) for ids in by_prompt.values() for pair in combinations(ids, 2)}
    got = items(path, "P")
    assert {frozenset((a, b)) for _, _, a, b, _ in got} == expected
    for _, run, a, b, _ in got:
        assert prompt_of[a] == prompt_of[b] and found[a][1] != found[b][1]
        assert run == found[a][0]  # answer 1's run
    swapped = Counter(s for *_, s in got)
    assert set(swapped) == {0, 1} and min(swapped.values()) >= 10  # drawn, not fixed


def test_pair_sides_are_stable_for_a_seed(db, path):
    create_queue(db, "P3", QueueSpec(kind="pair", batches=["b1"], seed=3))
    create_queue(db, "P3again", QueueSpec(kind="pair", batches=["b1"], seed=3))
    create_queue(db, "P4", QueueSpec(kind="pair", batches=["b1"], seed=4))
    sides = {n: {(a, b): s for _, _, a, b, s in items(path, n)} for n in ("P3", "P3again", "P4")}
    assert sides["P3"] == sides["P3again"]
    assert sides["P3"].keys() == sides["P4"].keys()
    assert sides["P3"] != sides["P4"]


def test_a_pair_queue_needs_two_answers_per_prompt(db):
    with pytest.raises(AnnotationError, match="model=demo:oracle"):
        create_queue(db, "P", QueueSpec(kind="pair", batches=["b1"], where=["model=demo:oracle"]))


def test_an_existing_name_is_refused_and_the_queue_kept(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=5))
    before = items(path, "Q")
    with pytest.raises(AnnotationError, match="'Q' exists already"):
        create_queue(db, "Q", QueueSpec(batches=["b1"], sample=30, seed=9))
    assert items(path, "Q") == before
    assert queue(db, "Q").size == 5


def test_an_empty_name_and_an_unknown_kind_are_refused(db):
    with pytest.raises(AnnotationError, match="needs a name"):
        create_queue(db, "  ", QueueSpec(batches=["b1"]))
    with pytest.raises(AnnotationError, match="unknown queue kind 'essay'"):
        create_queue(db, "E", QueueSpec(kind="essay", batches=["b1"]))


def test_a_filter_that_selects_nothing_is_refused_naming_the_filter(db, path):
    with pytest.raises(AnnotationError) as err:
        create_queue(db, "none", QueueSpec(batches=["b1"], where=["model=demo:nobody"]))
    message = str(err.value)
    assert "selects nothing" in message and "batch b1" in message and "model=demo:nobody" in message
    with pytest.raises(AnnotationError, match="batch nosuch"):
        create_queue(db, "none", QueueSpec(batches=["nosuch"]))
    assert rows(path, "SELECT count(*) FROM annotation_queues") == [(0,)]
    assert rows(path, "SELECT count(*) FROM annotation_items") == [(0,)]


def test_an_unknown_factor_is_named(db):
    with pytest.raises(AnnotationError, match="unknown factor 'colour'"):
        create_queue(db, "c", QueueSpec(batches=["b1"], where=["colour=red"]))
    with pytest.raises(AnnotationError, match="FACTOR=VALUE"):
        create_queue(db, "c", QueueSpec(batches=["b1"], where=["model"]))


def test_a_factor_queues_cannot_use_is_refused_with_a_message(db):
    with pytest.raises(AnnotationError):
        create_queue(db, "d", QueueSpec(batches=["b1"], where=["dimension=alignment"]))


def test_unknown_queue_names_the_known_ones(db):
    with pytest.raises(AnnotationError, match="build one with"):
        queue(db, "nope")
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=3))
    with pytest.raises(AnnotationError, match="queues: Q"):
        queue(db, "nope")


# -- serving ---------------------------------------------------------------------------------------


def test_serving_order_is_a_stable_permutation_of_its_own_per_annotator(db):
    q = create_queue(db, "Q", QueueSpec(batches=["b1"], sample=30, seed=1))
    alice, bob = serving_order(q, "alice"), serving_order(q, "bob")
    assert sorted(alice) == sorted(bob) == list(range(30))
    assert alice != bob
    assert serving_order(queue(db, "Q"), "alice") == alice  # the same on every resume


def test_next_item_skips_what_the_annotator_finished_and_progress_counts_it(db):
    q = create_queue(db, "Q", QueueSpec(batches=["b1"], sample=6, seed=2))
    order = serving_order(q, "alice")
    first = next_item(db, "Q", "alice")
    assert first is not None and first.position == order[0]
    save_label(db, first, "alice", Label(scores={"alignment": 3}), blind=True)
    second = next_item(db, "Q", "alice")
    assert second.position == order[1]
    skip_item(db, second, "alice")
    assert next_item(db, "Q", "alice").position == order[2]
    assert progress(db, "Q") == {"alice": (1, 1)}
    assert next_item(db, "Q", "bob").position == serving_order(q, "bob")[0]  # bob's own order, untouched
    for _ in range(4):
        skip_item(db, next_item(db, "Q", "alice"), "alice")
    assert next_item(db, "Q", "alice") is None
    assert progress(db, "Q") == {"alice": (1, 5)}
    save_label(db, next_item(db, "Q", "bob"), "bob", Label(scores={"quality": 4}), blind=True)
    assert progress(db, "Q") == {"alice": (1, 5), "bob": (1, 0)}


def test_load_item_shows_a_swapped_pairs_answer_2_first(db, path):
    create_queue(db, "P", QueueSpec(kind="pair", batches=["b1"], seed=3))
    found = answers(path)
    for position, _, a, b, swapped in items(path, "P"):
        item = load_item(db, "P", position)
        assert (item.response_id, item.other_response_id, item.swapped) == (a, b, bool(swapped))
        expected = (found[b][2], found[a][2]) if swapped else (found[a][2], found[b][2])
        assert item.shown == expected
        assert item.kind == "pair" and item.query and item.preference


def test_load_item_of_an_answer_has_its_query_preference_and_text(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=1, seed=5))
    item = load_item(db, "Q", 0)
    query, preference = rows(
        path,
        "SELECT q.text, pr.text FROM runs r JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id "
        "JOIN preferences pr ON pr.user_id = r.user_id AND pr.id = q.preference_id WHERE r.id = ?",
        item.run_id,
    )[0]
    assert (item.query, item.preference) == (query, preference)
    assert item.shown == (answers(path)[item.response_id][2],)
    with pytest.raises(AnnotationError, match="no item 1"):
        load_item(db, "Q", 1)


def test_an_item_never_names_a_model(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"]))
    create_queue(db, "P", QueueSpec(kind="pair", batches=["b1"]))
    seen = 0
    for name, size in (("Q", 48), ("P", 48)):
        for position in range(size):
            values = [str(v) for v in dataclasses.astuple(load_item(db, name, position))]
            text = " ".join(values).lower()
            assert not any(model in text for model in MODELS), (name, position)
            assert "demo:" not in text and "heuristic" not in text
            seen += 1
    assert seen == 96


def test_reveal_gives_the_models_in_stored_order_and_the_latest_machine_scores(db, path):
    create_queue(db, "P", QueueSpec(kind="pair", batches=["b1"], seed=3))
    found = answers(path)
    position = next(p for p, *_, s in items(path, "P") if s == 1)
    item = load_item(db, "P", position)
    stored = {
        (rid, f"{kind}:{dim}"): score
        for rid, kind, dim, score in rows(
            path, "SELECT response_id, kind, dimension, score FROM judgments WHERE judge_model = 'demo:heuristic'"
        )
    }
    # a human label is not revealed as a judge's score
    save_human_judgment(
        db, item.run_id, item.response_id, kind="rubric", dimension="alignment", score=2, scale=(1.0, 5.0)
    )
    shown = reveal(db, item)
    assert shown.models == (found[item.response_id][1], found[item.other_response_id][1])
    assert (shown.method, shown.context) == ("zero-shot", "normal")
    expected = tuple(
        (n, "demo:heuristic", metric, stored[(rid, metric)])
        for n, rid in enumerate((item.response_id, item.other_response_id), 1)
        for metric in ("rubric:alignment", "rubric:awareness", "rubric:quality")
    )
    assert shown.scores == expected


def test_reveal_shows_a_judges_latest_score(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=1, seed=5))
    item = load_item(db, "Q", 0)
    save_judgments(db, item.run_id, [second_judge(item.response_id, 1.0)])
    save_judgments(db, item.run_id, [second_judge(item.response_id, 4.0)])
    shown = reveal(db, item)
    assert shown.models == (answers(path)[item.response_id][1],)
    assert (1, "test:second", "rubric:alignment", 4.0) in shown.scores
    assert [s for s in shown.scores if s[1] == "test:second"] == [(1, "test:second", "rubric:alignment", 4.0)]
