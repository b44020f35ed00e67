"""Word-level text features for the offline heuristic judge: content words, adjacent-word
phrases, negation scopes. No embeddings, no models: deterministic and fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STOPWORDS = frozenset(
    """
a about above after again against all almost also am an and any are around as at be because been before being
below between both but by can could did do does doing done down during each either even every few for from
further get gets getting give gives go goes going got had has have having he her here hers herself him himself
his how however i if in into is it its itself just kind let lets like likely made make makes many may me might
more most much must my myself need needs now of off often on once one only or other others our ours ourselves
out over own per perhaps please quite rather really same say says she should since so some something such than
that the their theirs them themselves then there these they thing things this those though through thus to too
under until up upon us use used using very via want wants was way we well were what whatever when where whether
which while who whom whose why will with within would yet you your yours yourself yourselves feel feels felt
keep keeps lot lots good great new day days time times sure okay ok sort actually especially usually
prefer prefers preferred preferring preference love loves loved enjoy enjoys enjoyed thrive thrives seek seeks
deliberately tend tends favour favours favor favors always mostly strictly whenever
""".split()
)

#: Words that open a negative scope in a preference or a response.
NEGATORS = frozenset(
    """
not no never avoid avoids avoiding avoided refuse refuses refusing refused dislike dislikes disliked hate hates
hated skip skipping without instead except nor don't doesn't didn't won't isn't aren't can't cannot shouldn't
wouldn't rules ruled unlike against neither less fewer than
""".split()
)
#: "A over B", "A rather than B", "A instead of B": B is the disfavoured side.
CONTRAST = ("rather than", "instead of", "over", "not", "never", "except", "but not")
REASON_CUTS = re.compile(r"\b(?:because|since|so that|as it|as they|which makes|which means)\b", re.I)

_WORD = re.compile(r"[a-z][a-z0-9'\-]*[a-z0-9]|[a-z]")


def stem(word: str) -> str:
    w = word.strip("'-")
    if w.endswith("'s"):
        w = w[:-2]
    for suffix, keep in (("ies", "y"), ("sses", "ss")):
        if len(w) > 4 and w.endswith(suffix):
            return w[: -len(suffix)] + keep
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    return w


@dataclass(frozen=True)
class Token:
    surface: str
    stem: str
    index: int  # position among ALL words of the text (for adjacency)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def tokens(text: str) -> list[Token]:
    """Content-word tokens with their position among all words."""
    out = []
    for i, w in enumerate(words(text)):
        if w in STOPWORDS or w in NEGATORS or len(w) < 3:
            continue
        out.append(Token(w, stem(w), i))
    return out


def content_stems(text: str) -> set[str]:
    return {t.stem for t in tokens(text)}


def phrases(text: str) -> dict[tuple[str, str], str]:
    """Adjacent content-word pairs (stems) -> their surface form ("sleeper train")."""
    toks = tokens(text)
    return {(a.stem, b.stem): f"{a.surface} {b.surface}" for a, b in zip(toks, toks[1:]) if b.index == a.index + 1}


def clauses(text: str) -> list[str]:
    """Sentences and ;/: -separated parts (brackets kept inside their clause), each cut before its
    stated reason ("because …")."""
    parts = re.split(r"[.;:!?\n]+|\s[–—-]\s", text.replace("(", " ").replace(")", " "))
    out = []
    for p in parts:
        p = REASON_CUTS.split(p)[0].strip()
        if p:
            out.append(p)
    return out


def split_polarity(preference: str) -> tuple[set[str], set[str]]:
    """(favoured stems, disfavoured stems) of a preference text.

    In each clause a contrast marker ("over", "rather than", "instead of", "not", "never")
    splits favoured (before) from disfavoured (after); a clause that opens with a negator
    ("Avoids …", "Refuses …", "Never …") is disfavoured as a whole. Stems on both sides of one
    clause ("bouldering" in "indoor bouldering over outdoor bouldering") are dropped as neutral;
    a stem favoured in one clause and disfavoured in another is ambiguous and dropped too.
    """
    favoured: set[str] = set()
    disfavoured: set[str] = set()
    neutral: set[str] = set()
    for clause in clauses(preference):
        low = clause.lower()
        first = words(low)[:2]
        if first and first[0] in NEGATORS:
            disfavoured |= content_stems(clause)
            continue
        cut = None
        for marker in CONTRAST:
            m = re.search(rf"\b{re.escape(marker)}\b", low)
            if m and (cut is None or m.start() < cut[0]):
                cut = (m.start(), m.end())
        if cut is None:
            favoured |= content_stems(clause)
            continue
        before, after = content_stems(clause[: cut[0]]), content_stems(clause[cut[1] :])
        both = before & after
        neutral |= both
        favoured |= before - both
        disfavoured |= after - both
    neutral |= favoured & disfavoured
    return favoured - neutral, disfavoured - neutral


def _flatten_brackets(text: str) -> str:
    """Commas inside brackets do not end a clause: "avoid X (A, B, C) from Y"."""
    return re.sub(r"\(([^()]*)\)", lambda m: " " + m.group(1).replace(",", " ") + " ", text)


def negated_stems(text: str, window: int = 15) -> set[str]:
    """Stems in the scope of a negator: from the negator to the end of its clause (comma,
    semicolon, sentence end or "but"), at most ``window`` words ("skip the Loom videos", "no
    outdoor trip", "instead of recorded updates", "better than X", and "prefer A to B" for B)."""
    out: set[str] = set()
    for clause in re.split(r"[.,;:!?\n]+|\bbut\b", _flatten_brackets(text), flags=re.I):
        ws = words(clause)
        seen_prefer = False
        for i, w in enumerate(ws):
            seen_prefer = seen_prefer or w.startswith("prefer")
            if w in NEGATORS or (w == "to" and seen_prefer):
                for v in ws[i + 1 : i + 1 + window]:
                    if v not in STOPWORDS and v not in NEGATORS and len(v) >= 3:
                        out.add(stem(v))
    return out
