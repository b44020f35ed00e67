"""Labels by named annotators (storage.annotation_labels) on a real demo batch: where each kind
of label is stored, that a label and "done" are one transaction, and the CSV import that stores
all rows or none.

The batch: maya, open queries, expressions 1 and 2, normal context, three demo models judged by
the heuristic (48 answers), plus an attribute extraction by `demo:extractor` and a few relevance
decisions on one run."""

from __future__ import annotations

import json

import pytest

from core.analysis.relevance import Decision
from storage.analyses import human_judgment, save_human_judgment, save_relevance
from storage.annotation_labels import Label, check_annotator, import_labels, save_label, skip_item
from storage.annotation_queues import AnnotationError, QueueSpec, create_queue, load_item, next_item, progress
from storage.db import open_db
from tests.cli_runner import cli
from tests.storage.annotation_fixtures import (  # noqa: F401 (fixtures)
    building_b1,
    fixture_db,
    fixture_path,
    response_ids,
    write_csv,
)
from tests.storage.stored_batches import rows

TURN_TEXT = "I eat my main hot meal at about 3 a.m."


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    with building_b1(tmp_path_factory, "annotation-labels") as path:
        cli(path, "attributes", "maya", "--model", "demo:extractor", "--no-dedup")
    run, query = rows(path, "SELECT id, query_id FROM runs WHERE label = 'b1' ORDER BY created_at, id LIMIT 1")[0]
    extraction = rows(path, "SELECT id FROM attribute_extractions")[0][0]
    db = open_db(path)
    try:
        decisions = [
            Decision("turn", "maya-p1-e1", "gold", True),
            Decision("turn", "maya-p1-e1", "bm25", True, score=3.2),
            Decision("turn", "maya-life-01", "bm25", False, score=0.1),
            Decision("turn", "maya-p2-e1", "llm", False, model="demo:extractor"),
            Decision("attribute", "x2", "bm25", True, score=2.5),
        ]
        save_relevance(db, run, query, decisions, texts={("turn", "maya-p1-e1"): TURN_TEXT}, extraction_id=extraction)
    finally:
        db.close()
    return path


def human_rows(path: str) -> list[tuple]:
    return rows(
        path,
        "SELECT run_id, response_id, kind, dimension, score, scale_min, scale_max, judge_model, rationale, extra "
        "FROM judgments WHERE human = 1 ORDER BY id",
    )


def done_rows(path: str) -> list[tuple]:
    return rows(path, "SELECT queue, position, annotator, skipped FROM annotation_done ORDER BY queue, position")


def counts(path: str) -> tuple:
    return rows(
        path,
        "SELECT (SELECT count(*) FROM judgments), (SELECT count(*) FROM annotation_done), "
        "(SELECT count(*) FROM relevance), (SELECT count(*) FROM attribute_labels)",
    )[0]


# -- answer labels ---------------------------------------------------------------------------------


def test_an_answer_label_is_one_human_judgment_per_dimension_and_marks_the_item_done(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=5, seed=1))
    item = next_item(db, "Q", "alice")
    label = Label(scores={"alignment": 4, "awareness": 2, "quality": 5}, note="kept the 3 a.m. meal")
    save_label(db, item, "alice", label, blind=True)
    stored = human_rows(path)
    assert len(stored) == 3
    extra = {"annotator": "alice", "queue": "Q", "item": item.position, "blind": True}
    for (run, rid, kind, dim, score, lo, hi, judge, note, raw), (want_dim, want) in zip(
        stored, (("alignment", 4.0), ("awareness", 2.0), ("quality", 5.0))
    ):
        assert (run, rid, kind, dim, score) == (item.run_id, item.response_id, "rubric", want_dim, want)
        assert (lo, hi, judge, note) == (1.0, 5.0, "human:alice", "kept the 3 a.m. meal")
        assert json.loads(raw) == extra
    assert done_rows(path) == [("Q", item.position, "alice", 0)]
    assert rows(path, "SELECT count(*) FROM judgments WHERE human = 1 AND prompt_version = 'human'") == [(3,)]


