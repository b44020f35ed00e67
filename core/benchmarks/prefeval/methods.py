"""PrefEval's generation methods, as its official code builds them (Zhao et al., ICLR 2025;
github.com/amazon-science/PrefEval @50795054; prompts verbatim in templates.toml next to it).

Claude message format (PROTOCOL §3.2): the config system prompt, the history as PrefEval sends it
(an explicit preference is followed by the model's own live reply to it, written in a first step
``preference``; implicit forms send their conversation), the inter turns of the prefeval-turns
context, then the question. Messages are never merged: PrefEval sends them as they are, so a
PrefEval history whose roles do not alternate is refused (another benchmark's history is merged by
role, with a note). ``method_options["prefeval_format"] = "gpt"`` gives PrefEval's OpenAI branch
(explicit open questions only): no system message (RAG keeps it), no temperature or max tokens.

* zero-shot: question + `` (Please respond within 300 words.)``; remind appends the reminder
  before the suffix; cot prepends the CoT examples (PROTOCOL §2.3).
* self-critic: answer (300 tokens) → critique of it (300) → revision (500), §3.5.
* rag: the full context, and the question prefixed with PrefEval's block of the top-k messages
  (§3.4); the scores are ours (PrefEval shipped SimCSE scores precomputed for its own runs).
* MCQ queries: the question + PrefEval's MCQ block instead of the suffix, an assistant prefill
  ``<choice>`` and 5 tokens per answer (§5.2–5.3).

Every step carries PrefEval's limits (temperature 0, max tokens) for the engine.
"""

from __future__ import annotations

from core.benchmarks.prefeval.answers import MCQ_ANSWER_FORMAT
from core.history.configs import ContextError
from core.history.prefeval_turns import POOL_ID
from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, Ranker, make_plan, make_step, preference_step, ranker, stand_in_notes
from core.methods.render import PREFERENCE_STEP, generated_reply_session, history_messages, merge_same_role
from core.model import MCQ_LETTERS, Query, Session
from core.plan import Message, PromptPlan, PromptStep, RetrievedTurn

F = "prefeval"
#: config.yaml max_gen_tokens / max_mcq_tokens; the self-critic revision gets 500.
GEN_TOKENS = 300
MCQ_TOKENS = 5
REVISION_TOKENS = 500
CRITIQUE_TOKENS = 300
PREFILL_NOTE = (
    "MCQ: Anthropic models get PrefEval's assistant prefill <choice>; OpenAI-compatible models are not "
    "sent it (PrefEval's MCQ has no GPT branch)"
)


def t(key: str, **values: object) -> str:
    return prompts.text(F, key, **values)


def answer_format_of(query: Query) -> str | None:
    return MCQ_ANSWER_FORMAT if query.kind == "mcq" else None


def mcq_block(query: Query) -> str:
    """``mcq_question_format`` with the options as ``{letters[i]}. {option}`` lines (shown order)."""
    lines = [
        prompts.fill(t("mcq_option_line"), **{"letters[i]": MCQ_LETTERS[i], "option": o})
        for i, o in enumerate(query.options)
    ]
    return t("mcq_question_format", formatted_options="\n".join(lines))


def question_prompt(query: Query, method: str) -> str:
    """The final user message (PROTOCOL §2.3): remind appends, cot prepends, then the word-limit
    suffix (open questions) or the MCQ block (MCQ)."""
    text = query.text
    if method == "remind":
        text += t("reminder")
    if method == "cot":
        text = t("cot_prompt") + text
    if query.kind == "mcq":
        return text + mcq_block(query)
    return text + t("word_limit_suffix", max_tokens=GEN_TOKENS)


