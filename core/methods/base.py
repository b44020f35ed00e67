"""What every method builder shares: options, step/plan assembly with exact token counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.history.tokens import DEFAULT_ENCODING, count_messages
from core.methods.answers import answer_format
from core.model import Query
from core.plan import ContextEntry, Message, PromptPlan, PromptStep, RetrievedTurn

if TYPE_CHECKING:
    from core.history.retrieval import Embedder
    from core.history.types import BuiltContext
    from core.ports import EmbeddingCache


@dataclass
class MethodOptions:
    #: RAG: how many turns to show (RealPref uses 5).
    k: int = 5
    #: RAG: "embedding" (RealPref) or "bm25".
    retriever: str = "embedding"
    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_cache: EmbeddingCache | None = None
    #: RAG: already retrieved turns (e.g. from a stored run) – skips retrieval.
    retrieved: list[RetrievedTurn] | None = None
    #: An Embedder to reuse across calls (keeps its model-call counter).
    embedder: Embedder | None = None
    encoding: str = DEFAULT_ENCODING
    extra: dict = field(default_factory=dict)


def make_step(name: str, messages: list[Message], purpose: str, encoding: str = DEFAULT_ENCODING) -> PromptStep:
    return PromptStep(name=name, messages=messages, tokens=count_messages(messages, encoding), purpose=purpose)


def make_plan(
    method: str,
    steps: list[PromptStep],
    ctx: BuiltContext,
    query: Query,
    *,
    notes: list[str] | None = None,
    retrieved: list[RetrievedTurn] | None = None,
    answer_format_override: str | None = None,
    uses_history: bool = True,
) -> PromptPlan:
    return PromptPlan(
        method=method,
        steps=steps,
        answer_format=answer_format_override or answer_format(query),
        history_tokens=ctx.history_tokens if uses_history else 0,
        context=[ContextEntry(session_id=cs.key, tokens=cs.tokens, filler=cs.is_filler) for cs in ctx.sessions]
        if uses_history
        else [],
        evidence=list(ctx.evidence) if uses_history else [],
        retrieved=list(retrieved or []),
        notes=list(ctx.notes) + list(notes or []),
    )
