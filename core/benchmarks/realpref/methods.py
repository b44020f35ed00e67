"""RealPref methods (RealPref paper §4 and App. C.2): zero-shot, reminder, few-shot CoT, RAG.

The history is the conversation itself; everything a method adds goes into the last user
message, before the question ("Before presenting the test question, add …").
"""

from __future__ import annotations

from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, Ranker, make_plan, make_step, ranker, stand_in_notes
from core.methods.render import conversation, question_text
from core.model import Query
from core.plan import PromptPlan, RetrievedTurn

F = "realpref"


def zero_shot(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    msgs = conversation(ctx, question_text(query))
    return make_plan("zero-shot", [make_step("answer", msgs, "history, then the question", opts.encoding)], ctx, query)


def reminder(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    final = prompts.text(F, "reminder") + "\n\n" + question_text(query)
    msgs = conversation(ctx, final)
    return make_plan(
        "reminder", [make_step("answer", msgs, "history, reminder sentence, question", opts.encoding)], ctx, query
    )


def fewshot_block() -> str:
    lines = [prompts.text(F, "fewshot_intro")]
    for n in (1, 2, 3):
        ex = prompts.template(F, f"fewshot_example_{n}")
        lines.append(
            prompts.text(
                F, "fewshot_example", n=n, preference=ex["preference"], query=ex["query"], response=ex["response"]
            )
        )
    lines.append(prompts.text(F, "fewshot_closing"))
    return "\n".join(lines)


def fewshot_cot(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    final = fewshot_block() + "\n\n" + question_text(query)
    msgs = conversation(ctx, final)
    notes = ["few-shot examples 2 and 3 are prefscope's own (the paper publishes only example 1)"]
    return make_plan(
        "fewshot-cot",
        [make_step("answer", msgs, "history, reminder + 3 worked examples, question", opts.encoding)],
        ctx,
        query,
        notes=notes,
    )


def retrieve_for(ctx: BuiltContext, query: Query, opts: MethodOptions) -> tuple[list[RetrievedTurn], Ranker]:
    if opts.retrieved is not None:
        return list(opts.retrieved), Ranker("given", None, "given")
    from core.history.retrieval import rank_units, turn_units

    units = turn_units(ctx)
    how = ranker(opts, [u.text for u in units] + [query.text])
    found = rank_units(
        query.text, units, method=how.method, k=opts.k, embedder=how.embedder, evidence_ids=ctx.evidence_ids
    )
    return found, how


def rag_block(ctx: BuiltContext, retrieved: list[RetrievedTurn]) -> str:
    sessions = {cs.id: cs.session for cs in ctx.sessions}
    parts = [prompts.text(F, "rag_intro", k=len(retrieved))]
    for n, r in enumerate(retrieved, 1):
        turns = sessions[r.session_id].turns
        user = turns[r.turn_index].content
        nxt = turns[r.turn_index + 1] if r.turn_index + 1 < len(turns) else None
        assistant = nxt.content if nxt is not None and nxt.role == "assistant" else ""
        parts.append(prompts.text(F, "rag_turn", n=n, user=user, assistant=assistant))
    parts.append(prompts.text(F, "rag_closing"))
    return "\n".join(parts)


def rag(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    retrieved, how = retrieve_for(ctx, query, opts)
    notes = [
        f"retrieval: {opts.retriever if opts.retrieved is None else 'given'}, top {opts.k}"
        + (
            f" ({how.name}; the paper used princeton-nlp/sup-simcse-roberta-large)"
            if opts.retriever == "embedding" and opts.retrieved is None
            else ""
        )
    ]
    notes += stand_in_notes(how)
    if len(retrieved) < opts.k:
        notes.append(f"only {len(retrieved)} turns available to retrieve (asked for {opts.k})")
    final = rag_block(ctx, retrieved) + "\n\n" + question_text(query)
    msgs = conversation(ctx, final)
    step = make_step(
        "answer", msgs, f"history, reminder + top-{len(retrieved)} retrieved turns, question", opts.encoding
    )
    return make_plan("rag", [step], ctx, query, notes=notes, retrieved=retrieved, ranked_by=how)
