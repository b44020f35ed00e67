"""PrefEval self-critic: answer, critique the answer against the user's preferences, revise.

PrefEval is not among the seed papers; the critique and revision prompts are prefscope's own
wording (templates/prefeval.toml). Every step keeps the history so the critique can consult it.
"""

from __future__ import annotations

from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import conversation, history_messages, merge_same_role, question_text
from core.model import Query
from core.plan import Message, PromptPlan

F = "prefeval"


def self_critic(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    q = question_text(query)
    first = conversation(ctx, q)
    history = history_messages(ctx)
    second = merge_same_role(
        history
        + [
            Message(role="user", content=q),
            Message(role="assistant", content="{{output:answer}}"),
            Message(role="user", content=prompts.text(F, "critique")),
        ]
    )
    third = second + [
        Message(role="assistant", content="{{output:critique}}"),
        Message(role="user", content=prompts.text(F, "revise")),
    ]
    steps = [
        make_step("answer", first, "history, query: first answer", opts.encoding),
        make_step("critique", second, "critique the first answer against the user's preferences", opts.encoding),
        make_step("revise", third, "revise the answer using the critique", opts.encoding),
    ]
    notes = ["self-critic prompts are prefscope's own (PrefEval is not in the seed papers)"]
    return make_plan("self-critic", steps, ctx, query, notes=notes)
