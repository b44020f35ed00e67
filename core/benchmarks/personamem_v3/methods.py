"""PersonaMem-v3's chatbot-response prompt (``personamem-v3``): ``chatbot_response_prompt`` for the
personalised-response arm, ``chatbot_control_prompt`` for the restraint arms (``Query.meta
["restraint"]``), both verbatim from ``evaluation/prompts.py`` @ dc56d425 (MIT; ``templates.toml``),
rendered as the f-strings they are (``str.format``: ``{{`` is a literal brace).

* ``{prior}``: the prior-conversation block with one ``- {role}: {content}`` line per turn of the
  instance's ``prior_conversation``; empty without one;
* ``{history}``: the history block, whose content is **ours** (the notes do not give the official
  serialisation): the built context's events, grouped by app in the order first seen, each app a
  ``### <app>`` line then one compact JSON line per event, time-ordered; no profile preface and no
  token annotations (the official ``llm_longctx`` has both); empty when no event precedes the query;
* ``{user_query}``: the query text. One user message; no temperature or token limit of ours.

The context is time-masked by the importer's ``history_end`` (events before the query's ``ts``).
"""

from __future__ import annotations

from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.model import Query
from core.plan import Message, PromptPlan

F = "personamem-v3"


def template(key: str) -> str:
    return str(prompts.template(F, key)["text"])


def prior_text(turns: list[dict]) -> str:
    if not turns:
        return ""
    lines = "\n".join(template("prior_turn_line").format(role=t["role"], content=t["content"]) for t in turns)
    return template("prior_block").format(turns=lines)


def history_lines(ctx: BuiltContext) -> str:
    """Ours: per app (first-seen order) a ``### app`` header and its events' JSON lines."""
    by_app: dict[str, list[str]] = {}
    for cs in ctx.sessions:
        app = str(cs.session.meta.get("app") or "history")
        if cs.summary is not None:
            by_app.setdefault(app, []).append(str(cs.summary).strip())
        else:
            by_app.setdefault(app, []).extend(t.content for t in cs.session.turns if t.content.strip())
    return "\n".join(f"### {app}\n" + "\n".join(lines) for app, lines in by_app.items() if lines)


def prompt_text(query: Query, history: str) -> str:
    key = "chatbot_control" if query.meta.get("restraint") is True else "chatbot_response"
    prior = query.meta.get("prior_conversation")
    turns = [t for t in prior if isinstance(t, dict)] if isinstance(prior, list) else []
    block = template("history_block").format(history_block=history) if history.strip() else ""
    return template(key).format(prior=prior_text(turns), history=block, user_query=query.text)


def as_sent(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    restraint = query.meta.get("restraint") is True
    messages = [Message(role="user", content=prompt_text(query, history_lines(ctx)))]
    arm = "control (restraint)" if restraint else "personalised-response"
    step = make_step("answer", messages, f"PersonaMem-v3's chatbot {arm} prompt", opts.encoding)
    notes = [
        f"PersonaMem-v3 {'chatbot_control_prompt' if restraint else 'chatbot_response_prompt'} verbatim "
        "(evaluation/prompts.py @dc56d425, MIT), one user message",
        "ours, after the official prompt: history serialisation differs (events as compact JSON lines per app; "
        "no profile preface, no token annotations)",
    ]
    if ctx.config != "full":
        notes.append(f"context {ctx.config!r}: the official llm_longctx mode sends the whole time-masked history")
    return make_plan("personamem-v3", [step], ctx, query, notes=notes)