@pytest.mark.parametrize(
    ("scores", "error"),
    [
        ({"awareness": 3, "alignment": 6}, "outside the 1–5 scale"),
        ({"awareness": 3, "tone": 4}, "unknown dimension 'tone'"),
        ({"alignment": 0}, "outside the 1–5 scale"),
        ({}, "score at least one dimension"),
    ],
)
def test_an_answer_label_that_fails_validation_stores_nothing(db, path, scores, error):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=5, seed=1))
    item = next_item(db, "Q", "alice")
    before = counts(path)
    with pytest.raises(ValueError, match=error):
        save_label(db, item, "alice", Label(scores=scores), blind=True)
    assert counts(path) == before  # the valid dimension before the bad one is rolled back too
    assert not db.conn.in_transaction
    assert next_item(db, "Q", "alice").position == item.position  # still to do
    save_label(db, item, "alice", Label(scores={"alignment": 5}), blind=True)  # the database is still usable
    assert done_rows(path) == [("Q", item.position, "alice", 0)]


def test_a_relabelled_answer_keeps_both_judgments(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=5, seed=1))
    item = next_item(db, "Q", "alice")
    save_label(db, item, "alice", Label(scores={"alignment": 2}), blind=True)
    save_label(db, item, "alice", Label(scores={"alignment": 3}), blind=False)
    assert [r[4] for r in human_rows(path)] == [2.0, 3.0]
    assert [json.loads(r[9])["blind"] for r in human_rows(path)] == [True, False]
    assert done_rows(path) == [("Q", item.position, "alice", 0)]


def test_two_annotators_on_the_same_item_are_kept_apart(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=5, seed=1))
    item = load_item(db, "Q", 0)
    save_label(db, item, "alice", Label(scores={"alignment": 2}), blind=True)
    save_label(db, item, "bob", Label(scores={"alignment": 5}), blind=True)
    stored = [(r[1], r[7], r[4]) for r in human_rows(path)]
    assert stored == [(item.response_id, "human:alice", 2.0), (item.response_id, "human:bob", 5.0)]
    assert done_rows(path) == [("Q", 0, "alice", 0), ("Q", 0, "bob", 0)]
    assert progress(db, "Q") == {"alice": (1, 0), "bob": (1, 0)}
    skip_item(db, load_item(db, "Q", 1), "bob")
    assert progress(db, "Q") == {"alice": (1, 0), "bob": (1, 1)}


# -- pair labels -----------------------------------------------------------------------------------


def pair_items(db, name: str, size: int):
    loaded = [load_item(db, name, p) for p in range(size)]
    return [i for i in loaded if i.swapped], [i for i in loaded if not i.swapped]


@pytest.mark.parametrize(
    ("swapped", "choice", "score"),
    [(True, "A", 0.0), (True, "B", 1.0), (True, "tie", 0.5), (False, "A", 1.0), (False, "B", 0.0)],
)
def test_a_pair_label_stores_answer_1s_outcome_whichever_side_was_shown_first(db, path, swapped, choice, score):
    create_queue(db, "P", QueueSpec(kind="pair", batches=["b1"], seed=3))
    flipped, straight = pair_items(db, "P", 48)
    item = (flipped if swapped else straight)[0]
    save_label(db, item, "alice", Label(choice=choice, note="why"), blind=True)
    [(run, rid, kind, dim, got, lo, hi, judge, note, raw)] = human_rows(path)
    assert (run, rid, kind, dim, got) == (item.run_id, item.response_id, "pairwise", "preferred", score)
    assert (lo, hi, judge, note) == (0.0, 1.0, "human:alice", "why")
    order = [item.other_response_id, item.response_id] if swapped else [item.response_id, item.other_response_id]
    assert json.loads(raw) == {
        "annotator": "alice",
        "queue": "P",
        "item": item.position,
        "blind": True,
        "other_response": item.other_response_id,
        "shown_first": 2 if swapped else 1,
        "label": choice,
        "order": order,
    }
    assert done_rows(path) == [("P", item.position, "alice", 0)]


