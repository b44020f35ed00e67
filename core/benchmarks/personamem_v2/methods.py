"""PersonaMem-v2's prompts (``personamem-v2``, ``personamem-v2-user-roles``), as the official
``inference.py`` (bowen-upenn/PersonaMem-v2 @ 6a36975f, ``evaluate_row``; PROTOCOL.md §3.3-3.4)
builds and sends them. The wording of the three fixed strings is ours (the repository has no
licence: ``templates.toml``); the layout is the official one:

* the history, each message with its own role (the persona ``system`` message first), then the
  user query as a ``user`` message whose content is the query + the recall sentence;
* MCQ mode (``mcq`` queries): then one more message, **role ``system``**, holding the header, the
  options as ``A. text`` lines (in the stored, shuffled order) and the closing instruction;
* generative mode (``open`` queries): nothing after the user query, no system prompt of ours;
* only model and messages are sent (no temperature, no max_tokens).

``personamem-v2-user-roles`` is what the official client sends to Claude models: every ``system``
message becomes a ``user`` message and messages with empty content are dropped (no merging). A plan
is built before the model is known, so the choice is the method's, not the model name's.
"""

from __future__ import annotations

from core.benchmarks.personamem_v2.answers import ANSWER_FORMAT
from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import history_messages
from core.model import MCQ_LETTERS, Query
from core.plan import Message, PromptPlan

F = "personamem-v2"


def user_message(query: Query) -> str:
    """The query's content with the recall sentence appended (both modes)."""
    return query.text + prompts.text(F, "recall_sentence")


def mcq_instruction(options: list[str]) -> str:
    lines = "\n".join(prompts.text(F, "option_line", letter=MCQ_LETTERS[i], option=o) for i, o in enumerate(options))
    return prompts.text(F, "mcq_header") + lines + prompts.text(F, "mcq_footer")


def official_messages(history: list[Message], query: Query) -> list[Message]:
    """``history + [user_query]`` (+ the MCQ instruction as a trailing system message)."""
    messages = [*history, Message(role="user", content=user_message(query))]
    if query.kind == "mcq":
        messages.append(Message(role="system", content=mcq_instruction(list(query.options))))
    return messages


def as_claude_client(messages: list[Message]) -> list[Message]:
    """``query_llm.py`` for Claude: system -> user, empty contents dropped, nothing merged."""
    return [Message(role="user" if m.role == "system" else m.role, content=m.content) for m in messages if m.content]


def _plan(ctx: BuiltContext, query: Query, opts: MethodOptions, *, user_roles: bool) -> PromptPlan:
    name = "personamem-v2-user-roles" if user_roles else "personamem-v2"
    messages = official_messages(history_messages(ctx), query)
    if user_roles:
        messages = as_claude_client(messages)
    mode = "MCQ" if query.kind == "mcq" else "generative"
    step = make_step("answer", messages, f"PersonaMem-v2's {mode} prompt", opts.encoding)
    notes = [
        f"PersonaMem-v2 {mode} prompt as inference.py @6a36975f evaluate_row: history messages unchanged, then the "
        "user query + recall sentence"
        + (", then the MCQ instruction as a trailing system message" if query.kind == "mcq" else "")
        + "; model and messages only (no temperature, no max_tokens)",
        "wording ours, after the official prompt (the repository has no licence); layout official",
    ]
    if user_roles:
        notes.append("as the official client sends Claude models: system messages sent as user, empty ones dropped")
    if query.kind == "tf":
        notes.append("a true/false query: PersonaMem-v2 has none; sent as a generative prompt (ours)")
    if ctx.config != "full":
        notes.append(f"context {ctx.config!r}: PersonaMem-v2 itself always sends the whole history file")
    fmt = ANSWER_FORMAT if query.kind == "mcq" else None
    return make_plan(name, [step], ctx, query, notes=notes, answer_format_override=fmt)


def as_sent(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _plan(ctx, query, opts, user_roles=False)


def user_roles(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _plan(ctx, query, opts, user_roles=True)
