"""InterPref inference paradigms (InterPref paper §4.3, Fig. 14, App. E): NP, TD, CoT, Workflow."""

from __future__ import annotations

from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import conversation, question_text
from core.model import Query
from core.plan import Message, PromptPlan

F = "interpref"


def no_prompt(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    msgs = conversation(ctx, question_text(query))
    return make_plan(
        "np", [make_step("answer", msgs, "history, then the query (no instructions)", opts.encoding)], ctx, query
    )


def task_description(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    msgs = conversation(ctx, question_text(query), system=prompts.text(F, "td_system"))
    notes = ["TD = Fig. 14's task description and instructions as the system prompt (output format left out)"]
    return make_plan(
        "td",
        [make_step("answer", msgs, "task-description system prompt, history, query", opts.encoding)],
        ctx,
        query,
        notes=notes,
    )


def chain_of_thought(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    system = prompts.text(F, "td_system") + "\n\n" + prompts.text(F, "cot_format")
    msgs = conversation(ctx, prompts.text(F, "cot_query", query=question_text(query)), system=system)
    notes = ["CoT = the full Fig. 14 prompt: TD plus 'persona:' reasoning before 'Answer:'"]
    return make_plan(
        "cot",
        [make_step("answer", msgs, "TD + persona-then-answer format, history, query", opts.encoding)],
        ctx,
        query,
        notes=notes,
    )


def workflow(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    q = question_text(query)
    first = conversation(ctx, prompts.text(F, "workflow_extract", query=q))
    second = [Message(role="user", content=prompts.text(F, "workflow_answer", query=q))]
    steps = [
        make_step("preferences", first, "history → relevant preferences + instructions for the reply", opts.encoding),
        make_step("answer", second, "answer from the extracted preferences (no history)", opts.encoding),
    ]
    notes = ["workflow prompts are prefscope's own wording of InterPref App. E (not published)"]
    return make_plan("workflow", steps, ctx, query, notes=notes)