def test_a_pair_label_that_is_not_a_choice_stores_nothing(db, path):
    create_queue(db, "P", QueueSpec(kind="pair", batches=["b1"], seed=3))
    item = load_item(db, "P", 0)
    before = counts(path)
    for choice in ("C", None, "a"):
        with pytest.raises(AnnotationError, match="a pair label is one of A, B, tie"):
            save_label(db, item, "alice", Label(choice=choice), blind=True)
    assert counts(path) == before


# -- relevance and attribute labels ----------------------------------------------------------------


def test_a_relevance_queue_holds_the_targets_deciders_decided_on(db, path):
    run = rows(path, "SELECT DISTINCT run_id FROM relevance")[0][0]
    extraction = rows(path, "SELECT id FROM attribute_extractions")[0][0]
    q = create_queue(db, "R", QueueSpec(kind="relevance", run_ids=[run]))
    assert q.size == 4
    loaded = [load_item(db, "R", p) for p in range(q.size)]
    targets = {(i.target_kind, i.target_id): i for i in loaded}
    assert set(targets) == {
        ("turn", "maya-p1-e1"),
        ("turn", "maya-life-01"),
        ("turn", "maya-p2-e1"),
        ("attribute", "x2"),
    }
    assert all(i.run_id == run and i.response_id is None and i.shown == () for i in loaded)
    assert targets[("turn", "maya-p1-e1")].target_text == TURN_TEXT
    assert targets[("turn", "maya-life-01")].target_text == "maya-life-01"  # no text stored: the id
    attribute = targets[("attribute", "x2")]
    assert attribute.extraction_id == extraction
    assert attribute.target_text == rows(path, "SELECT text FROM attributes_extracted WHERE id = 'x2'")[0][0]


def test_a_relevance_label_is_a_human_decision_of_that_annotator(db, path):
    run = rows(path, "SELECT DISTINCT run_id FROM relevance")[0][0]
    create_queue(db, "R", QueueSpec(kind="relevance", run_ids=[run]))
    item = next(load_item(db, "R", p) for p in range(4) if load_item(db, "R", p).target_id == "maya-p1-e1")
    save_label(db, item, "alice", Label(relevant=False, note="not this one"), blind=True)
    save_label(db, item, "alice", Label(relevant=True, note="on reflection"), blind=True)  # replaces hers
    save_label(db, item, "bob", Label(relevant=False), blind=False)
    stored = rows(
        path,
        "SELECT run_id, query_id, target_kind, target_id, target_text, decider, decider_model, relevant, reason, extra "
        "FROM relevance WHERE decider = 'human' ORDER BY decider_model",
    )
    query = rows(path, "SELECT query_id FROM runs WHERE id = ?", run)[0][0]
    assert [r[:9] for r in stored] == [
        (run, query, "turn", "maya-p1-e1", TURN_TEXT, "human", "alice", 1, "on reflection"),
        (run, query, "turn", "maya-p1-e1", TURN_TEXT, "human", "bob", 0, ""),
    ]
    assert json.loads(stored[0][9]) == {"queue": "R", "item": item.position, "blind": True}
    assert json.loads(stored[1][9])["blind"] is False
    assert rows(path, "SELECT count(*) FROM relevance WHERE decider != 'human'") == [(5,)]  # machine ones kept
    assert progress(db, "R") == {"alice": (1, 0), "bob": (1, 0)}
    with pytest.raises(AnnotationError, match="yes or no"):
        save_label(db, load_item(db, "R", 0), "carol", Label(), blind=True)
    assert "carol" not in progress(db, "R")


