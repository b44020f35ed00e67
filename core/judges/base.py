"""What a judge is and what it produces.

A judge scores one response (or a pair) and returns Judgments. A judgment always carries the
raw judge output and whether parsing worked: a parse failure is a recorded failure
(``parse_ok=False``, ``score=None``), never a silent number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from core.model import Query, UserBundle
from core.plan import PromptPlan
from core.providers.calls import Complete


@dataclass(frozen=True, slots=True)
class Judgment:
    kind: str  # rubric | choice | checklist | pairwise | taxonomy | relevance | personalization
    dimension: str  # e.g. awareness / alignment / quality / accuracy / pass
    score: float | None
    rationale: str
    raw: str
    parse_ok: bool
    judge_model: str
    prompt_version: str
    temperature: float | None = None
    scale_min: float | None = None
    scale_max: float | None = None
    #: Heuristic (non-LLM) judges are labelled and kept out of LLM-judge aggregates.
    heuristic: bool = False
    human: bool = False
    error: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class JudgeInput:
    bundle: UserBundle
    query: Query
    expression_type: int | None
    plan: PromptPlan
    response_text: str
    model_id: str


class Judge(Protocol):
    name: str

    # Read-only, so a judge may declare it as a class-level tuple of fixed length.
    @property
    def applies_to(self) -> tuple[str, ...]:
        """Query kinds it applies to ("open", "mcq", "tf")."""
        ...

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]: ...
