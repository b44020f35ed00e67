"""Judges: what scores a model's answer, and how a judge is named in a RunSpec.

A judge string (``RunSpec.judges``, ``--judge`` on the CLI, the TUI's judge picker) is

    demo:heuristic                the offline lexical judge (labelled heuristic; no model call)
    choice                        MCQ / true-false accuracy by the answer parsers (no model call)
    <kind>:<judge model id>       an LLM judge, e.g. rubric:openai:gpt-4o-mini,
                                  checklist:anthropic:claude-sonnet-4-5, taxonomy:ollama:qwen3
    <kind>                        an LLM judge using the model in Settings.judge (when that is a model)

with ``<kind>`` one of :data:`LLM_KINDS`. Judge models are called only through the ``complete``
callable (the provider layer), at temperature 0. :func:`judges_for` also adds the ``choice``
scorer whenever any judge is requested: it is exact, free, and only touches MCQ/TF queries.

``pairwise`` (InterPref) needs two responses, so it is not a per-response judge: see
:mod:`core.judges.pairwise`. Every judgment records judge model, prompt version, temperature, raw
output, parsed value and ``parse_ok``; see :mod:`core.judges.base`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.judges.base import Judge
    from core.settings import Settings

#: judge name -> one-line description (the TUI and CLI list these).
JUDGE_CHOICES: dict[str, str] = {
    "demo:heuristic": "Offline word-overlap scores for the RealPref dimensions (heuristic, not an LLM).",
    "choice": "MCQ / true-false accuracy from the parsed answer (no model call).",
    "rubric": "RealPref rubric: awareness, alignment, quality 1–5, one LLM call each (000 App. B.2).",
    "checklist": "CUPID 1–10 preference score with the checklist (003 Fig. 16).",
    "matching": "CUPID preference matching of an inferred preference: P/R/F1 (003 §2.3).",
    "taxonomy": "PrefEval error type from four yes/no checks (prompts ours).",
    "personalization": "Re-Centering: personalised vs generic response, 1–5 (004 §6).",
}
LLM_KINDS = ("rubric", "checklist", "matching", "taxonomy", "personalization", "pairwise")
HEURISTIC = "demo:heuristic"


class JudgeSpecError(ValueError):
    """A judge string that names no judge, or an LLM judge without a model."""


def parse_judge(text: str, default_model: str | None = None) -> tuple[str, str | None]:
    """``(kind, judge model id or None)`` of a judge string; raises :class:`JudgeSpecError`."""
    s = text.strip()
    if s in (HEURISTIC, "heuristic"):
        return "heuristic", None
    if s == "choice":
        return "choice", None
    kind, _, model = s.partition(":")
    kind = kind.strip().lower()
    if kind not in LLM_KINDS:
        known = ", ".join([HEURISTIC, "choice", *(f"{k}:<model>" for k in LLM_KINDS)])
        raise JudgeSpecError(f"unknown judge {text!r}; expected one of {known}")
    model = model.strip() or default_model
    if not model or model == HEURISTIC or ":" not in model:
        raise JudgeSpecError(
            f"judge {text!r} needs a judge model: write {kind}:<provider>:<model>, "
            f"e.g. {kind}:openai:gpt-4o-mini (or set `judge` in the config to a model id)"
        )
    return kind, model


def make_judge(text: str, default_model: str | None = None) -> Judge:
    kind, model = parse_judge(text, default_model)
    if kind == "heuristic":
        from core.judges.heuristic import HeuristicJudge

        return HeuristicJudge()
    if kind == "choice":
        from core.judges.choice import ChoiceJudge

        return ChoiceJudge()
    if kind == "rubric":
        from core.judges.rubric import RubricJudge

        return RubricJudge(model)
    if kind == "checklist":
        from core.judges.checklist import ChecklistJudge

        return ChecklistJudge(model)
    if kind == "matching":
        from core.judges.preference_matching import PreferenceMatchingJudge

        return PreferenceMatchingJudge(model)
    if kind == "taxonomy":
        from core.judges.taxonomy import TaxonomyJudge

        return TaxonomyJudge(model)
    if kind == "personalization":
        from core.judges.personalization import PersonalizationJudge

        return PersonalizationJudge(model)
    raise JudgeSpecError(
        f"{kind!r} judges two responses at once and cannot run per response; use core.judges.pairwise.PairwiseJudge"
    )


def judges_for(spec, settings: Settings | None = None) -> list[Judge]:
    """The judges a RunSpec asks for (``spec.judges``; a plain list of strings also works).

    The ``choice`` scorer is added whenever any judge is requested. Duplicates are dropped.
    """
    names = list(getattr(spec, "judges", spec) or [])
    if not names:
        return []
    default_model = getattr(settings, "judge", None) if settings is not None else None
    out: list = []
    seen: set[str] = set()
    for name in [*names, "choice"]:
        judge = make_judge(name, default_model)
        if judge.name in seen:
            continue
        seen.add(judge.name)
        out.append(judge)
    return out


__all__ = ["HEURISTIC", "JUDGE_CHOICES", "LLM_KINDS", "JudgeSpecError", "judges_for", "make_judge", "parse_judge"]