def test_an_attribute_queue_and_its_labels(db, path):
    extraction = rows(path, "SELECT id FROM attribute_extractions")[0][0]
    attributes = rows(
        path, "SELECT id, text FROM attributes_extracted WHERE extraction_id = ? ORDER BY position", extraction
    )
    q = create_queue(db, "A", QueueSpec(kind="attribute", batches=["b1"]))
    assert q.size == len(attributes) == 16
    loaded = [load_item(db, "A", p) for p in range(q.size)]
    assert sorted((i.target_id, i.target_text) for i in loaded) == sorted(attributes)
    assert {(i.kind, i.target_kind, i.extraction_id) for i in loaded} == {("attribute", "attribute", extraction)}
    item = loaded[0]
    before = counts(path)
    with pytest.raises(AnnotationError, match="accept, uncertain, reject"):
        save_label(db, item, "alice", Label(verdict="maybe"), blind=True)
    assert counts(path) == before
    save_label(db, item, "alice", Label(verdict="reject", note="a one-off"), blind=True)
    save_label(db, item, "bob", Label(verdict="accept"), blind=True)
    assert rows(
        path, "SELECT extraction_id, attribute_id, annotator, verdict, note, extra FROM attribute_labels ORDER BY id"
    ) == [
        (
            extraction,
            item.target_id,
            "alice",
            "reject",
            "a one-off",
            json.dumps({"queue": "A", "item": 0, "blind": True}),
        ),
        (extraction, item.target_id, "bob", "accept", "", json.dumps({"queue": "A", "item": 0, "blind": True})),
    ]
    # the single operator's verdict is not touched
    assert rows(path, "SELECT count(*) FROM attributes_extracted WHERE operator_verdict IS NOT NULL") == [(0,)]
    assert done_rows(path) == [("A", 0, "alice", 0), ("A", 0, "bob", 0)]


# -- annotators ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "   ", None, "a b", "x:y", "a" * 41, "-lead", "tab\there"])
def test_check_annotator_refuses_unusable_names(name):
    with pytest.raises(AnnotationError):
        check_annotator(name)


@pytest.mark.parametrize(("name", "kept"), [("a" * 40, "a" * 40), (" alice ", "alice"), ("j.o-e_1@lab", "j.o-e_1@lab")])
def test_check_annotator_keeps_usable_names(name, kept):
    assert check_annotator(name) == kept


def test_a_label_by_an_unusable_annotator_stores_nothing(db, path):
    create_queue(db, "Q", QueueSpec(batches=["b1"], sample=5, seed=1))
    item = next_item(db, "Q", "alice")
    before = counts(path)
    with pytest.raises(AnnotationError, match="letters, digits"):
        save_label(db, item, "x:y", Label(scores={"alignment": 3}), blind=True)
    with pytest.raises(AnnotationError, match="name the annotator"):
        skip_item(db, item, "")
    assert counts(path) == before


# -- human judgments (storage.analyses) ------------------------------------------------------------


def test_human_judgment_is_on_the_judges_scale_or_refused():
    j = human_judgment("alice", "rubric", "alignment", 4, (1.0, 5.0), "ok", {"queue": "Q"})
    assert (j.kind, j.dimension, j.score, j.judge_model, j.human, j.parse_ok) == (
        "rubric",
        "alignment",
        4.0,
        "human:alice",
        True,
        True,
    )
    assert (j.scale_min, j.scale_max, j.prompt_version, j.extra) == (
        1.0,
        5.0,
        "human",
        {"annotator": "alice", "queue": "Q"},
    )
    for bad in (0.99, 5.01, float("nan")):
        with pytest.raises(ValueError, match="outside the 1–5 scale"):
            human_judgment("alice", "rubric", "alignment", bad, (1.0, 5.0))
    free = human_judgment("alice", "custom", "x", 42, None)
    assert (free.score, free.scale_min, free.scale_max) == (42.0, None, None)


