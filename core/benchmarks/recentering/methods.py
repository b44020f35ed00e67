"""Re-Centering pipeline (Re-Centering paper): extract attributes → select the relevant ones → generate;
and its generic counterpart (the query alone, no history, no attributes).

The paper's prompts (App. I.3, I.8) are not reproduced in its text; prefscope's wording follows
its stated criteria (templates.toml next to it).
"""

from __future__ import annotations

from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import question_text, transcript, transcript_aliases
from core.model import Query
from core.plan import Message, PromptPlan

F = "recentering"


def pipeline(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    q = question_text(query)
    aliases = transcript_aliases(ctx)
    steps = [
        make_step(
            "extract",
            [Message(role="user", content=prompts.text(F, "extract", transcript=transcript(ctx, aliases)))],
            "stage 1: attributes with reasoning, confidence, evidence turns",
            opts.encoding,
        ),
        make_step(
            "select",
            [Message(role="user", content=prompts.text(F, "select", query=q))],
            "stage 2: keep the attributes that would change the reply",
            opts.encoding,
        ),
        make_step(
            "generate",
            [Message(role="user", content=prompts.text(F, "generate", query=q))],
            "stage 3: personalised reply from the selected attributes",
            opts.encoding,
        ),
    ]
    notes = ["Re-Centering prompts are prefscope's own wording of the paper's criteria"]
    plan = make_plan("recentering", steps, ctx, query, notes=notes)
    # The transcript names sessions S1, S2 …; the table maps the extractor's citations back.
    plan.aliases = dict(aliases.real)
    return plan


def generic(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    msgs = [Message(role="user", content=question_text(query))]
    notes = ["generic baseline: the history is not sent"] if ctx.sessions else []
    return make_plan(
        "generic",
        [make_step("answer", msgs, "the query alone", opts.encoding)],
        ctx,
        query,
        notes=notes,
        uses_history=False,
    )
