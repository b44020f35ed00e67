"""Polarity and negation for the offline heuristic judge: adjacent-word phrases, favoured vs
disfavoured words of a preference, and which words an answer puts forward, steers away from or
only cites. Words, stems and stopwords come from :mod:`core.text.words`. No embeddings, no
models: deterministic and fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.text.words import NEGATORS, content_stems, is_content, stem, tokens, word_matches, words

#: "A over B", "A rather than B", "A instead of B", "A far more than B": B is the disfavoured side.
COMPARATIVES = ("rather than", "instead of", "more than", "over", "except", "but not")
#: … and a negated verb inside a clause: "follows a vegan diet and refuses to consume honey".
CONTRAST = (*COMPARATIVES, "not", "never", "cannot", "can't", "don't", "doesn't", "won't", "refuse", "refuses")
#: Words that rule out what goes with them wherever they stand in a clause ("a severe peanut allergy").
AVERSIONS = frozenset("allergy allergies allergic aversion averse intolerance intolerant phobia uncomfortable".split())
#: What may come before the verb of a preference said of someone: "I strictly avoid …", "I have an
#: intense dislike for …", "She is not a fan of …".
_LEAD_IN = frozenset(
    """
    i i'm we she he they am is are do does have has had get gets feel feels a an very really strongly strictly
    absolutely completely generally always usually definitely totally truly much severe strong intense extreme
    """.split()
)
REASON_CUTS = re.compile(r"\b(?:because|since|so that|as it|as they|which makes|which means)\b", re.I)
#: Where a negative clause turns positive: "Dislikes X, and would rather Y" (not "rather than").
TURN = re.compile(
    r"\b(?:and|but|yet)\s+(?:(?:would|she'd|he'd|they'd|i'd)\s+)?(?:rather|instead|prefers?)\b(?!\s+than)", re.I
)
#: An answer referring to the user's own words or preference ("since you dislike", "your
#: preference"); "if you like / want" is filler, not a reference.
USER_CUES = re.compile(
    r"(?<!\bif )\b(?:you(?:'ve| have)? (?:mentioned|said|told|noted|prefer|like|love|enjoy|dislike|hate|avoid)|"
    r"you(?:'re| are) not (?:a )?fan|your (?:preference|taste|dislike)|since you|given your|as you(?:'ve)? (?:said|mentioned)|"
    r"you don't (?:like|enjoy|want)|you(?:'d| would) rather|based on what you)\b",
    re.I,
)
#: An answer waving something away, to the end of its clause ("no need to stick to …").
DISMISSALS = re.compile(
    r"\b(?:no need (?:to|for)|don't bother (?:with|to)|not necessary to|forget about|don't worry about)\b"
    r"(?P<what>[^,;.!?]*)",
    re.I,
)
#: A quoted passage (the user's words, the preference) is cited, not recommended.
QUOTE = re.compile(r'["“]([^"“”]*)["”]')


def phrases(text: str) -> dict[tuple[str, str], str]:
    """Adjacent content-word pairs (stems) -> their surface form ("sleeper train")."""
    toks = tokens(text)
    return {(a.stem, b.stem): f"{a.surface} {b.surface}" for a, b in zip(toks, toks[1:]) if b.index == a.index + 1}


def clauses(text: str) -> list[str]:
    """Sentences and ;/: -separated parts (brackets kept inside their clause), each cut before its
    stated reason ("because …"); a clause that opens with one ("Since X, …") loses only the opener."""
    parts = re.split(r"[.;:!?\n]+|\s[–—-]\s", text.replace("(", " ").replace(")", " "))
    out = []
    for p in parts:
        p = p.strip()
        if REASON_CUTS.match(p) and "," in p:  # "Since the reorganisation, updates open with …": an opener
            p = p.split(",", 1)[1]
        p = REASON_CUTS.split(p)[0].strip()
        if p:
            out.append(p)
    return out


def split_polarity(preference: str) -> tuple[set[str], set[str]]:
    """(favoured stems, disfavoured stems) of a preference text.

    In each clause a contrast marker ("over", "rather than", "instead of", "not", "never", "can't")
    splits favoured (before) from disfavoured (after); a clause that opens with a negator, after
    its subject if it names one ("Avoids …", "I strictly avoid …", "I'm allergic to …"), or names
    an allergy or aversion without comparing, is disfavoured as a whole, and so is a comma-separated
    item that opens with "no", "not", "never" or "without" ("…, no contractions or casual phrasing, …",
    "…, with no exclamation marks"). Stems on both sides of one clause ("bouldering" in "indoor
    bouldering over outdoor bouldering") are dropped as neutral; a stem favoured in one clause and
    disfavoured in another is ambiguous and dropped too.
    """
    favoured: set[str] = set()
    disfavoured: set[str] = set()
    neutral: set[str] = set()
    for clause in clauses(preference):
        low = clause.lower()
        if _opens_negative(low) or _aversion_only(low):
            turn = TURN.search(clause)
            negative = clause[: turn.start()] if turn else clause
            # "an aversion to places that put trends over quality": what they are compared with is neither side
            comparison = re.search(rf"\b(?:{'|'.join(COMPARATIVES)})\b", negative, re.I)
            if comparison:
                neutral |= content_stems(negative[comparison.end() :])
                negative = negative[: comparison.start()]
            disfavoured |= content_stems(negative)
            if not turn:
                continue
            clause = clause[turn.end() :]  # "…, and would rather keep things loose": favoured again
            low = clause.lower()
        else:  # "title in the salutation, no contractions, a formal closing": the "no" item only
            clause, items = _negative_items(clause)
            disfavoured |= items
            low = clause.lower()
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


def _opens_negative(low: str) -> bool:
    """The clause's verb, after its subject and softeners, rules out what follows ("Avoids …",
    "I strictly avoid …", "I'm allergic to …")."""
    for w in words(low)[:6]:
        if w in NEGATORS or w in AVERSIONS:
            return True
        if w not in _LEAD_IN:
            return False
    return False


#: What opens a ruled-out item of a list ("…, no contractions or casual phrasing, …").
_ITEM_NEGATORS = frozenset("no not never without".split())
#: … possibly after "with" / "and" ("…, with no exclamation marks").
_ITEM_OPENERS = _ITEM_NEGATORS | {"with", "and", "but", "or"}


def _negative_items(clause: str) -> tuple[str, set[str]]:
    """(the clause without its comma-separated items that open with "no" / "never" / …, their stems)."""
    items = re.split(r",\s*(?![^()]*\))", clause)
    negative = [i for i in items if (w := words(i.lower())[:2]) and w[0] in _ITEM_OPENERS and _ITEM_NEGATORS & set(w)]
    if not negative or len(negative) == len(items):
        return clause, set()
    rest = ", ".join(i for i in items if i not in negative)
    return rest, set().union(*(content_stems(i) for i in negative))


def _aversion_only(low: str) -> bool:
    """An allergy or aversion with no comparison in the clause: everything in it is ruled out."""
    return bool(AVERSIONS & set(words(low))) and not any(re.search(rf"\b{m}\b", low) for m in COMPARATIVES)


def _flatten_brackets(text: str) -> str:
    """Commas inside brackets do not end a clause: "avoid X (A, B, C) from Y"."""
    return re.sub(r"\(([^()]*)\)", lambda m: " " + m.group(1).replace(",", " ") + " ", text)


@dataclass
class Stances:
    """The content stems of an answer by what the answer does with them."""

    #: Outside any negation or quotation: the answer puts them forward.
    recommended: set[str] = field(default_factory=set)
    #: In a negator's scope: "skip the Loom videos", "no outdoor trip", "instead of recorded updates".
    avoided: set[str] = field(default_factory=set)
    #: Quoted or after a reference to the user ("since you dislike bookings", "your preference: …").
    cited: set[str] = field(default_factory=set)
    #: Waved away: "there is no need to stick to a halal diet".
    dismissed: set[str] = field(default_factory=set)


def stances(text: str, window: int = 15) -> Stances:
    """Read each word of an answer once, in its place (a word both avoided and recommended is
    recommended). A negator's scope runs to the end of its clause (comma, semicolon, sentence end
    or "but"), at most ``window`` words, and covers "prefer A to / over B" for B; a reference to
    the user runs to the end of its clause, or of its line when a colon follows it."""
    out = Stances()
    for line in text.splitlines():
        for quoted in QUOTE.findall(line):
            out.cited |= content_stems(quoted)
        line = QUOTE.sub(" , ", line)
        for waved in DISMISSALS.finditer(line):
            out.dismissed |= content_stems(waved.group("what"))
        cue = USER_CUES.search(line)
        colon = re.match(r"[^.!?:]{0,40}:", line[cue.end() :]) if cue else None
        if cue and colon:  # "fit your preference: Dislikes …" restates it
            out.cited |= content_stems(line[cue.end() + colon.end() :])
            line = line[: cue.end() + colon.end()]
        for clause in re.split(r"[.,;:!?]+|\bbut\b", _flatten_brackets(line), flags=re.I):
            _read_clause(clause, window, out)
    out.avoided -= out.recommended
    out.cited -= out.recommended
    out.dismissed -= out.recommended
    return out


def _read_clause(clause: str, window: int, out: Stances) -> None:
    cue = USER_CUES.search(clause)
    cited_from = cue.end() if cue else len(clause)
    negated_until = -1
    seen_prefer = False
    for i, m in enumerate(word_matches(clause)):
        w = m.group(0).lower()
        if is_content(w):
            where = out.cited if m.start() >= cited_from else out.avoided if i <= negated_until else out.recommended
            where.add(stem(w))
        seen_prefer = seen_prefer or w.startswith("prefer")
        if w in NEGATORS or (w in ("to", "over") and seen_prefer):
            negated_until = i + window