def test_save_human_judgment_is_the_operators_not_blind_score(db, path):
    run, rid = rows(path, "SELECT run_id, id FROM responses ORDER BY id LIMIT 1")[0]
    save_human_judgment(db, run, rid, kind="rubric", dimension="awareness", score=3, rationale="r", scale=(1.0, 5.0))
    [(got_run, got_rid, kind, dim, score, lo, hi, judge, note, extra)] = human_rows(path)
    assert (got_run, got_rid, kind, dim, score, lo, hi, judge, note) == (
        run,
        rid,
        "rubric",
        "awareness",
        3.0,
        1.0,
        5.0,
        "human:operator",
        "r",
    )
    assert json.loads(extra) == {"annotator": "operator", "blind": False}
    with pytest.raises(ValueError):
        save_human_judgment(db, run, rid, kind="rubric", dimension="awareness", score=9, scale=(1.0, 5.0))
    assert len(human_rows(path)) == 1


# -- import ----------------------------------------------------------------------------------------


def test_a_valid_csv_by_two_annotators_imports_every_row(db, path, tmp_path):
    answers = response_ids(path, 4)
    lines = ["response_id,annotator,dimension,score,note"]
    expected = []
    for i, (rid, run) in enumerate(answers):
        lines.append(f"{rid},alice,alignment,{1 + i},first pass")
        lines.append(f"{rid},bob,rubric:alignment,{5 - i},")
        lines.append(f"{rid},bob,rubric:quality,{2.5 + i / 2},")
        expected += [
            (run, rid, "rubric", "alignment", 1.0 + i, "human:alice", "first pass"),
            (run, rid, "rubric", "alignment", 5.0 - i, "human:bob", ""),
            (run, rid, "rubric", "quality", 2.5 + i / 2, "human:bob", ""),
        ]
    done = import_labels(db, write_csv(tmp_path / "labels.csv", lines))
    assert (done.stored, done.annotators) == (12, ("alice", "bob"))
    stored = human_rows(path)
    assert [(r[0], r[1], r[2], r[3], r[4], r[7], r[8]) for r in stored] == expected
    assert all(r[5:7] == (1.0, 5.0) for r in stored)
    assert {json.dumps(json.loads(r[9]), sort_keys=True) for r in stored} == {
        json.dumps({"annotator": a, "imported_from": "labels.csv", "blind": None}, sort_keys=True)
        for a in ("alice", "bob")
    }


def test_an_imported_dimension_a_judge_scored_takes_that_judges_scale(db, path, tmp_path):
    (rid, run), (other, other_run) = response_ids(path, 2)
    from core.judges.base import Judgment
    from storage.analyses import save_judgments

    custom = Judgment("checklist", "pass", 1.0, "", "", True, "test:judge", "v1", scale_min=0.0, scale_max=1.0)
    save_judgments(db, other_run, [(other, custom)])
    lines = ["response_id,annotator,dimension,score", f"{rid},alice,checklist:pass,0", f"{rid},bob,checklist:pass,1"]
    assert import_labels(db, write_csv(tmp_path / "ok.csv", lines)).stored == 2
    assert [(r[2], r[3], r[4], r[5], r[6]) for r in human_rows(path)] == [("checklist", "pass", 0.0, 0.0, 1.0)] + [
        ("checklist", "pass", 1.0, 0.0, 1.0)
    ]
    bad = ["response_id,annotator,dimension,score", f"{rid},alice,checklist:pass,2"]
    with pytest.raises(AnnotationError, match="line 2: score 2 is outside the 0–1 scale of checklist:pass"):
        import_labels(db, write_csv(tmp_path / "bad.csv", bad))


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("resp-nope,alice,alignment,3", "no answer with response_id 'resp-nope'"),
        ("{rid},alice,alignment,7", "score 7 is outside the 1–5 scale of rubric:alignment"),
        ("{rid},alice,alignment,high", "score 'high' is not a number"),
        ("{rid},alice,alignment,", "score '' is not a number"),
        ("{rid},alice,pairwise:preferred,1", "pairwise verdicts need two answers"),
        ("{rid},alice,rubric:tone,3", "no judge has scored rubric:tone"),
        ("{rid},alice,rubric:,3", "empty dimension"),
        ("{rid},a b,alignment,3", "annotator 'a b'"),
    ],
)
def test_a_csv_with_one_bad_row_imports_nothing_and_names_its_line(db, path, tmp_path, row, problem):
    answers = response_ids(path, 3)
    lines = ["response_id,annotator,dimension,score"] + [f"{rid},alice,alignment,4" for rid, _ in answers]
    lines.insert(3, row.format(rid=answers[0][0]))  # line 4 of the file, between good rows
    before = counts(path)
    with pytest.raises(AnnotationError) as err:
        import_labels(db, write_csv(tmp_path / "bad.csv", lines))
    message = str(err.value)
    assert "nothing imported" in message and f"line 4: {problem}" in message
    assert "line 2" not in message and "line 5" not in message
    assert counts(path) == before


