"""The one rule for a report's default metric, and the one rule for score column names."""

from __future__ import annotations

import importlib

import pytest

from core.analysis.score_columns import ScoreKey, default_metrics, score_column_names
from core.judges import JUDGES
from core.judges.aggregate import source_of
from core.judges.base import Judgment


@pytest.mark.parametrize(
    ("kinds", "judged", "expected"),
    [
        ({"mcq"}, {("choice", "accuracy")}, ["accuracy"]),
        ({"mcq", "tf"}, set(), ["accuracy"]),  # not judged yet: still the metric that fits
        ({"mcq-prefeval"}, {("choice", "accuracy")}, ["accuracy"]),  # a PrefEval plan without its query row
        ({"open"}, {("rubric", "alignment"), ("rubric", "quality")}, ["rubric:alignment"]),
        ({"open", "mcq"}, {("choice", "accuracy"), ("rubric", "alignment")}, ["accuracy", "rubric:alignment"]),
        ({"open"}, {("locomo", "f1")}, ["locomo:f1"]),  # LoCoMo: its F1, not an empty rubric table
        ({"open"}, {("taxonomy", "error_type"), ("rubric", "*")}, ["taxonomy:error_type"]),
        ({"open"}, set(), ["rubric:alignment"]),
        (set(), set(), ["rubric:alignment"]),
        ({None}, set(), ["rubric:alignment"]),
    ],
)
def test_default_metric_follows_the_queries(kinds, judged, expected):
    assert default_metrics(kinds, judged) == expected


def key(kind="rubric", dim="alignment", source="llm", judge="openai:gpt-4o"):
    return ScoreKey(kind, dim, source, judge)


def test_score_column_names_are_short_unless_they_must_not_be():
    one = key()
    assert score_column_names([one]) == {one: "score_rubric_alignment"}
    heur = key(source="heuristic", judge="demo:heuristic")
    choice = key("choice", "accuracy", "parser", "parser:choice")
    assert score_column_names([one, heur, choice]) == {
        one: "score_rubric_alignment_llm",
        heur: "score_rubric_alignment_heuristic",
        choice: "score_choice_accuracy",
    }
    mini = key(judge="openai:gpt-4o-mini")
    assert score_column_names([one, mini, heur]) == {
        one: "score_rubric_alignment_llm_openai_gpt_4o",
        mini: "score_rubric_alignment_llm_openai_gpt_4o_mini",
        heur: "score_rubric_alignment_heuristic",
    }
    # A failed judge's dimension "*" and judge ids that slug alike still get distinct names.
    a, b = key(dim="*", judge="x:a-b"), key(dim="*", judge="x:a_b")
    names = score_column_names([a, b])
    assert names[a] == "score_rubric_all_x_a_b" and names[b] == "score_rubric_all_x_a_b_2"


def judgment(judge_model: str, **kw) -> Judgment:
    return Judgment("choice", "accuracy", 1.0, "", "", True, judge_model, "v1", **kw)


def test_parsers_are_their_own_judge_source():
    from core.benchmarks.locomo.judge import JUDGE_MODEL as LOCOMO
    from core.judges.choice import JUDGE_MODEL as CHOICE

    assert source_of(judgment(CHOICE)) == source_of(judgment(LOCOMO)) == "parser"
    assert source_of(judgment("openai:gpt-4o")) == "llm"
    assert source_of(judgment("demo:heuristic", heuristic=True)) == "heuristic"
    assert source_of(judgment("ann", human=True)) == "human"
    # Every judge that calls no model and reads no words heuristically scores as a parser.
    heuristic = ("demo:heuristic", "probe-recall", "restraint")
    constant = {"mem0-f1": "F1_MODEL", "mem0-bleu1": "BLEU_MODEL"}  # two judges in one module
    for entry in JUDGES.values():
        if not entry.needs_model and entry.name not in heuristic:
            module = importlib.import_module(entry.target.partition(":")[0])
            model = getattr(module, constant.get(entry.name, "JUDGE_MODEL"))
            assert source_of(judgment(model)) == "parser", entry.name
    from core.judges.probe_recall import ProbeRecallJudge

    assert source_of(ProbeRecallJudge().judge_text("eats at 3 a.m.", [], "at 3 a.m.")) == "heuristic"
