"""PersonaMem's MCQ prompt (``personamem``, ``personamem-merged``), as the official
``inference_standalone_openai.py`` (bowen-upenn/PersonaMem @ 041d82ac, ``Evaluation.query_llm``)
sends it (its answer reading, ``extract_answer``, is in answers.py):

* messages = the history, each turn its own message with its own role (system included, nothing
  merged or trimmed), then one user message ``question + "\\n\\n" + instruction + "\\n\\n" +
  all_options``, where ``all_options`` is the CSV cell as the file has it (a printed list);
* only ``model`` and ``messages`` are sent: no temperature, no max_tokens, no system prompt of ours;
* ``personamem-merged`` is what the script sends to a model whose name contains the letter ``o``
  (``gpt-4o``, ``o1``, …: ``convert_role_system_to_user``): each system message is carried into the
  next message as ``[System]: <text>\\n``, and consecutive same-role messages are joined with ``\\n``.
  A plan is built before the model is known, so the choice is the method's, not the model name's.

With PersonaMem's own users and ``--context full`` the history is exactly ``context[:end_index]``
(the importer cuts sessions at every end index). Other configurations, filler and summaries are
prefscope's: the plan notes say so. A summarised session is one user message, as for other methods.
"""

from __future__ import annotations

from core.benchmarks.personamem.answers import ANSWER_FORMAT
from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import history_messages
from core.model import MCQ_LETTERS, Query
from core.plan import Message, PromptPlan

F = "personamem"


def all_options_text(query: Query) -> str:
    """The options as the model sees them: the CSV cell verbatim, or, for a query from elsewhere,
    the same printed-list form built from its options."""
    raw = query.meta.get("all_options")
    if isinstance(raw, str):
        return raw
    return str([f"({MCQ_LETTERS[i].lower()}) {o}" for i, o in enumerate(query.options)])


def final_user_message(query: Query) -> str:
    return prompts.text(
        F,
        "user_message",
        question=query.text,
        instructions=prompts.text(F, "mcq_instruction"),
        all_options=all_options_text(query),
    )


def merge_system_into_next(messages: list[Message]) -> list[Message]:
    """``convert_role_system_to_user``: system text carried into the next message, same roles joined."""
    out: list[Message] = []
    carried = ""
    for m in messages:
        if m.role == "system":
            carried += prompts.text(F, "system_merge_prefix", content=m.content)
            continue
        content = carried + m.content
        carried = ""
        if out and out[-1].role == m.role:
            out[-1] = Message(role=m.role, content=out[-1].content + "\n" + content)
        else:
            out.append(Message(role=m.role, content=content))
    return out


def _plan(ctx: BuiltContext, query: Query, opts: MethodOptions, *, merged: bool) -> PromptPlan:
    name = "personamem-merged" if merged else "personamem"
    messages = [*history_messages(ctx), Message(role="user", content=final_user_message(query))]
    if merged:
        messages = merge_system_into_next(messages)
    purpose = "PersonaMem's MCQ prompt" + (
        " (system messages merged, as sent to models named with 'o')" if merged else ""
    )
    step = make_step("answer", messages, purpose, opts.encoding)
    notes = [
        "PersonaMem prompt as inference_standalone_openai.py @041d82ac: history messages unchanged, then "
        "question + instruction + all_options; model and messages only (no temperature, no max_tokens)"
    ]
    if merged:
        notes.append(
            "system messages carried into the next message and same roles joined, as for models named with 'o'"
        )
    if query.kind != "mcq":
        notes.append("not an MCQ query: PersonaMem's instruction still asks for (a)-(d) (ours: sent as asked)")
    if ctx.config != "full":
        notes.append(f"context {ctx.config!r}: PersonaMem itself always sends the full context up to the question")
    return make_plan(name, [step], ctx, query, notes=notes, answer_format_override=ANSWER_FORMAT)


def as_sent(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _plan(ctx, query, opts, merged=False)


def merged(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _plan(ctx, query, opts, merged=True)
