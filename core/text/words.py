"""One tokenizer, one stopword list and one stemmer for every lexical feature in prefscope: BM25
retrieval, the ``demo:heuristic`` judge, evidence mentions and the demo models.

- :func:`words`: lower-cased runs of letters and digits; an inner hyphen or apostrophe joins
  ("batch-cook", "screen-shares", "don't", "maya's"); curly apostrophes count as straight ones.
  Keeping compounds whole reads better in the demo models' answers and gave BM25 the best hit@5
  on ``bench/retrieval.py`` (0.63, against 0.61 splitting them).
- :data:`STOPWORDS`: function words, chat filler ("thanks", "wondering", "tips"), the words of
  an answer format ("option", "true", "false") and preference verbs ("prefer", "love", "enjoy"):
  none of them says what a message is about.
- :func:`stem`: possessives and plurals folded ("restaurants" → restaurant, "stories" → story);
  deliberately no full stemmer, so a stem is still a readable word.
- :data:`NEGATORS`: the words that open a negative scope ("avoid", "never", "instead"); they are
  stopwords too.
- :func:`is_content` / :func:`content_words` / :func:`terms` / :func:`tokens`: a content word is at least
  :data:`MIN_LENGTH` characters once stemmed, not a stopword (before or after stemming) and not a
  contraction ("i'm", "don't").

Deterministic and dependency-free.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_WORD = re.compile(r"[a-z0-9]+(?:['\-][a-z0-9]+)*", re.I)
MIN_LENGTH = 3

_FUNCTION_AND_FILLER = frozenset(
    """
a about above after again against all almost already also always am an and any anyone anything are around as
at be because been before being below between both but by can could did do does doing done down during each
either even ever every everything few for from further get gets getting give gives go goes going got had has
have having he her here hers herself him himself his how however i i'm if in into is it its itself just kind
let lets like likely made make makes many may maybe me might more most mostly much must my myself need needs
never next no nor not nothing now of off often on once one only or other others our ours ourselves out over
own per perhaps please quite rather really same say says she should since so some someone something such sure
than that the their theirs them themselves then there these they thing things this those though through thus
to too under until up upon us use used using usual usually very via want wants was way ways we well were what
whatever when where whether which while who whom whose why will with within would yet you your yours yourself
yourselves
able actually advice basically bit come currently end especially feel feels felt fine find great hello help
hey honestly idea ideas keep keeps know last later little look looking lot lots manage new ok okay old put sort
recently see seem small big soon special start still take tell thank thanks think thinking tips today tomorrow
tonight try trying wondering celebrate deliberately first probably
day days week weeks month months year years time times
two three four five six seven eight nine ten twenty thirty forty fifty hundred
answer question option options following choose true false yes user assistant based best
good recommend suggest
prefer prefers preferred preferring preference love loves loved enjoy enjoys enjoyed dislike dislikes hate
thrive thrives seek seeks tend tends favour favours favor favors strictly whenever planning
""".split()
)
#: Words that open a negative scope ("skip the Loom videos", "no outdoor trip"); stopwords too.
NEGATORS = frozenset(
    """
not no never avoid avoids avoiding avoided refuse refuses refusing refused dislike dislikes disliked hate hates
hated skip skipping without instead except nor don't doesn't didn't won't isn't aren't can't cannot shouldn't
wouldn't rules ruled unlike against neither less fewer than
""".split()
)
STOPWORDS = _FUNCTION_AND_FILLER | NEGATORS


def word_matches(text: str) -> Iterator[re.Match[str]]:
    """The words of ``text`` as matches, with their original case and position."""
    return _WORD.finditer(text.replace("’", "'"))


def words(text: str) -> list[str]:
    """Every word of ``text``, lower-cased, stopwords included (positions matter to callers)."""
    return [m.group(0).lower() for m in word_matches(text)]


def stem(word: str) -> str:
    """Possessive and plural folding only: "maya's" → maya, "stories" → story, "trains" → train
    ("glass", "bus", "analysis" keep their s)."""
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    for suffix, keep in (("ies", "y"), ("sses", "ss")):
        if len(w) > 4 and w.endswith(suffix):
            return w[: -len(suffix)] + keep
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    return w


def is_content(word: str) -> bool:
    """Whether a lower-cased word says what a text is about (see the module docstring)."""
    if word in STOPWORDS:
        return False
    s = stem(word)
    return len(s) >= MIN_LENGTH and "'" not in s and s not in STOPWORDS


def content_words(text: str) -> list[str]:
    """The content words of ``text`` in order, lower-cased, not stemmed."""
    return [w for w in words(text) if is_content(w)]


def terms(text: str) -> list[str]:
    """The stems of the content words of ``text`` in order (BM25 terms, overlap sets)."""
    return [stem(w) for w in content_words(text)]


@dataclass(frozen=True)
class Token:
    surface: str
    stem: str
    #: Position among ALL words of the text, stopwords included (adjacency makes phrases).
    index: int


def tokens(text: str) -> list[Token]:
    """The content words of ``text`` with their stems and positions."""
    return [Token(w, stem(w), i) for i, w in enumerate(words(text)) if is_content(w)]


def content_stems(text: str) -> set[str]:
    return set(terms(text))
