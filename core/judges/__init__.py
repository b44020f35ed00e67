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

``pairwise`` (InterPref) needs two responses, so it is not a per-response judge (its
:class:`JudgeKind` says ``per_response=False``; ``prefscope pairwise`` runs it). Every judgment
records judge model, prompt version, temperature, raw output, parsed value and ``parse_ok``; see
:mod:`core.judges.base`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.benchmark import JudgeKind
from core.registry import FIRST, Registry, merged

if TYPE_CHECKING:
    from core.judges.base import Judge
    from core.settings import Settings


#: The generic judges; each benchmark adds its own (:mod:`core.benchmarks`) after them.
_GENERIC = [
    JudgeKind(
        "demo:heuristic",
        "core.judges.heuristic:HeuristicJudge",
        "Offline word-overlap scores for the RealPref dimensions (heuristic, not an LLM).",
        needs_model=False,
        order=FIRST,
    ),
    JudgeKind(
        "choice",
        "core.judges.choice:ChoiceJudge",
        "MCQ / true-false accuracy from the parsed answer (no model call).",
        needs_model=False,
        order=FIRST + 1,
    ),
    JudgeKind(
        "probe-recall",
        "core.judges.probe_recall:ProbeRecallJudge",
        "Knowledge probes: share of the gold preference (or its checklist) the answer states (lexical heuristic).",
        needs_model=False,
        order=FIRST + 2,
    ),
    JudgeKind(
        "restraint",
        "core.judges.restraint:RestraintJudge",
        "Restraint queries: does the answer drag the user's stored preference in? (lexical heuristic, no model).",
        needs_model=False,
        order=FIRST + 3,
    ),
]


def _gather() -> tuple[list[JudgeKind], dict[str, str]]:
    from core import benchmark as benchmarks

    return merged([_GENERIC, *benchmarks.entries("judges")]), {"heuristic": "demo:heuristic"}


#: Every judge: the generic ones, then the installed benchmarks' (LoCoMo, RealPref, CUPID, PrefEval,
#: LongMemEval, Re-Centering, InterPref, installed ones). Listed in this order by the TUI and CLI.
#: Filled on first use.
JUDGES: Registry[JudgeKind] = Registry.deferred(_gather)
HEURISTIC = "demo:heuristic"


def judge_choices() -> dict[str, str]:
    """judge name -> one-line description, per-response judges only (the TUI and CLI list these)."""
    return {k.name: k.description for k in JUDGES.values() if k.per_response}


def llm_kinds() -> tuple[str, ...]:
    """The kinds that need a judge model (``<kind>:<model id>``)."""
    return tuple(k.name for k in JUDGES.values() if k.needs_model)


def __getattr__(name: str) -> Any:
    # JUDGE_CHOICES and LLM_KINDS are computed on use, so importing this package discovers nothing.
    if name == "JUDGE_CHOICES":
        return judge_choices()
    if name == "LLM_KINDS":
        return llm_kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        known = ", ".join([HEURISTIC, "choice", *(f"{k}:<model>" for k in llm_kinds())])
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
            f"{kind!r} judges two responses at once and cannot run per response; use `prefscope pairwise`"
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
    "JudgeKind",
    "JudgeSpecError",
    "judge_choices",
    "judges_for",
    "llm_kinds",
    "make_judge",
    "parse_judge",
]
