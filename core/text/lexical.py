"""Polarity and negation for the offline heuristic judge: adjacent-word phrases, favoured vs
disfavoured words of a preference, negation scopes in an answer. Words, stems and stopwords come
from :mod:`core.text.words`. No embeddings, no models: deterministic and fast.
"""

from __future__ import annotations

import re

from core.text.words import NEGATORS, content_stems, is_content, stem, tokens, words

#: "A over B", "A rather than B", "A instead of B": B is the disfavoured side.
CONTRAST = ("rather than", "instead of", "over", "not", "never", "except", "but not")
REASON_CUTS = re.compile(r"\b(?:because|since|so that|as it|as they|which makes|which means)\b", re.I)


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
                    if is_content(v):
                        out.add(stem(v))
    return out
