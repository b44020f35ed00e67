"""``probe-recall``: the share of the gold preference (or of its checklist) a knowledge probe's
answer states, by content words, with the probe question's own words left out."""

from __future__ import annotations

import pytest

from core.formats.native import load_file
from core.judges import judges_for
from core.judges.base import JudgeInput
from core.judges.probe_recall import DIMENSION, JUDGE_MODEL, KIND, KNOWN_AT, ProbeRecallJudge, recall
from tests.core.judges.conftest import SAMPLE, make_plan

PREF = "Prefers audiobooks, mostly non-fiction, at 1.5x speed, over paper books."  # 5 content words
CHECKLIST = [
    "Uses short bullet points rather than paragraphs.",  # bullet, paragraph, point, short
    "Names Sandra and Youssef by first name as the people to go to.",  # name, people, sandra, youssef
    "Signs the post as Dana.",
]


def test_recall_of_the_preference_words():
    share, why = recall(PREF, [], "You like audiobooks at 1.5x speed.")
    assert share == pytest.approx(2 / 5)
    assert why == "states 2 of 5 content words of the preference: audiobook, speed; missing book, non-fiction, paper"
    full, why = recall(PREF, [], "Non-fiction audiobooks at speed, never paper books.")
    assert full == 1.0 and "missing" not in why
    assert recall(PREF, [], "")[0] == 0.0


def test_words_of_the_question_are_excluded():
    share, why = recall(PREF, [], "You like audiobooks at 1.5x speed.", "What do I prefer about audiobooks?")
    assert share == pytest.approx(1 / 4)
    assert why == "states 1 of 4 content words of the preference: speed; missing book, non-fiction, paper"


def test_none_when_the_question_leaves_no_word_to_look_for():
    assert recall("Prefers audiobooks.", [], "audiobooks", "What do I prefer about audiobooks?") == (
        None,
        "the preference has no content word beyond the question's",
    )


def test_recall_of_checklist_items():
    # item 1: 3 of 4 words; item 2: sandra, youssef = 2 of 4 (the half counts); item 3: none
    share, why = recall("ignored when there is a checklist", CHECKLIST, "Short bullet points; ask Sandra or Youssef.")
    assert share == pytest.approx(2 / 3)
    assert why == "states 2 of 3 checklist items"
    # half of an item's words is the mark: "bullet" alone is 1 of 4
    assert recall("x", CHECKLIST[:1], "bullet")[0] == 0.0
    assert recall("x", CHECKLIST[:1], "bullet points")[0] == 1.0


def test_checklist_items_lose_the_question_words():
    question = "How should the post name Sandra and Youssef for people?"
    share, why = recall("x", CHECKLIST, "Short bullet points; ask Sandra or Youssef.", question)
    # item 2 is all question words (name, people, sandra, youssef): it leaves the count
    assert share == pytest.approx(1 / 2)
    assert why == "states 1 of 2 checklist items"


def test_none_when_no_checklist_item_has_a_word_beyond_the_question():
    """The docstring: None when the gold has no content word left to look for. With a checklist
    whose items are all made of the question's words, the answer is scored 0 (not known) instead."""
    assert recall("x", ["Sandra and Youssef."], "anything", "Should I ask Sandra or Youssef?")[0] is None


def test_judge_text_is_a_labelled_heuristic_judgment():
    judge = ProbeRecallJudge()
    j = judge.judge_text(PREF, [], "You like audiobooks at 1.5x speed.")
    assert (j.kind, j.dimension, j.judge_model) == (KIND, DIMENSION, JUDGE_MODEL) == ("probe", "recall", JUDGE_MODEL)
    assert j.score == pytest.approx(0.4) and j.score < KNOWN_AT
    assert j.heuristic is True and j.human is False and j.parse_ok is True
    assert (j.scale_min, j.scale_max) == (0.0, 1.0)
    assert j.rationale == j.raw and j.rationale.startswith("states 2 of 5")
    assert j.extra == {}
    none = judge.judge_text("Prefers audiobooks.", [], "audiobooks", "What do I prefer about audiobooks?")
    assert none.score is None and none.parse_ok is True and none.extra == {"not_applicable": True}


async def test_the_judge_reads_the_probe_query_and_its_checklist():
    dana = load_file(SAMPLE / "dana.json").bundles[0]
    probe = dana.query("probe:q-consistent-1")
    answer = (
        "You want the cost per pallet near the top, about €2.89, next to the total euro figure, with the "
        "working written out: (€23,500 + €4,000) / 9,500 pallets a month."
    )
    item = JudgeInput(dana, probe, None, make_plan(), answer, "demo:oracle")

    async def no_model(*_):  # pragma: no cover - the judge never calls a model
        raise AssertionError("probe-recall called a model")

    (j,) = await ProbeRecallJudge().judge(item, no_model)
    expected = recall(dana.preference("cp1").text, probe.checklist, answer, probe.text)
    assert (j.score, j.rationale) == expected
    assert (j.score, j.rationale) == (0.5, "states 2 of 4 checklist items")


def test_registered_for_open_queries_and_named_probe_recall():
    names = [j.name for j in judges_for(["probe-recall"])]
    assert names == ["probe-recall", "choice"]
    assert ProbeRecallJudge.applies_to == ("open",)
