"""``demo:*`` – deterministic scripted models that stream offline. Always labelled demo; cost 0.

They read only the messages (plus optional *hints*), so each behaves like a recognisable kind of
model on any prompt:

- ``demo:generic``   ignores the history: the query's hand-written generic reference answer (sample
  data), else a templated answer to the question alone (:mod:`core.providers.demo_prose`); it never
  quotes the history. MCQ/TF answers are picked deterministically from a hash of the question.
- ``demo:retrieval`` retrieves the earlier user turn most similar to the question (TF-IDF) among
  the turns a RAG prompt shows before the question, else among the user's earlier messages (or
  ``User:`` lines inside a single prompt), and only one that shares a word with what the question
  is about; it quotes that turn ("Since you mentioned …") before the generic answer, recalling
  without applying. Nothing relevant retrieved: the generic answer. MCQ → the option overlapping
  that turn most; TF → yes iff they overlap.
- ``demo:oracle``    an upper bound, given the gold preference through ``hints``; MCQ/TF → the
  gold answer when ``hints`` has it, else the option closest to the preference; an open question
  → the query's hand-written ``follows`` reference answer (sample data), else a templated answer
  that leans towards what the preference likes and avoids what it rules out, or with a gold answer
  but no preference (LoCoMo QA) that answer.
- ``demo:violator``  a lower bound, given the same gold: the ``violates`` reference answer, else a
  templated answer that puts forward what the preference rules out (or dismisses what it asks
  for), in the preference's own words; with a gold answer but no preference, a denial sharing no
  word with it; MCQ/TF → a wrong answer.
- ``demo:forgetful`` a short memory: it reads only the last :data:`FORGETFUL_SPAN_CHARS`
  characters of its prompt (~16K tokens, an effective context much shorter than a window). When a
  user turn there states the gold preference (half its content words or more; ``hints``) it answers
  as ``demo:oracle``, else as ``demo:generic``: evidence deep in a long history is lost, which is
  what a position sweep shows. Implicit expressions rarely share the words, so it misses those too.
- ``demo:overeager`` over-personalizes (:mod:`core.providers.demo_overeager`): the oracle where a
  gold preference applies, and every other answer (a restraint query, whose gold says the
  preference is irrelevant, or one without a preference) opens by dragging in the user's stored
  preference. On a restraint query ``demo:oracle`` answers the question alone.
- ``demo:flaky``     a generic answer that fails mid-stream (to show the error pane).
- ``demo:slow``      a generic answer at one eighth of the pace, after a pause.

Sampling: at temperature 0 or unset they are deterministic. At a temperature T > 0,
``demo:retrieval``, ``demo:forgetful``, ``demo:oracle`` and ``demo:violator`` answer as ``demo:generic`` would with
probability min(T, 1) / 2 (drawn afresh per call, like a real model's sampling), so repeated cells
differ and verdicts can flip across repeats.

Reference answers live in a query's ``meta.reference_answers`` (``follows`` / ``generic`` /
``violates``) and are used only by a step whose last user message asks the query itself. Such a
step also reads the question from ``hints`` rather than from the prompt, so a prompt's own
instructions ("Use DATE of CONVERSATION …", "within 300 words") never reach a template.

Hints: the provider declares ``capabilities.accepts_hints``, so the engine passes the run's
:class:`~core.providers.hints.Hints` (read once per run) as ``stream(spec, messages, hints=…)``.
The query kind is applied only to a step whose prompt actually asks the question (its options
appear in the last user message, or it asks yes/no / true/false), so a multi-step method's
summary step still gets prose. Without hints the format is detected from the prompt.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING

from core.history.tokens import count_tokens
from core.plan import Message
from core.providers import demo_analyst, demo_overeager
from core.providers import demo_phrases as dp
from core.providers import demo_prose as prose
from core.providers import demo_text as dt
from core.providers.base import Capabilities, ModelSpec
from core.providers.events import Delta, Done, Error, StreamEvent, Usage
from core.providers.hints import Hints

if TYPE_CHECKING:
    from core.ports import ResponseCache
    from core.settings import Settings

#: demo:forgetful reads this many characters from the end of its prompt (~16K tokens).
FORGETFUL_SPAN_CHARS = 64_000
DEFAULT_TOKENS_PER_S = 40.0  # slow enough to watch, and to cancel one with esc
MODELS: dict[str, str] = {
    "generic": "ignores the history (no-personalisation baseline)",
    "retrieval": "quotes the most similar earlier user turn, then answers generically",
    "forgetful": "applies the preference only if it is stated in the last ~16K tokens of its prompt",
    "oracle": "is given the gold preference (upper bound)",
    "violator": "is given the gold preference and goes against it (lower bound)",
    "overeager": "drags the user's stored preference into every answer, relevant or not (over-personalization)",
    "flaky": "fails mid-stream (error-pane demo)",
    "slow": "streams at 1/8 pace (cancellation demo)",
    "extractor": "scripted analyst for attribute extraction, verification and relevance",
}


class DemoProvider:
    name = "demo"
    capabilities = Capabilities(accepts_hints=True)

    def __init__(
        self,
        tokens_per_s: float = DEFAULT_TOKENS_PER_S,
        sleep: Callable[[float], Awaitable] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ):
        #: 0 or less means no pacing at all (tests).
        self.tokens_per_s = tokens_per_s
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()

    @classmethod
    def from_settings(cls, settings: Settings | None, response_cache: ResponseCache | None) -> DemoProvider:
        return cls(tokens_per_s=settings.demo_tokens_per_s if settings else DEFAULT_TOKENS_PER_S)

    @staticmethod
    def label(spec: ModelSpec) -> str:
        return f"{spec.id} (demo: {MODELS.get(spec.model, 'unknown demo model')})"

    def cost_usd(self, spec: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        return 0.0  # scripted and offline: free, and known to be

    def context_window(self, spec: ModelSpec) -> int | None:
        return None

    def _sampled(self, kind: str, temperature: float | None) -> str:
        """The behaviour this call samples (module docstring: "Sampling")."""
        if not temperature or kind not in ("retrieval", "forgetful", "oracle", "violator"):
            return kind
        return "generic" if self._rng.random() < min(temperature, 1.0) / 2 else kind

    async def stream(
        self, spec: ModelSpec, messages: list[Message], hints: Hints | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        kind = spec.model
        if kind not in MODELS:
            yield Error(
                f"unknown demo model {spec.id!r}; available: " + ", ".join(f"demo:{m}" for m in MODELS),
                kind="config",
                before_first_byte=True,
            )
            return
        kind = self._sampled(kind, spec.params.temperature)
        if kind == "forgetful":
            kind = "oracle" if states_preference(last_chars(messages, FORGETFUL_SPAN_CHARS), hints) else "generic"
        hints = hints or {}
        prompt = apply_hints(dt.read_prompt(messages), messages, hints)
        if kind in ("oracle", "violator") and not oracle_can_answer(prompt, hints):
            yield Error(
                f"demo:{kind} needs the query's gold preference or gold answer (engine hints); this query "
                "has neither — pick demo:generic or demo:retrieval",
                kind="config",
                before_first_byte=True,
            )
            return
        text = (
            (demo_analyst.reply(messages) if kind == "extractor" else None)
            or (demo_overeager.compose(prompt, messages, hints, _oracle) if kind == "overeager" else None)
            or reference_answer(kind, prompt, messages, hints)
            or compose(kind, prompt, hints)
        )
        pace = self.tokens_per_s / 8 if kind == "slow" else self.tokens_per_s
        pieces = dt.tokenize_for_stream(text)
        fail_at = len(pieces) * 3 // 5 if kind == "flaky" else None
        if kind == "slow" and pace > 0:
            await self._sleep(min(1.5, 20 / pace))
        streamed = 0
        start = self._clock()
        for i, piece in enumerate(pieces):
            if fail_at is not None and i == fail_at:
                yield Error(
                    "demo:flaky dropped the stream on purpose after "
                    f"{streamed} chars (a scripted failure to show the error pane); retry to see it again",
                    kind="transport",
                    before_first_byte=streamed == 0,
                )
                return
            # An absolute schedule, so sleep overheads do not add up: token i is due at start + (i+1)/pace.
            await self._sleep(max(0.0, start + (i + 1) / pace - self._clock()) if pace > 0 else 0)
            streamed += len(piece)
            yield Delta(piece)
        yield Usage(count_tokens("\n".join(m.content for m in messages)), count_tokens(text))
        yield Done("stop")


def last_chars(messages: list[Message], span: int) -> list[Message]:
    """The messages as a reader of only their last ``span`` characters sees them: earlier messages
    dropped, the one crossing the line cut to its tail (the last message is always kept whole)."""
    kept: list[Message] = []
    room = span
    for i, m in enumerate(reversed(messages)):
        if i == 0 or len(m.content) <= room:
            kept.append(m)
            room -= len(m.content)
        else:
            if room > 0:
                kept.append(Message(role=m.role, content=m.content[-room:]))
            break
    return kept[::-1]


def states_preference(messages: list[Message], hints: Hints | None) -> bool:
    """Some user turn of ``messages`` holds half or more of the gold preference's content words."""
    pref = str((hints or {}).get("gold_preference") or "")
    return bool(pref) and any(dt.overlap(pref, turn) >= 0.5 for turn in dt.read_prompt(messages).user_turns)