def test_every_bad_line_is_named(db, path, tmp_path):
    rid = response_ids(path, 1)[0][0]
    lines = ["response_id,annotator,dimension,score"] + [f"{rid},alice,alignment,{s}" for s in (9, 3, 0, "x")]
    with pytest.raises(AnnotationError) as err:
        import_labels(db, write_csv(tmp_path / "bad.csv", lines))
    message = str(err.value)
    assert "line 2: score 9" in message and "line 4: score 0" in message and "line 5: score 'x'" in message
    assert "line 3" not in message
    assert human_rows(path) == []


def test_a_csv_missing_a_column_imports_nothing(db, path, tmp_path):
    rid = response_ids(path, 1)[0][0]
    with pytest.raises(AnnotationError, match=r"missing column\(s\) score"):
        import_labels(
            db, write_csv(tmp_path / "cols.csv", ["response_id,annotator,dimension", f"{rid},alice,alignment"])
        )
    with pytest.raises(AnnotationError, match="missing column"):
        import_labels(db, write_csv(tmp_path / "empty.csv", [""]))
    assert human_rows(path) == []


def test_a_csv_that_is_not_utf8_imports_nothing(db, path, tmp_path):
    rid = response_ids(path, 1)[0][0]
    bad = tmp_path / "latin1.csv"
    bad.write_bytes(
        f"response_id,annotator,dimension,score,note\n{rid},alice,alignment,3,ok\n".encode() + b"x,y,z,1,caf\xe9\n"
    )
    with pytest.raises(AnnotationError, match="not UTF-8"):
        import_labels(db, bad)
    assert human_rows(path) == []


def test_a_non_utf8_byte_deep_in_a_large_csv_is_located(db, path, tmp_path):
    rid = response_ids(path, 1)[0][0]
    good = "".join(f"{rid},alice,alignment,3,{'x' * 60}\n" for _ in range(400))
    data = f"response_id,annotator,dimension,score,note\n{good}".encode() + f"{rid},alice,alignment,3,caf".encode()
    offset = len(data)
    bad = tmp_path / "big.csv"
    bad.write_bytes(data + b"\xe9\n")
    with pytest.raises(AnnotationError) as err:
        import_labels(db, bad)
    message = str(err.value)
    assert "not UTF-8" in message
    assert "line 402" in message or f"byte {offset}" in message, message


def test_a_csv_with_a_utf8_bom_and_spaces_imports(db, path, tmp_path):
    rid = response_ids(path, 1)[0][0]
    f = tmp_path / "bom.csv"
    f.write_bytes(
        "\ufeffresponse_id , annotator,dimension,score\n".encode() + f" {rid} , alice ,alignment, 2 \n".encode()
    )
    assert import_labels(db, f).stored == 1
    assert [(r[1], r[3], r[4], r[7]) for r in human_rows(path)] == [(rid, "alignment", 2.0, "human:alice")]


def test_a_csv_with_only_a_header_is_refused(db, tmp_path):
    with pytest.raises(AnnotationError, match="no labels in the file"):
        import_labels(db, write_csv(tmp_path / "h.csv", ["response_id,annotator,dimension,score"]))
