"""Pure-Python text helpers for the demo models: prompt parsing, relevance, TF-IDF matching.
Words, stopwords and stems come from :mod:`core.text.words`, the tokenizer BM25 and the heuristic
judge use too.

Everything here is deterministic (no ``hash()``, which Python salts per process).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass, field

from core.plan import Message
from core.text.words import terms

_OPTION = re.compile(r"^\s*\(?([A-H])[\).:]\s+(.+?)\s*$")
#: A turn shown inside a prompt: "User: …", and as RAG blocks list them ("- user: …" in RealPref's,
#: "exchange 2. user: …" in PrefEval's).
_TURN_MARK = r"^\s*(?:[-*•]\s*|exchange\s+\d+\.\s*|\d+[.)]\s*)?"
_SPEAKER = re.compile(_TURN_MARK + r"(user|human|me)\s*:\s*", re.I)
_ASSISTANT = re.compile(_TURN_MARK + r"(assistant|ai|bot|gpt)\s*:\s*", re.I)
#: A prompt's own scaffolding, not something anyone said: "DATE: …", "CONVERSATION:", "Context turn 1:",
#: "[shares a photo of …]".
_SCAFFOLD = re.compile(r"^\s*(?:[A-Z][A-Z ]{2,}:|[^:]{0,40}:\s*$|#|\[[^\]]*\]\s*$)")
#: "write an answer in the form of a short phrase" (LoCoMo), "Short answer:".
_SHORT = re.compile(r"\bshort (?:phrase|answer)\b", re.I)
#: Words of a request that say nothing about its subject: sharing only these (or an adverb such as
#: "properly") is no relevance.
_REQUEST_WORDS = frozenset(
    """
    recommend recommendation suggest suggestion try must-try visit visiting want like good best great top local
    option idea tip help know think soon next month week day time thing way really new please answer question
    """.split()
)


def stable_int(*parts: str) -> int:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def overlap(a: str, b: str) -> float:
    """Share of ``a``'s content words that occur in ``b`` (0–1)."""
    wa, wb = set(terms(a)), set(terms(b))
    return len(wa & wb) / len(wa) if wa else 0.0


def topical(query: str, text: str) -> bool:
    """``text`` shares a word with what ``query`` is about (not just "recommend" or "good")."""
    about = {t for t in terms(query) if t not in _REQUEST_WORDS and not t.endswith("ly")}
    return bool(about & set(terms(text)))


def focus(query: str, pool: list[str], share: float = 0.2) -> str:
    """``query`` without the words most of a long ``pool`` shares (the speakers' names in a LoCoMo
    conversation): what is left says which turn is about the question."""
    if len(pool) < 20:
        return query
    df = Counter(t for text in pool for t in set(terms(text)))
    common = {t for t, n in df.items() if n > share * len(pool)}
    return " ".join(w for w in query.split() if not set(terms(w)) & common)


def best_match(query: str, candidates: list[str]) -> tuple[int, float] | None:
    """Index and cosine score of the candidate most similar to ``query`` under TF-IDF."""
    docs = [Counter(terms(c)) for c in candidates]
    if not docs:
        return None
    n = len(docs)
    df: Counter = Counter()
    for d in docs:
        df.update(d.keys())
    idf = {w: math.log((1 + n) / (1 + df[w])) + 1.0 for w in df}

    def vec(counts: Counter) -> dict[str, float]:
        return {w: c * idf.get(w, math.log(1 + n) + 1.0) for w, c in counts.items()}

    q = vec(Counter(terms(query)))
    qn = math.sqrt(sum(v * v for v in q.values())) or 1.0
    best: tuple[int, float] | None = None
    for i, d in enumerate(docs):
        v = vec(d)
        dot = sum(q[w] * v[w] for w in q if w in v)
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        score = dot / (qn * norm)
        if best is None or score > best[1] + 1e-12:
            best = (i, score)
    return best


@dataclass
class Prompt:
    """What the demo models read from the messages."""

    question: str
    options: dict[str, str] = field(default_factory=dict)
    answer_format: str = "open"  # open | mcq | tf
    #: Earlier things the user said (separate messages, or ``User:`` lines inside one prompt).
    user_turns: list[str] = field(default_factory=list)
    #: The user turns the last message shows before the question as ``User:`` lines: a RAG prompt's
    #: retrieved turns.
    shown_turns: list[str] = field(default_factory=list)
    #: The prompt asks for a short phrase (LoCoMo's QA prompt).
    short_answer: bool = False
    tf_words: tuple[str, str] = ("Yes", "No")
    #: The prompt asks for the answer as ``<choice>X</choice>`` (PrefEval's MCQ format).
    choice_tags: bool = False
    #: The prompt asks for the answer after ``<final_answer>`` (PersonaMem's MCQ format).
    final_answer_tag: bool = False


def read_prompt(messages: list[Message], answer_format: str | None = None) -> Prompt:
    users = [m.content for m in messages if m.role == "user"]
    last = users[-1] if users else ""
    earlier = users[:-1]
    options: dict[str, str] = {}
    body_lines: list[str] = []
    for line in last.splitlines():
        m = _OPTION.match(line)
        if m:
            options[m.group(1)] = m.group(2)
        else:
            body_lines.append(line)
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", "\n".join(body_lines)) if p.strip()]
    question = next((p for p in reversed(paragraphs) if "?" in p), paragraphs[-1] if paragraphs else "")
    context = [p for p in paragraphs if p is not question]
    turns: list[str] = []
    for text in earlier:
        turns += [ln.strip() for ln in text.splitlines() if ln.strip() and not _ASSISTANT.match(ln)]
    inline = [ln for p in context for ln in p.splitlines()]
    prefixed = [_SPEAKER.sub("", ln).strip() for ln in inline if _SPEAKER.match(ln)]
    said = [ln.strip() for ln in inline if ln.strip() and not _ASSISTANT.match(ln) and not _SCAFFOLD.match(ln)]
    turns += prefixed or said
    lowered = last.lower()
    # Only the question and what follows it can ask for yes/no: history quoted before it (a RAG
    # prompt's retrieved turns, "a yes/no decision for him") must not turn an open question into one.
    asked = "\n\n".join(paragraphs[next((i for i, p in enumerate(paragraphs) if p is question), 0) :]).lower()
    fmt = answer_format
    if fmt is None:
        if len(options) >= 2:
            fmt = "mcq"
        elif re.search(r"\b(true or false|yes or no|yes/no|true/false)\b", asked):
            fmt = "tf"
        else:
            fmt = "open"
    tf_words = ("True", "False") if "true" in asked and "false" in asked and "yes" not in asked else ("Yes", "No")
    return Prompt(
        question=question,
        options=options,
        answer_format=fmt,
        user_turns=turns,
        shown_turns=prefixed,
        short_answer=bool(_SHORT.search(asked)),
        tf_words=tf_words,
        choice_tags="<choice>" in lowered,
        final_answer_tag="<final_answer>" in lowered,
    )


def tokenize_for_stream(text: str) -> list[str]:
    """Split text into word-sized pieces (leading spaces kept) that join back to ``text``."""
    return re.findall(r"\s*\S+|\s+$", text) or ([text] if text else [])