def apply_hints(prompt: dt.Prompt, messages: list[Message], hints: Hints) -> dt.Prompt:
    """Adopt the query's options and kind from hints, when this step's prompt asks that question, and
    for an open question its text (MCQ and true/false keep the prompt's, which seeds their picks)."""
    last = asking_text(messages).lower()
    opts = hints.get("options") or {}
    options = dict(opts) if isinstance(opts, dict) else dict(zip("ABCDEFGH", opts))
    kind = hints.get("answer_format") or hints.get("query_kind")
    if kind == "mcq" and options:
        shown = sum(1 for text in options.values() if text and text.lower()[:40] in last)
        if shown >= max(1, len(options) // 2):
            prompt.options = {k: v for k, v in options.items()}
            prompt.answer_format = "mcq"
    elif kind == "tf" and prompt.answer_format == "open":
        if any(w in last for w in ("yes", "true")):
            prompt.answer_format = "tf"
    if prompt.answer_format == "open" and asks_the_query(messages, hints):
        prompt.question = dp.clean_question(str(hints.get("question")))
    return prompt


def oracle_can_answer(prompt: dt.Prompt, hints: Hints) -> bool:
    # A gold answer is enough for any format: LoCoMo QA queries have one and no preference; a
    # restraint query's gold is that the preference is irrelevant: the question alone answers it.
    return bool(hints.get("gold_preference")) or _gold_text(hints) is not None or hints.get("restraint") is True


def _gold_text(hints: Hints) -> str | None:
    answer = hints.get("answer")
    text = "" if answer is None else str(answer).strip()
    return text or None


# ---- reference answers (hand-written, in the sample data) ----------------------------------------
#: Which reference answer each model streams; the others compose from templates.
_REFERENCE_OF = {
    "oracle": "follows",
    "violator": "violates",
    "generic": "generic",
    "flaky": "generic",
    "slow": "generic",
}


def asking_text(messages: list[Message]) -> str:
    """The last user message and any system message after it: where a prompt asks its question
    (PersonaMem-v2 puts the options in a trailing system message)."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if last_user is None:
        return ""
    return "\n".join(m.content for m in messages[last_user:] if m.role in ("user", "system"))


def asks_the_query(messages: list[Message], hints: Hints) -> bool:
    """This step's last user message asks the query itself (not a summary or critique step)."""
    question = " ".join(str(hints.get("question") or "").split()).lower()
    last = next((m.content for m in reversed(messages) if m.role == "user"), "")
    return bool(question) and question[:120] in " ".join(last.split()).lower()


def reference_answer(kind: str, prompt: dt.Prompt, messages: list[Message], hints: Hints) -> str | None:
    refs = hints.get("reference_answers") or {}
    if prompt.answer_format != "open" or not refs or not asks_the_query(messages, hints):
        return None
    if kind == "retrieval":
        generic, found = refs.get("generic"), retrieved_turn(prompt)
        if generic is None or found is None:
            return generic
        return f"{prose.retrieval_lead(*found)}\n\n{generic}"
    role = _REFERENCE_OF.get(kind)
    return refs.get(role) if role else None


# ---- behaviours ---------------------------------------------------------------------------------
def compose(kind: str, prompt: dt.Prompt, hints: Hints) -> str:
    if kind == "retrieval":
        return _retrieval(prompt)
    if kind == "oracle":
        return _oracle(prompt, hints)
    if kind == "violator":
        return _violator(prompt, hints)
    return _generic(prompt)


def _choice_text(prompt: dt.Prompt, letter: str, why: str) -> str:
    if prompt.choice_tags:  # follows the format the prompt asks for, as an instruction-tuned model would
        return f"<choice>{letter}</choice>"
    if prompt.final_answer_tag:  # PersonaMem: a reason, then the letter after the special token
        return f"{why}\n\n<final_answer>({letter.lower()})"
    return f"Answer: {letter}) {prompt.options.get(letter, '')}\n\n{why}"


def _tf_text(prompt: dt.Prompt, yes: bool, why: str) -> str:
    word = prompt.tf_words[0] if yes else prompt.tf_words[1]
    return f"Answer: {word}\n\n{why}"


def _generic(prompt: dt.Prompt) -> str:
    q = prompt.question
    if prompt.answer_format == "mcq" and prompt.options:
        letters = sorted(prompt.options)
        letter = letters[dt.stable_int(q, "mcq") % len(letters)]
        return _choice_text(prompt, letter, "This option is a sensible, widely applicable choice.")
    if prompt.answer_format == "tf":
        return _tf_text(prompt, dt.stable_int(q, "tf") % 2 == 0, "In general this seems reasonable.")
    return prose.generic(dp.read_question(q), prompt.short_answer)


def retrieved_turn(prompt: dt.Prompt) -> tuple[str, str] | None:
    """The user turn demo:retrieval retrieves for the question, and the words of the question that
    found it: among the turns a RAG prompt shows (what the plan retrieved), else every earlier user
    turn; the most similar one that shares a word with what the question is about, or None when
    none does (filler, small talk)."""
    pool = prompt.shown_turns or prompt.user_turns
    query = dt.focus(prompt.question + " " + " ".join(prompt.options.values()), pool)
    relevant = [t for t in pool if dt.topical(query, t)]
    match = dt.best_match(query, relevant)
    return None if match is None or match[1] <= 0 else (relevant[match[0]], query)


def _retrieval(prompt: dt.Prompt) -> str:
    found = retrieved_turn(prompt)
    if found is None:
        return _generic(prompt)
    turn, query = found
    lead = prose.retrieval_lead(turn, query)
    if prompt.answer_format == "mcq" and prompt.options:
        letter = max(sorted(prompt.options), key=lambda k: dt.overlap(prompt.options[k], turn))
        return _choice_text(prompt, letter, lead)
    if prompt.answer_format == "tf":
        statement = prompt.question + " " + " ".join(prompt.options.values())
        return _tf_text(prompt, dt.overlap(turn, statement) >= 0.2, lead)
    return prose.retrieval(dp.read_question(prompt.question), turn, query, prompt.short_answer)


def _truthy(value) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("yes", "true", "y", "t", "1"):
        return True
    if text in ("no", "false", "n", "f", "0"):
        return False
    return None


def _oracle(prompt: dt.Prompt, hints: Hints) -> str:
    if hints.get("restraint") is True and prompt.answer_format == "open":
        # the gold: the preference should not change this answer (its gold answer alone, if any)
        return _gold_text(hints) or _generic(prompt)
    pref = str(hints.get("gold_preference") or "")
    answer = hints.get("answer")
    lead = f'Keeping your preference in mind ("{prose.snippet(pref)}"), here is my answer.' if pref else ""
    if prompt.answer_format == "mcq" and prompt.options:
        letter = str(answer).strip().upper()[:1] if answer is not None else ""
        if letter not in prompt.options:
            letter = max(sorted(prompt.options), key=lambda k: dt.overlap(prompt.options[k], pref))
        return _choice_text(prompt, letter, lead or "This is the option aligned with your preference.")
    if prompt.answer_format == "tf":
        yes = _truthy(answer) if answer is not None else None
        if yes is None:
            statement = prompt.question + " " + " ".join(prompt.options.values())
            yes = dt.overlap(statement, pref) >= 0.2
        return _tf_text(prompt, yes, lead or "This matches your stated preference.")
    gold = _gold_text(hints)
    if not pref and gold is not None:
        return gold  # the gold answer alone: F1-scored QA (LoCoMo) rewards exactly that
    return prose.oracle(dp.read_question(prompt.question), pref)


def _violator(prompt: dt.Prompt, hints: Hints) -> str:
    """The oracle's mirror image: what the preference rules out, or the wrong option."""
    pref = str(hints.get("gold_preference") or "")
    answer = hints.get("answer")
    if prompt.answer_format == "mcq" and prompt.options:
        letters = sorted(prompt.options)
        gold = str(answer).strip().upper()[:1] if answer is not None else ""
        wrong = [k for k in letters if k != gold] or letters
        letter = min(wrong, key=lambda k: (dt.overlap(prompt.options[k], pref), k))
        return _choice_text(prompt, letter, "This option is the most popular choice.")
    if prompt.answer_format == "tf":
        yes = _truthy(answer) if answer is not None else None
        if yes is None:
            statement = prompt.question + " " + " ".join(prompt.options.values())
            yes = dt.overlap(statement, pref) >= 0.2
        return _tf_text(prompt, not yes, "That is what most people would do.")
    if not pref:  # a gold answer only (LoCoMo QA): deny it
        return prose.denial(_gold_text(hints) or "")
    return prose.violator(dp.read_question(prompt.question), pref)
