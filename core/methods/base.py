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
