"""Pure-Python text helpers for the demo models: prompt parsing, keywords, TF-IDF matching.
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
from core.text.words import is_content, stem, terms, word_matches

_OPTION = re.compile(r"^\s*\(?([A-H])[\).:]\s+(.+?)\s*$")
_SPEAKER = re.compile(r"^\s*(user|human|me)\s*:\s*", re.I)
_ASSISTANT = re.compile(r"^\s*(assistant|ai|bot|gpt)\s*:\s*", re.I)
#: Words after these are usually the nouns a question is about ("the canteen", "for Rome").
_NOUN_CUES = frozenset("a an the my our some any for about of with this these those your in near at on".split())
#: Content words that are never what a question is about.
_NOT_TOPICS = frozenset("another everyone someone anyone something anything everything long good best".split())
#: Words after these are usually verbs ("want to batch-cook", "can you sketch"): never keywords.
_VERB_CUES = frozenset(
    "to i you we they can could should would will shall please don't let's i've i'm i'll i'd we're we've".split()
)


def keywords(text: str, n: int = 3, among: set[str] | None = None) -> list[str]:
    """Up to ``n`` distinct nouns or names a question is most likely about, in order of appearance;
    with ``among``, only words whose stem is in it (the favoured side of a preference). A name
    keeps its capital ("Otley"); other words are lower-cased.

    No tagger offline, so a cheap guess at nouns: a word right after a determiner or preposition,
    a capitalised word inside a sentence (a place or a name) and a longer word score higher;
    adverbs (-ly), stop words, words in a verb's place ("to batch-cook", "you sketch"), an -ing
    word without a determiner ("redoing") and a modifier before another content word ("basic" in
    "basic Spanish": the last word of a run is the noun) are skipped.
    """
    scored: dict[str, tuple[int, int]] = {}
    surface: dict[str, str] = {}
    previous = ""
    found = list(word_matches(text))
    for i, m in enumerate(found):
        nxt = found[i + 1] if i + 1 < len(found) else None
        modifier = nxt is not None and not text[m.end() : nxt.start()].strip() and is_content(nxt.group(0).lower())
        raw = m.group(0)
        w = raw.lower()
        cue, verb_place, previous = previous in _NOUN_CUES, previous in _VERB_CUES, w
        if (
            verb_place
            or modifier
            or w in _NOT_TOPICS
            or (w.endswith("ing") and not cue)
            or not is_content(w)
            or not w[0].isalpha()
            or w.endswith("ly")
            or (among is not None and stem(w) not in among)
        ):
            continue
        before = text[max(0, m.start() - 2) : m.start()]
        name = raw[0].isupper() and m.start() > 0 and not any(c in before for c in ".?!\n")
        score = 2 * cue + 2 * name + (len(w) >= 6)
        if w not in scored or score > scored[w][0]:
            scored[w] = (score, scored.get(w, (0, m.start()))[1])
            surface[w] = raw if name else w
    best = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:n]
    return [surface[w] for w, _ in sorted(best, key=lambda kv: kv[1][1])]


def stable_int(*parts: str) -> int:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def overlap(a: str, b: str) -> float:
    """Share of ``a``'s content words that occur in ``b`` (0–1)."""
    wa, wb = set(terms(a)), set(terms(b))
    return len(wa & wb) / len(wa) if wa else 0.0


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
    turns += prefixed or [ln.strip() for ln in inline if ln.strip() and not _ASSISTANT.match(ln)]
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
        tf_words=tf_words,
        choice_tags="<choice>" in lowered,
        final_answer_tag="<final_answer>" in lowered,
    )


def tokenize_for_stream(text: str) -> list[str]:
    """Split text into word-sized pieces (leading spaces kept) that join back to ``text``."""
    return re.findall(r"\s*\S+|\s+$", text) or ([text] if text else [])