def prefeval_messages(ctx: BuiltContext, tail: list[Message], notes: list[str]) -> list[Message]:
    """System prompt + history + ``tail``, unmerged. PrefEval's data always alternates user /
    assistant, so a break in a PrefEval history is an error; another benchmark's history (these
    methods on LoCoMo, CUPID …) is merged by role instead, with a note."""
    msgs = [Message(role="system", content=t("system_prompt")), *history_messages(ctx), *tail]
    bad = _first_break([m.role for m in msgs[1:]])
    if bad is None:
        return msgs
    if _is_prefeval(ctx):
        raise ContextError(
            f"PrefEval sends the history unmerged, but message {bad + 1} after the system prompt breaks "
            "the user/assistant alternation"
        )
    note = (
        "this history's roles do not alternate: consecutive same-role messages were merged (PrefEval's never need it)"
    )
    if note not in notes:
        notes.append(note)
    return merge_same_role(msgs)


def _first_break(roles: list[str]) -> int | None:
    for i, role in enumerate(roles):
        if role != ("user" if i % 2 == 0 else "assistant"):
            return i
    return None


def _is_prefeval(ctx: BuiltContext) -> bool:
    return any(cs.session.meta.get("prefeval_form") or cs.pool_id == POOL_ID for cs in ctx.sessions)


def _limits(step: PromptStep, max_tokens: int, prefill: str | None = None) -> PromptStep:
    step.max_tokens, step.temperature, step.prefill = max_tokens, 0.0, prefill
    step.purpose += f" (max {max_tokens} tokens, temperature 0" + (f", prefill {prefill})" if prefill else ")")
    return step


def _steps_with_preference(
    ctx: BuiltContext, query: Query, steps: list[PromptStep], opts: MethodOptions
) -> list[PromptStep]:
    if not any(PREFERENCE_STEP in s.needs() for s in steps):
        return steps
    pref = preference_step(ctx, query, t("system_prompt"), opts.encoding)
    return [pref, *steps] if pref is not None else steps


def _notes(query: Query) -> list[str]:
    return [PREFILL_NOTE] if query.kind == "mcq" else []


