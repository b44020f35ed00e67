"""What every method builder shares: options, step/plan assembly with exact token counts."""

from __future__ import annotations

from collections.abc import Callable
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
    #: Engine of the embeddings (``Settings.embedding_backend``).
    embedding_backend: str = "onnx"
    #: Encoder threads: None every core; 1 when other work runs beside (a batch's other cells).
    embedding_threads: int | None = None
    #: An estimate: never embed. Without every vector cached, BM25 picks stand-in turns
    #: (``PromptPlan.retrieval_stand_in``) so the token counts are close.
    estimate_only: bool = False
    #: Progress of embedding (done, total) and a stop check between batches (a superseded prepare).
    embed_progress: Callable[[int, int], None] | None = None
    embed_stop: Callable[[], bool] | None = None
    embedding_cache: EmbeddingCache | None = None
    #: RAG: already retrieved turns (e.g. from a stored run) – skips retrieval.
    retrieved: list[RetrievedTurn] | None = None
    #: An Embedder to reuse across calls (keeps its model-call counter).
    embedder: Embedder | None = None
    encoding: str = DEFAULT_ENCODING
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Ranker:
    """How a method's retrieval ranks: ``method`` for ``rank_units``, and the name stored with it."""

    method: str
    embedder: Embedder | None
    name: str
    stand_in: bool = False


def ranker(opts: MethodOptions, texts: list[str]) -> Ranker:
    """The ranking for ``texts`` (every unit and the query) under ``opts``: the embedder, or BM25."""
    if opts.retriever != "embedding":
        return Ranker(opts.retriever, None, opts.retriever)
    from core.history.retrieval import Embedder

    embedder = opts.embedder or Embedder(
        opts.embedding_model,
        opts.embedding_cache,
        backend=opts.embedding_backend,
        threads=opts.embedding_threads,
        progress=opts.embed_progress,
        stop=opts.embed_stop,
    )
    if opts.estimate_only and embedder.missing(texts):
        return Ranker("bm25", None, "bm25", stand_in=True)
    return Ranker("embedding", embedder, embedder.id)


def stand_in_notes(how: Ranker) -> list[str]:
    if not how.stand_in:
        return []
    return ["estimate: BM25 picked the retrieved turns (the embeddings are not made yet; estimates never embed)"]


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
    ranked_by: Ranker | None = None,
) -> PromptPlan:
    notes = list(notes or [])
    steps = with_preference_step(steps, ctx, query, notes)
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
        notes=list(ctx.notes) + notes,
        retrieved_by=ranked_by.name if ranked_by else "",
        retrieval_stand_in=bool(ranked_by and ranked_by.stand_in),
    )


def preference_step(
    ctx: BuiltContext, query: Query, system: str | None = None, encoding: str = DEFAULT_ENCODING
) -> PromptStep | None:
    """PrefEval's preference turn: ``[system?, user: <preference>]``, the reply written live
    (``create_user_pref_message``; max 300 tokens, 5 in an MCQ run, temperature 0). None when the
    history holds no PrefEval explicit preference."""
    from core.methods.render import PREFERENCE_STEP, generated_reply_session

    session = next((cs.session for cs in ctx.sessions if generated_reply_session(cs.session)), None)
    if session is None:
        return None
    msgs = [Message(role="system", content=system)] if system else []
    msgs += [Message(role=t.role, content=t.content) for t in session.turns]
    step = make_step(PREFERENCE_STEP, msgs, "PrefEval: the model answers the bare preference", encoding)
    step.max_tokens = 5 if query.kind == "mcq" else 300
    step.temperature = 0.0
    step.purpose += f" (max {step.max_tokens} tokens, temperature 0)"
    return step


def with_preference_step(
    steps: list[PromptStep], ctx: BuiltContext, query: Query, notes: list[str]
) -> list[PromptStep]:
    """Prepend the preference step when a later step shows its reply and no step writes it."""
    from core.methods.render import PREFERENCE_STEP

    needed = any(PREFERENCE_STEP in s.needs() for s in steps)
    if not needed or any(s.name == PREFERENCE_STEP for s in steps):
        return steps
    step = preference_step(ctx, query, encoding=ctx.encoding)
    if step is None:
        return steps
    notes.append("the model first answers the bare preference (PrefEval's preference turn); that reply follows it")
    return [step, *steps]


def apply_given_outputs(
    plan: PromptPlan, outputs: dict[str, str], source: str, encoding: str = DEFAULT_ENCODING
) -> PromptPlan:
    """Fill ``{{output:name}}`` markers with replies given in advance (e.g. PrefEval's recorded
    ``response_to_pref`` from its SFT files) and drop the steps that would have written them. The
    last step is never dropped (its reply is the answer)."""
    from core.plan import fill

    given = {k: v for k, v in outputs.items() if k != plan.steps[-1].name}
    if not given:
        return plan
    steps = []
    for step in plan.steps:
        if step.name in given:
            continue
        used = {k: v for k, v in given.items() if k in step.needs()}
        if used:
            msgs = fill(step, used | {n: "{{output:" + n + "}}" for n in step.needs() if n not in used})
            step = step.model_copy(update={"messages": msgs, "tokens": count_messages(msgs, encoding)})
        steps.append(step)
    note = f"replies given in advance ({source}) for step(s) {', '.join(sorted(given))}: not generated"
    return plan.model_copy(update={"steps": steps, "notes": [*plan.notes, note]})
