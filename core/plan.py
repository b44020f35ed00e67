"""A PromptPlan: the exact messages a method sends, step by step, with token counts.

Single-step methods have one step. Multi-step methods (workflow, self-critic, summary memory,
the Re-Centering pipeline) have several; a later step's message text may contain the marker
``{{output:<step name>}}``, which the engine replaces with that earlier step's reply before
sending (:func:`fill`). The last step's reply is the answer that gets judged.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

MessageRole = Literal["system", "user", "assistant"]
OUTPUT_MARKER = re.compile(r"\{\{output:([a-z0-9_\-]+)\}\}")


class Message(BaseModel):
    role: MessageRole
    content: str


class PromptStep(BaseModel):
    name: str
    messages: list[Message]
    #: Tokens of the messages as planned (before earlier outputs are filled in).
    tokens: int = 0
    #: What the step is for, in a few words, for the Prompt tab.
    purpose: str = ""
    #: Per-step generation limits a protocol fixes (PrefEval: 300 tokens, 500 for the self-critic
    #: revision, 5 for MCQ; temperature 0). None = the model's own params decide. An explicit model
    #: param set by the user wins over these (the plan notes it).
    max_tokens: int | None = None
    temperature: float | None = None
    #: Text the assistant's reply is made to start with (PrefEval MCQ: ``<choice>``). Not a message:
    #: providers that can continue a trailing assistant message (Anthropic) get it as one; the
    #: others are not sent it.
    prefill: str | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_limits(self, handler: SerializerFunctionWrapHandler) -> dict:
        # Steps without protocol limits dump exactly as before these fields existed (stored plans,
        # golden files and request digests stay the same).
        data = handler(self)
        for key in ("max_tokens", "temperature", "prefill"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    def needs(self) -> list[str]:
        """Names of earlier steps whose output this step's messages take."""
        found: list[str] = []
        for m in self.messages:
            found += OUTPUT_MARKER.findall(m.content)
        return list(dict.fromkeys(found))


class EvidencePosition(BaseModel):
    session_id: str
    #: Index of the session in the built history (0 = oldest).
    position: int
    #: Tokens between the end of this session and the query.
    tokens_to_query: int


class ContextEntry(BaseModel):
    """One session of the built history, in the order the model saw it."""

    session_id: str
    tokens: int
    filler: bool = False


class RetrievedTurn(BaseModel):
    rank: int
    session_id: str
    turn_index: int  # index of the user turn; the retrieved unit is that turn + the reply after it
    similarity: float
    is_evidence: bool
    text: str = ""


class PromptPlan(BaseModel):
    method: str
    steps: list[PromptStep] = Field(min_length=1)
    #: Answer-format parser the judge/choice scorer should use: "open", "mcq", "tf" or a
    #: benchmark's own (``Benchmark.answer_formats``: "mcq-prefeval", "mcq-personamem").
    answer_format: str = "open"
    history_tokens: int = 0
    #: The built history, oldest first (fillers included), for the timeline and the Prompt tab.
    context: list[ContextEntry] = Field(default_factory=list)
    evidence: list[EvidencePosition] = Field(default_factory=list)
    retrieved: list[RetrievedTurn] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    #: Neutral session names shown in the prompt (``S1`` …) -> real session keys, for prompts that
    #: let the model cite turns (Re-Centering extract): dataset ids carry gold, so they are never shown.
    aliases: dict[str, str] = Field(default_factory=dict)
    #: Ids of the filler pools the context drew from (empty when it adds no filler), so a stored
    #: run re-runs with the same filler (``core.run.spec.pinned_spec``).
    filler_pools: list[str] = Field(default_factory=list)
    #: Who ranked ``retrieved``: an embedder id (``all-MiniLM-L6-v2@onnx-fp32``), ``bm25`` or ``given``.
    retrieved_by: str = ""
    #: An estimate's plan whose ``retrieved`` turns were picked by BM25 because the embeddings were
    #: not cached yet (estimates never embed): its token counts are close, its turns are not the run's.
    retrieval_stand_in: bool = False

    @model_serializer(mode="wrap")
    def _drop_empty_aliases(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Plans that show no ids or draw no filler dump exactly as before these fields existed
        # (stored plans, golden files).
        data = handler(self)
        for key in ("aliases", "filler_pools", "retrieved_by", "retrieval_stand_in"):
            if not data.get(key):
                data.pop(key, None)
        return data

    @property
    def total_tokens(self) -> int:
        return sum(s.tokens for s in self.steps)


def fill(step: PromptStep, outputs: dict[str, str]) -> list[Message]:
    """The step's messages with ``{{output:name}}`` markers replaced by earlier replies."""

    def sub(match: re.Match) -> str:
        name = match.group(1)
        if name not in outputs:
            raise KeyError(f"step {step.name!r} needs the output of step {name!r}, which has not run")
        return outputs[name]

    return [Message(role=m.role, content=OUTPUT_MARKER.sub(sub, m.content)) for m in step.messages]
