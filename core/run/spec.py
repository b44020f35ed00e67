"""What defines a run (RunSpec) and what happens during one (RunEvent).

The engine emits these events; the storage recorder persists them and the TUI/CLI render them.
Everything that defines a run is in the RunSpec, so a stored run can be re-opened, re-judged,
replayed or re-run with one change.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from core.plan import PromptPlan
from core.providers.base import ModelSpec

#: ``incomplete``: the stream ended without its finish signal; the text kept may be cut short.
ResponseStatus = Literal["running", "ok", "error", "cancelled", "interrupted", "incomplete"]


def new_id(prefix: str) -> str:
    """Time-sortable unique id: ``r-20261121T193015-3f9a2c81d0e4``.

    Six random bytes: a batch makes thousands of ids within one second-stamp, and three bytes
    collided (a UNIQUE failure on ``responses.id``) after ~2,000 of them."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    return f"{prefix}-{stamp}-{os.urandom(6).hex()}"


class RunSpec(BaseModel):
    user_id: str
    query_id: str
    expression_type: int | None = Field(default=None, ge=0, le=4)
    context: str = "simple"
    seed: int = 0
    #: prefeval-turns context: inter turns after the preference (2N messages of PrefEval's pool).
    turns: int | None = Field(default=None, ge=0)
    #: "official" (the pool's first 2N messages, as PrefEval) or "shuffled" (ours, seeded).
    turns_order: Literal["official", "shuffled"] = "official"
    #: Position sweep: the gold evidence sessions moved to this depth of the history, 0 (first) …
    #: 1 (just before the question) (:mod:`core.history.evidence_placement`); None = where they fall.
    evidence_depth: float | None = Field(default=None, ge=0, le=1)
    #: Filler pools the context draws from (ids); None = the user's own source's pool
    #: (:func:`core.history.filler.default_pool_ids`). The plan records the ones resolved.
    filler_pools: list[str] | None = None
    method: str = "zero_shot"
    #: Method options, e.g. {"k": 5} for RAG.
    method_options: dict = Field(default_factory=dict)
    models: list[ModelSpec] = Field(min_length=1)
    judges: list[str] = Field(default_factory=list)
    #: Send even when the context exceeds a model's window.
    force: bool = False
    #: Serve every model from recorded responses instead of calling it.
    replay: bool = False
    label: str = ""
    #: Which repeat of the same cell this is (0 = the first): repeats sample the same prompt again.
    repeat: int = Field(default=0, ge=0)
    #: A knowledge probe (``core.run.probes``): the id of the run whose answers it probes, model by model.
    probe_of: str | None = None

    @field_validator("filler_pools")
    @classmethod
    def _canonical_pools(cls, value: list[str] | None) -> list[str] | None:
        # One order for one set: the draw (and a batch cell's key) must not depend on flag order.
        return None if value is None else sorted(set(value))

    @model_serializer(mode="wrap")
    def _drop_default_turns(self, handler: SerializerFunctionWrapHandler) -> dict:
        # Specs without inter turns or named pools dump as before these fields existed: stored
        # runs and batch cell keys (sha256 of the dump) stay the same.
        data = handler(self)
        for key in ("filler_pools", "probe_of", "evidence_depth"):
            if data.get(key) is None:
                data.pop(key, None)
        if not data.get("repeat"):
            data.pop("repeat", None)
        if data.get("turns") is None:
            data.pop("turns", None)
            if data.get("turns_order") == "official":
                data.pop("turns_order", None)
        return data


def pinned_spec(spec: RunSpec, plan: PromptPlan) -> RunSpec:
    """``spec`` with the filler pools its ``plan`` drew from named, for re-running a stored run
    with the same filler whatever was imported since (runs from before plans recorded pools are
    returned as they are)."""
    if spec.filler_pools is not None or not plan.filler_pools:
        return spec
    return spec.model_copy(update={"filler_pools": list(plan.filler_pools)})


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str
    spec: RunSpec
    plan: PromptPlan
    created_at: str = field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))


@dataclass(frozen=True, slots=True)
class ResponseStarted:
    run_id: str
    response_id: str
    model: ModelSpec
    #: Position of the model in the spec (pane index).
    slot: int
    step: str
    is_final_step: bool
    request_hash: str
    t: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class TokensArrived:
    response_id: str
    text: str
    t: float


@dataclass(frozen=True, slots=True)
class ResponseFinished:
    run_id: str
    response_id: str
    slot: int
    step: str
    is_final_step: bool
    status: ResponseStatus
    text: str
    error: str | None
    ttft_ms: float | None
    #: None for an answer fetched from a provider batch job (nothing was timed).
    duration_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cache_hit: bool
    #: Recorded pacing (seconds since request, text) for replay; empty for replays themselves.
    chunks: tuple = ()
    #: Prompt tokens served from / written to the provider's prompt cache (parts of input_tokens).
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    #: How the answer was obtained: "stream", or the provider batch API ("openai-batch", …).
    via: str = "stream"

    @property
    def tokens_per_s(self) -> float | None:
        if not self.output_tokens or self.ttft_ms is None or self.duration_ms is None:
            return None
        gen_s = (self.duration_ms - self.ttft_ms) / 1000
        return self.output_tokens / gen_s if gen_s > 0 else None


@dataclass(frozen=True, slots=True)
class JudgeScored:
    run_id: str
    response_id: str | None
    judgment: object  # core.judges.base.Judgment


RunStatus = Literal["ok", "partial", "error", "cancelled"]


@dataclass(frozen=True, slots=True)
class RunFinished:
    run_id: str
    status: RunStatus
    t: float = field(default_factory=time.monotonic)


RunEvent = RunStarted | ResponseStarted | TokensArrived | ResponseFinished | JudgeScored | RunFinished
