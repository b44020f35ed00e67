"""OP-Bench's answer prompts (``op-bench``, ``op-bench-no-memory``), as the MemOS frames of
``src/opbench/evaluation.py`` (yulinlp/OP-Bench @ 5104b27, MIT) send them: two messages,
``[system: ANSWER_SYSTEM_PROMPT, user: ANSWER_USER_PROMPT_WITH_MEMORY]`` with the memory block
(``_context``: ``Memories for user {person_name}:\\n\\n{memory}``) filled in, or the without-memory
user template (``--no-memory``, or a blank context); temperature 0.0, ``max_tokens`` 512.

Ours (deliberate): the memory is the built context's turns, one per line (for an OP-Bench user, the
task file's ``observation`` sentences), not the top-5 memories a MemOS search returns over the LoCoMo
conversation; the person's name comes from ``Query.meta["person"]`` (``user`` for other benchmarks).
The agent frames (one bare user message to a memory-system server) are not reproduced.
"""

from __future__ import annotations

from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.model import Query
from core.plan import Message, PromptPlan

F = "op-bench"
TEMPERATURE = 0.0
MAX_TOKENS = 512


def memory_text(ctx: BuiltContext) -> str:
    """The context's memory, one line per turn (a summarised session: its summary)."""
    lines: list[str] = []
    for cs in ctx.sessions:
        if cs.summary is not None:
            lines.append(str(cs.summary).strip())
        else:
            lines += [t.content.strip() for t in cs.session.turns if t.content.strip()]
    return "\n".join(lines)


def person_name(query: Query) -> str:
    person = query.meta.get("person")
    return person if isinstance(person, str) and person else "user"


def answer_messages(question: str, person: str, memory: str | None) -> list[Message]:
    """The two messages of ``evaluation.py`` ``generate``; no memory (or a blank one): the
    without-memory template."""
    system = prompts.text(F, "answer_system")
    if memory is None or not memory.strip():
        user = prompts.text(F, "answer_user_without_memory", question=question)
    else:
        context = prompts.text(F, "memory_context", person_name=person, memory=memory)
        user = prompts.text(F, "answer_user_with_memory", memory=context, question=question)
    return [Message(role="system", content=system), Message(role="user", content=user)]


def _answer(ctx: BuiltContext, query: Query, opts: MethodOptions, *, memory: bool) -> PromptPlan:
    name = "op-bench" if memory else "op-bench-no-memory"
    mem = memory_text(ctx) if memory else None
    messages = answer_messages(query.text, person_name(query), mem)
    step = make_step("answer", messages, "OP-Bench's answer prompt", opts.encoding)
    step.temperature, step.max_tokens = TEMPERATURE, MAX_TOKENS
    notes = [
        "OP-Bench answer prompt as src/opbench/evaluation.py @5104b27 (MemOS frame: system + user, "
        + (
            "memory block from the context's turns, ours; the official frame retrieves top-5 memories)"
            if memory
            else "no memory)"
        )
    ]
    if memory and not (mem or "").strip():
        notes.append("the context holds no memory: the without-memory template is sent (as the official code)")
    return make_plan(name, [step], ctx, query, notes=notes)


def with_memory(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _answer(ctx, query, opts, memory=True)


def without_memory(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _answer(ctx, query, opts, memory=False)
