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

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.registry import Entry, Registry

if TYPE_CHECKING:
    from core.judges.base import Judge
    from core.settings import Settings


@dataclass(frozen=True)
class JudgeKind(Entry):
    #: An LLM judge: built with a judge model id (``<kind>:<model id>``).
    needs_model: bool = True
    #: Scores one answer (False: pairwise, which compares two and has its own command).
    per_response: bool = True


#: One line per judge: name, class, description. Listed in this order by the TUI and CLI.
JUDGES: Registry[JudgeKind] = Registry(
    [
        JudgeKind(
            "demo:heuristic",
            "core.judges.heuristic:HeuristicJudge",
            "Offline word-overlap scores for the RealPref dimensions (heuristic, not an LLM).",
            needs_model=False,
        ),
        JudgeKind(
            "choice",
            "core.judges.choice:ChoiceJudge",
            "MCQ / true-false accuracy from the parsed answer (no model call).",
            needs_model=False,
        ),
        JudgeKind(
            "probe-recall",
            "core.judges.probe_recall:ProbeRecallJudge",
            "Knowledge probes: share of the gold preference (or its checklist) the answer states (lexical heuristic).",
            needs_model=False,
        ),
        JudgeKind(
            "locomo",
            "core.judges.locomo_qa:LocomoJudge",
            "LoCoMo QA: token F1 per category, as its evaluation code (no model call).",
            needs_model=False,
        ),
        JudgeKind(
            "rubric",
            "core.judges.rubric:RubricJudge",
            "RealPref rubric: awareness, alignment, quality 1–5, one LLM call each (RealPref paper App. B.2).",
        ),
        JudgeKind(
            "checklist",
            "core.judges.checklist:ChecklistJudge",
            "CUPID 1–10 preference score with the checklist (CUPID repo response_judger.yaml @a8560ca).",
        ),
        JudgeKind(
            "matching",
            "core.judges.preference_matching:PreferenceMatchingJudge",
            "CUPID preference matching of an inferred preference: P/R/F1 (CUPID repo @a8560ca).",
        ),
        JudgeKind(
            "taxonomy",
            "core.judges.taxonomy:TaxonomyJudge",
            "PrefEval error type: the official four checks and labels (PrefEval @50795054).",
        ),
        JudgeKind(
            "longmemeval",
            "core.judges.longmemeval:LongMemEvalJudge",
            "LongMemEval QA: the official yes/no prompt per question type, abstention apart (LongMemEval @9e0b455).",
        ),
        JudgeKind(
            "personalization",
            "core.judges.personalization:PersonalizationJudge",
            "Re-Centering: personalised vs generic response, 1–5 (Re-Centering paper §6).",
        ),
        JudgeKind(
            "pairwise",
            "core.judges.pairwise:PairwiseJudge",
            "InterPref pass and win rate of two answers (`prefscope pairwise`).",
            per_response=False,
        ),
    ],
    aliases={"heuristic": "demo:heuristic"},
)
HEURISTIC = "demo:heuristic"
#: judge name -> one-line description (the TUI and CLI list these).
JUDGE_CHOICES: dict[str, str] = {k.name: k.description for k in JUDGES.values() if k.per_response}
LLM_KINDS = tuple(k.name for k in JUDGES.values() if k.needs_model)


class JudgeSpecError(ValueError):
    """A judge string that names no judge, or an LLM judge without a model."""


def parse_judge(text: str, default_model: str | None = None) -> tuple[str, str | None]:
    """``(kind, judge model id or None)`` of a judge string; raises :class:`JudgeSpecError`."""
    whole = JUDGES.find(text)
    if whole is not None and not whole.needs_model:
        return ("heuristic" if whole.name == HEURISTIC else whole.name), None
    kind, _, model = text.strip().partition(":")
    entry = JUDGES.find(kind)
    if entry is None or not entry.needs_model:
        known = ", ".join([HEURISTIC, "choice", *(f"{k}:<model>" for k in LLM_KINDS)])
        raise JudgeSpecError(f"unknown judge {text!r}; expected one of {known}")
    model = model.strip() or default_model or ""
    if not model or model == HEURISTIC or ":" not in model:
        raise JudgeSpecError(
            f"judge {text!r} needs a judge model: write {entry.name}:<provider>:<model>, "
            f"e.g. {entry.name}:openai:gpt-4o-mini (or set `judge` in the config to a model id)"
        )
    return entry.name, model


def make_judge(text: str, default_model: str | None = None) -> Judge:
    kind, model = parse_judge(text, default_model)
    entry = JUDGES[HEURISTIC if kind == "heuristic" else kind]
    if not entry.per_response:
        raise JudgeSpecError(
            f"{kind!r} judges two responses at once and cannot run per response; use core.judges.pairwise.PairwiseJudge"
        )
    cls = entry.load()
    return cls(model) if entry.needs_model else cls()


def judges_for(spec, settings: Settings | None = None) -> list[Judge]:
    """The judges a RunSpec asks for (``spec.judges``; a plain list of strings also works).

    The ``choice`` scorer (a parser: no model call, free, deterministic) is always added, so an
    MCQ or true/false answer is scored even when no judge is asked for; it leaves open answers
    alone. Duplicates are dropped.
    """
    names = list(getattr(spec, "judges", spec) or [])
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


__all__ = [
    "HEURISTIC",
    "JUDGES",
    "JUDGE_CHOICES",
    "LLM_KINDS",
    "JudgeSpecError",
    "judges_for",
    "make_judge",
    "parse_judge",
]