def _single(name: str, method: str, ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    notes = _notes(query)
    msgs = prefeval_messages(ctx, [Message(role="user", content=question_prompt(query, method))], notes)
    mcq = query.kind == "mcq"
    step = _limits(
        make_step("answer", msgs, f"PrefEval {method}: history, then the question", opts.encoding),
        MCQ_TOKENS if mcq else GEN_TOKENS,
        t("choice_prefill") if mcq else None,
    )
    steps = _steps_with_preference(ctx, query, [step], opts)
    if _gpt_format(ctx, query, opts, name):
        steps = _as_gpt(steps, keep_system=False, encoding=opts.encoding, notes=notes)
    return make_plan(name, steps, ctx, query, notes=notes, answer_format_override=answer_format_of(query))


def _gpt_format(ctx: BuiltContext, query: Query, opts: MethodOptions, method: str) -> bool:
    """``method_options["prefeval_format"]``: "claude" (default: the list format every PrefEval
    task has) or "gpt" (PrefEval's OpenAI branch: explicit open questions only)."""
    fmt = str(opts.extra.get("prefeval_format", "claude"))
    if fmt not in ("claude", "gpt"):
        raise ContextError(f"prefeval_format must be 'claude' or 'gpt', got {fmt!r}")
    if fmt == "gpt" and (query.kind == "mcq" or not any(generated_reply_session(cs.session) for cs in ctx.sessions)):
        raise ContextError(
            f"{method}: PrefEval's GPT format exists only for explicit preferences and open questions "
            "(its implicit and MCQ code has no GPT branch); use prefeval_format = 'claude'"
        )
    return fmt == "gpt"


def _as_gpt(steps: list[PromptStep], keep_system: bool, encoding: str, notes: list[str]) -> list[PromptStep]:
    """PrefEval's OpenAI calls: no system message (explicit RAG keeps it), neither temperature nor
    max_tokens sent (the model's own params decide)."""
    out = []
    for step in steps:
        keep = keep_system and step.name != PREFERENCE_STEP  # the GPT preference turn never has one
        msgs = [m for m in step.messages if keep or m.role != "system"]
        purpose = step.purpose.split(" (max ")[0]
        out.append(make_step(step.name, msgs, purpose, encoding))
    system = "system message kept (explicit RAG)" if keep_system else "no system message"
    notes.append(f"PrefEval GPT format: {system}; temperature and max_tokens are not sent, as PrefEval's OpenAI calls")
    return out


def zero_shot(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _single("prefeval-zero-shot", "zero-shot", ctx, query, opts)


def remind(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _single("prefeval-remind", "remind", ctx, query, opts)


def cot(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _single("prefeval-cot", "cot", ctx, query, opts)


def self_critic(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    """PROTOCOL §3.5 (open) and §5.3 (MCQ): answer, critique, revise."""
    mcq = query.kind == "mcq"
    notes = _notes(query)
    prefill = t("choice_prefill") if mcq else None
    first = _limits(
        make_step(
            "answer",
            prefeval_messages(ctx, [Message(role="user", content=question_prompt(query, "zero-shot"))], notes),
            "PrefEval self-critic: first answer (zero-shot)",
            opts.encoding,
        ),
        MCQ_TOKENS if mcq else GEN_TOKENS,
        prefill,
    )
    if mcq:
        explicit = any(generated_reply_session(cs.session) for cs in ctx.sessions)
        asked = query.text + mcq_block(query)
        answered = t("choice_prefill") + "{{output:answer}}"  # PrefEval prefixes the prefill to the reply
        critic = t("selfcritic_mcq_critic_request_explicit" if explicit else "selfcritic_mcq_critic_request_implicit")
        revision = t("selfcritic_mcq_revision_request") + mcq_block(query)
    else:
        asked, answered = query.text, "{{output:answer}}"  # the raw question, no suffix
        critic = t("selfcritic_critic_request")
        revision = t("selfcritic_revision_request", question=query.text)
    critique_tail = [
        Message(role="user", content=asked),
        Message(role="assistant", content=answered),
        Message(role="user", content=critic),
    ]
    second = _limits(
        make_step(
            "critique",
            prefeval_messages(ctx, critique_tail, notes),
            "PrefEval self-critic: critique the answer",
            opts.encoding,
        ),
        CRITIQUE_TOKENS,
    )
    revise_tail = [
        *critique_tail,
        Message(role="assistant", content="{{output:critique}}"),
        Message(role="user", content=revision),
    ]
    third = _limits(
        make_step("revise", prefeval_messages(ctx, revise_tail, notes), "PrefEval self-critic: revise", opts.encoding),
        MCQ_TOKENS if mcq else REVISION_TOKENS,
        prefill,
    )
    if opts.extra.get("prefeval_format", "claude") != "claude":
        raise ContextError("self-critic: PrefEval's self-critic has no GPT branch; use prefeval_format = 'claude'")
    steps = _steps_with_preference(ctx, query, [first, second, third], opts)
    return make_plan("self-critic", steps, ctx, query, notes=notes, answer_format_override=answer_format_of(query))


# -- RAG (PROTOCOL §3.4, §5.3) ------------------------------------------------------------------
def rag_candidates(ctx: BuiltContext) -> list[tuple[str, int, str]]:
    """PrefEval's retrieval candidates as (session id, turn index, text), in history order: an
    explicit preference is ``User: <preference>`` then ``Assistant: <its reply>``; every other
    message (implicit conversation, inter turns) is ``<role>: <content>``, role lower case."""
    return [c for cs in ctx.sessions for c in session_candidates(cs.session)]


def session_candidates(session: Session) -> list[tuple[str, int, str]]:
    """One session's candidates (:func:`rag_candidates`)."""
    turns = session.turns
    if generated_reply_session(session):
        pref = "".join(x.content for x in turns)
        return [
            (session.id, 0, t("rag_exchange_user_preference", preference=pref)),
            (session.id, len(turns), t("rag_exchange_assistant_preference_reply", pref_generation=_REPLY)),
        ]
    return [
        (session.id, i, t("rag_exchange_role_content", role=x.role, content=x.content)) for i, x in enumerate(turns)
    ]


def rag_texts(session: Session) -> list[str]:
    """The texts PrefEval's RAG embeds from one session (its generated reply is never embedded)."""
    return [text for _, _, text in session_candidates(session) if _REPLY not in text]


_REPLY = "{{output:" + PREFERENCE_STEP + "}}"


def rag_rank(ctx: BuiltContext, query: Query, opts: MethodOptions) -> tuple[list[RetrievedTurn], Ranker]:
    """Top-k candidates, stable by score. PrefEval ranks its recorded reply to the preference; here
    that reply is written at run time, so it takes the preference's score (just after it on ties)."""
    from core.history.retrieval import TurnUnit, rank_units

    items = rag_candidates(ctx)
    if len(items) < opts.k:
        raise ContextError(
            f"PrefEval's RAG needs exactly top-{opts.k} messages but this context has {len(items)} "
            "(raise --turns or lower --k)"
        )
    scored = [i for i, (_, _, text) in enumerate(items) if _REPLY not in text]
    units = [TurnUnit(items[i][0], items[i][0], i, items[i][2], "") for i in scored]
    how = ranker(opts, [u.text for u in units] + [query.text])
    ranked = rank_units(query.text, units, method=how.method, k=len(units), embedder=how.embedder)
    score = {r.turn_index: r.similarity for r in ranked}
    for i, (_, _, text) in enumerate(items):
        if _REPLY in text:
            score[i] = score.get(i - 1, 0.0)
    order = sorted(range(len(items)), key=lambda i: (-score[i], i))[: opts.k]
    evidence = ctx.evidence_ids
    filler = {cs.id for cs in ctx.sessions if cs.is_filler}
    return [
        RetrievedTurn(
            rank=r + 1,
            session_id=items[i][0],
            turn_index=items[i][1],
            similarity=score[i],
            is_evidence=items[i][0] in evidence and items[i][0] not in filler,
            text=items[i][2],
        )
        for r, i in enumerate(order)
    ], how


def rag_block(retrieved: list[RetrievedTurn], count_header: bool) -> str:
    """convert_top_k_sentences_to_msg: header, ``exchange n. <text>`` lines, footer."""
    head = (
        t("rag_context_header_count", **{"len(top_k_sentences)": len(retrieved)})
        if count_header
        else t("rag_context_header")
    )
    lines = "".join(t("rag_context_item", idx=n, sentence=r.text) for n, r in enumerate(retrieved, 1))
    return head + lines + t("rag_context_footer")


def rag(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    """The full context is still sent; the question gets the block of the top-k messages (no remind/cot)."""
    mcq = query.kind == "mcq"
    notes = _notes(query)
    retrieved, how = rag_rank(ctx, query, opts)
    explicit = any(generated_reply_session(cs.session) for cs in ctx.sessions)
    # PrefEval's header says "5" literally, except for implicit generation, which counts.
    block = rag_block(retrieved, count_header=not explicit and not mcq)
    tail = query.text + (mcq_block(query) if mcq else t("word_limit_suffix", max_tokens=GEN_TOKENS))
    msgs = prefeval_messages(ctx, [Message(role="user", content=block + tail)], notes)
    step = _limits(
        make_step("answer", msgs, f"PrefEval RAG: top-{len(retrieved)} messages, then the question", opts.encoding),
        MCQ_TOKENS if mcq else GEN_TOKENS,
        t("choice_prefill") if mcq else None,
    )
    notes.append(
        f"RAG scores: ours ({how.name}); PrefEval used precomputed princeton-nlp/sup-simcse-roberta-large scores"
        + (
            "; its reply to the preference, written at run time, is ranked with the preference's score"
            if explicit
            else ""
        )
    )
    notes += stand_in_notes(how)
    steps = _steps_with_preference(ctx, query, [step], opts)
    if _gpt_format(ctx, query, opts, "prefeval-rag"):
        steps = _as_gpt(steps, keep_system=True, encoding=opts.encoding, notes=notes)
    return make_plan(
        "prefeval-rag",
        steps,
        ctx,
        query,
        notes=notes,
        retrieved=retrieved,
        answer_format_override=answer_format_of(query),
        ranked_by=how,
    )
