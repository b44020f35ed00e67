"""Phrases the demo models may slot into their templates: what a question asks for (its topic, place,
names and intent) and what a preference likes or rules out, each a contiguous span of the text as
written, or nothing.

No tagger offline, so the rules are narrow on purpose: a phrase is taken only where the sentence's
shape says what it is ("some ___ you'd recommend", "avoid ___", "allergic to ___", "prefers ___ over
___"); where no rule fits, the templates do without it rather than guess at a single word. Words
lifted from a prompt's own instructions ("CONVERSATION", "300 words") never reach a template: the
question is read from the query text when the engine gives it (``hints``), and parenthesised
instructions are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.text.words import STOPWORDS, is_content

# ---- the question ---------------------------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[\"'“A-Z0-9])")
#: "(Please respond within 300 words.)": an instruction to the model, not part of the question.
_INSTRUCTION = re.compile(r"\s*\((?=[^)]*\b(?:respond|answer|words|please|reply)\b)[^)]*\)", re.I)
_WRITE = re.compile(
    r"^\s*(?:please\s+)?(?:(?:can|could|would)\s+you\s+(?:please\s+)?)?"
    r"(?:draft|write|compose|prepare|put together|reply|respond|rewrite|redraft|post)\b",
    re.I,
)
_RECALL_START = re.compile(
    r"^\s*(?:when|where|who|whom|whose|which|what|how|why|did|does|do|is|was|were|are|has|have|had|"
    r"according|remind me)\b",
    re.I,
)
#: A question that asks for help or suggestions rather than for a fact.
_ASKS_ADVICE = re.compile(
    r"\b(?:i|i'm|i'll|i've|i'd|me|my|we|we're|our|us|you|your|you'd|you'll|recommend\w*|suggest\w*|"
    r"what are some|any (?:ideas|tips|advice|suggestions)|best way|must-\w+)\b",
    re.I,
)
#: Words that end a noun phrase: pronouns, auxiliaries and the prepositions a question continues with.
_NP_END = frozenset(
    """
    i i'd i'll i'm i've you you'd you'll you're you've we we'd we're me my your our us they he she it him her
    that which who whom whose what when where while why how if so as than then
    should would could can will shall may might must do does did is are was were be been have has had
    in for to at near around during on from with by of about after before into over under within across
    and or but please known located based suitable famous available
    """.split()
)
#: Words a noun phrase does not end on ("the best", "really").
_WEAK_END = frozenset("the a an some any very really just definitely also best most more".split())
_LEADS = (
    r"what are some|what're some|any|can you (?:suggest|recommend)|could you (?:suggest|recommend)|"
    r"would you (?:suggest|recommend)|(?:recommendations|ideas|tips|suggestions|advice) (?:for|on|about)|"
    r"(?:can|could) you (?:sketch out|put together|draw up|plan|find|give me)(?: me)?|"
    r"suggest|recommend"
)
_AFTER_LEAD = re.compile(rf"\b(?:{_LEADS})\s+(?:some\s+|a few\s+|any\s+)?(?:of the\s+)?(?P<rest>.+)", re.I)
_WHAT_NOUN = re.compile(r"^\s*(?:what|which)\s+(?P<rest>.+)", re.I)
_WHERE = re.compile(r"\bwhere (?:should|can|could) (?:i|we) (?:plan to |go to )?(?P<verb>\w+)", re.I)
_WHERE_VERBS = frozenset("eat stay go sleep visit shop drink dine meet live study work".split())
_WRITE_OBJECT = re.compile(
    r"\b(?:draft|write|compose|prepare|put together|rewrite|redraft|post)\s+(?:up\s+)?(?P<rest>.+)", re.I
)
#: Heads too vague to stand alone ("any ideas for the lighting" is about the lighting).
_VAGUE = frozenset("ideas idea tips tip suggestions suggestion advice recommendations thoughts".split())
#: A place is taken only after words that put the user there ("visiting Rome", "a trip to Japan").
_PLACE = re.compile(
    r"\b(?:in|on|near|around|visiting|visit|(?:trip|going|heading|headed|travell?ing|moving|holiday|off) to)\s+"
    r"(?P<place>(?:the\s+)?[A-Z][\w'’-]*(?:\s+(?:of\s+|de\s+|del\s+|la\s+)?[A-Z][\w'’-]*)*)"
)
_NOT_PLACES = frozenset(
    """
    january february march april may june july august september october november december monday tuesday
    wednesday thursday friday saturday sunday christmas easter i i'm
    """.split()
)
_NAME = re.compile(r"(?<![\w'’])[A-Z][a-z][\w'’-]*(?:\s+[A-Z][a-z][\w'’-]*)*")
_NOT_NAMES = _NOT_PLACES | frozenset(
    "what when where who which how why did does do is was were are has have had".split()
)


@dataclass(frozen=True)
class Question:
    """What a templated answer may say about the question."""

    text: str
    #: "recall" (a fact from the past: LoCoMo), "write" (a draft) or "advice" (suggestions).
    intent: str
    #: What is asked for, as written ("must-try local restaurants", "places to eat"), or None.
    topic: str | None = None
    #: A place the question names ("Rome", "New Orleans"), or None.
    place: str | None = None
    #: People and things named in the question ("Jon", "Gina"), for a recall answer.
    names: tuple[str, ...] = ()


def clean_question(text: str) -> str:
    """The question without parenthesised instructions, on one line."""
    return " ".join(_INSTRUCTION.sub("", text).split())


def asked_sentence(text: str) -> str:
    """The sentence that asks (the last with a question mark, else the last one)."""
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()] or [text]
    return next((s for s in reversed(sentences) if "?" in s), sentences[-1])


def read_question(text: str) -> Question:
    text = clean_question(text)
    asked = asked_sentence(text)
    opening = _SENTENCE_END.split(text, maxsplit=1)[0]
    intent = _intent(asked, opening)
    if intent == "write":
        topic = _write_topic(asked) or _write_topic(opening)
    else:
        topic = _topic(asked) if intent == "advice" else None
    place = _place(text)
    if topic and place and re.search(rf"\b{re.escape(place)}\b", topic):
        place = None
    return Question(text=text, intent=intent, topic=topic, place=place, names=_names(asked))


def _intent(asked: str, opening: str = "") -> str:
    if _WRITE.match(asked) or _WRITE.match(opening):
        return "write"
    if _RECALL_START.match(asked) and (asked.lower().startswith("remind me") or not _ASKS_ADVICE.search(asked)):
        return "recall"
    return "advice"


def noun_phrase(rest: str, max_words: int = 6) -> str | None:
    """The noun phrase ``rest`` opens with, its article kept: words up to a pronoun, auxiliary,
    preposition or punctuation, ending on a content word; None when there is none."""
    taken: list[str] = []
    for m in re.finditer(r"[\w'’-]+|[^\w\s]", rest):
        word = m.group(0)
        name = word[:1].isupper() and word != "I"  # "my May update": a name, not a modal
        if not re.match(r"[\w'’-]", word) or (word.lower() in _NP_END and not name) or len(taken) == max_words:
            break
        taken.append(word)
    while taken and (taken[-1].lower() in _WEAK_END or taken[-1].lower().endswith("ly")):
        taken.pop()
    while taken and taken[0].lower() in ("some", "any"):
        taken.pop(0)
    if len(taken) < 2 and taken[:1] and taken[0].lower() in ("the", "a", "an"):
        return None
    if taken[:1] and taken[0].lower() in ("the", "a", "an"):  # kept: "ideas for a meal plan"
        taken[0] = taken[0].lower()
    if not taken or taken[-1].lower().endswith("ly"):
        return None
    return " ".join(taken)


def _topic(asked: str) -> str | None:
    where = _WHERE.search(asked)
    if where:
        verb = where.group("verb").lower()
        return f"places to {verb}" if verb in _WHERE_VERBS else None
    for pattern in (_AFTER_LEAD, _WHAT_NOUN):
        m = pattern.search(asked)
        phrase = noun_phrase(m.group("rest")) if m else None
        if phrase and phrase.lower() in _VAGUE:
            inner = re.search(r"\b(?:for|on|about)\s+(?P<rest>.+)", m.group("rest")) if m else None
            phrase = noun_phrase(inner.group("rest")) if inner else None
        if phrase:
            return phrase
    return None


def _write_topic(asked: str) -> str | None:
    m = _WRITE_OBJECT.search(asked)
    if not m:
        return None
    rest = re.sub(r"^(?:me|us)\s+", "", m.group("rest"))
    det = re.match(r"(?P<det>the|a|an|my|our)\s+", rest, re.I)
    phrase = noun_phrase(rest[det.end() :] if det else rest)
    if not phrase:
        return None
    owner = {"my": "your", "our": "your"}.get(det.group("det").lower(), det.group("det").lower()) if det else ""
    return f"{owner} {phrase}".strip()


def _place(text: str) -> str | None:
    for m in _PLACE.finditer(text):
        place = m.group("place").rstrip("'’")
        last = place.split()[-1].lower()
        if last not in _NOT_PLACES and not any(c.isdigit() for c in place):
            return place
    return None


def _names(asked: str) -> tuple[str, ...]:
    outside_quotes = re.sub(r"[\"“][^\"”]*[\"”]", " ", asked)
    found: list[str] = []
    for m in _NAME.finditer(outside_quotes):
        parts = re.sub(r"['’]s$", "", m.group(0)).split()
        opens = m.start() == 0 or outside_quotes[: m.start()].rstrip().endswith((".", "?", "!"))
        while parts and (parts[0].lower() in _NOT_NAMES or (opens and parts[0].lower() in STOPWORDS)):
            parts.pop(0)
        name = " ".join(parts)
        if not name or (m.start() == 0 and name == m.group(0) and len(parts) == 1):
            continue
        if name not in found:
            found.append(name)
    return tuple(found[:3])


def join_names(names: tuple[str, ...] | list[str]) -> str:
    """ "Jon", "Jon and Gina", "Jon, Gina and Door Dash"."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# ---- the preference -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Phrase:
    """A span of a preference and how it reads: a noun phrase ("spicy food"), a gerund phrase
    ("eating spicy food"), a verb phrase a rule asks for ("open with a one-line headline") or who
    the user is ("vegan" in "I'm a vegan")."""

    text: str
    kind: str  # "noun" | "gerund" | "verb" | "identity"
    #: Liked through "only …" ("only dines at places with a vegan menu"): the answer sticks to it.
    only: bool = False


#: Verbs a negator takes before what it rules out ("cannot eat spicy food" rules out spicy food).
_VERBS = r"(?:eat|consume|drink|have|take|use|book|go to|visit|like|enjoy|want|order|buy|fly|travel|dine at|dine)"
#: What says the words after it are ruled out.
_NEG = (
    rf"(?:(?:allergy|allergies|aversion|dislike|intolerance|phobia) (?:to|for|of)|prefers? not to {_VERBS}|"
    rf"avoids?|avoiding|refuses? to {_VERBS}|refuses?|dislikes?|hates?|detests?|can't stand|cannot stand|"
    rf"(?:not|never) (?:a )?(?:big |huge )?fan of|allergic to|intolerant (?:to|of)|averse to|"
    rf"uncomfortable(?: with)?|steers? clear of|stays? away from|"
    rf"(?:can't|cannot|can not|don't|doesn't|do not|does not|won't|will not|never)(?: {_VERBS})?|no)"
)
#: "A over B": B is ruled out when a liking verb opened the clause ("Prefers A over B").
_CONTRAST = r"(?:rather than|instead of|(?:far )?more than|over(?!-))"
_SUBJECT = r"(?:i|i'm|she|he|they|we|you)"
#: What says the words after it are wanted.
_POS = (
    r"(?:prefers?|loves?|enjoys?|follows?|adheres? to|sticks? to|thrives? on|seeks? out|would rather|"
    rf"{_SUBJECT} (?:really )?(?:likes?|wants?)|wants?(?= (?:a|an|any|the|to)\b)|"
    r"only (?:(?:eats?|dines?|books?|buys?|drinks?|uses?|reads?|stays?|visits?|shops?|orders?|travels?|learns?)"
    r"(?: (?:at|in|from|by))?|by|at|in|from)|"
    r"(?:i'm|i am|is|am) on|must|should|always|(?:has|have) (?=at most|at least|exactly|no more than))"
)
_IDENTITY = re.compile(r"\b(?:i'm|i am|she is|he is|she's|he's) an? (?P<what>[\w-]+)\b(?=\s+(?:and|who|,|\.)|$)", re.I)
#: What someone does, when it opens the preference or follows its subject ("Learns repair from …").
_ACT = r"(?:eats?|learns?|buys?|books?|travels?|reads?|listens? to|works?|uses?|shops?|cooks?|picks?|chooses?)"
_MARKER = re.compile(rf"\b(?:(?P<neg>{_NEG})|(?P<contrast>{_CONTRAST})|(?P<pos>{_POS})|(?P<act>{_ACT}))\b", re.I)
_ACT_PLACE = re.compile(r"(?:^|[;.]\s+|\b(?:i|she|he|they|we)\s+)$", re.I)
#: "a severe peanut allergy", "lactose intolerance": the words before it are ruled out.
_ALLERGEN = re.compile(
    r"\b(?:(?:an?|my|her|his)\s+(?:(?:severe|strong|serious|bad|mild)\s+)?(?P<what>[\w-]+(?:\s+(?:and\s+)?[\w-]+){0,3}?)"
    r"|(?P<one>[\w-]+))\s+(?:allergy|allergies|intolerance)\b(?!\s+(?:to|for|of)\b)",
    re.I,
)
#: Reasons are no preference: "because …", "due to …" up to the end of their clause.
_REASON = re.compile(
    r"^(?:since|because|as)\b[^,]*,|\b(?:because|since|due to|as (?:it|they|she|he|i)|so that)\b.*?(?=[;.!?]|\s[–—-]\s|$)",
    re.I,
)
#: Where a phrase ends: a reason, a turn to what is wanted, a dash, a semicolon or a sentence end.
_PHRASE_END = re.compile(
    rf"\s+(?:because|since|due to|as (?:i|she|he|they|it)|so that|especially|but|while|whereas|where|when|"
    rf"even (?:when|if|though)|and \w+s (?:them|it|him|her))\b|,?\s+and\s+(?:(?:i|she|he|they|will|would|always|so)\b|(?={_NEG}\b|{_POS}\b))|"
    rf",\s*(?:so|because|since|which|as|but|while|even)\b|,\s*(?={_NEG}\b)|\s[–—-]\s|[;:!?]|\.(?!m\.)(?=\s+(?-i:[A-Z])|\s*$)|\s\(",
    re.I,
)
_CLAUSE_END = re.compile(r"[;:.!?]|\s[–—-]\s")
#: Brackets and dashed asides ("— coach excursions, walking tours —") are examples, not the preference.
_ASIDES = re.compile(r"\s*\([^)]*\)|\s[–—]\s[^–—]*\s[–—](?=\s)")
_LEADING = re.compile(r"^(?:(?:any|all|the|some)\s+|(?:at|in|on|to|from|by)\s+(?!most\b|least\b)(?=\w))", re.I)
_POSSESSIVE = re.compile(r"^(?:her|his|their|my)\s+(?=\w)", re.I)
_PREPOSITION = re.compile(r"^(?:at|in|on|to|from|by|with|for)\s", re.I)
#: Bare negators: "not on the slides" names a place for something, not a thing to rule out.
_BARE_NEGATORS = frozenset({"not", "no", "never"})
#: A phrase opening with one of these points elsewhere or is a clause of its own.
_PRONOUN_START = frozenset("it them this that these those him her me must should can will would".split())
MAX_PHRASE_WORDS = 14


def preference_phrases(preference: str) -> tuple[list[Phrase], list[Phrase]]:
    """(liked phrases, ruled-out phrases) of a preference, in order, each a span of its text."""
    text = _ASIDES.sub("", " ".join(preference.split()))
    reasons = [(m.start(), m.end()) for m in _REASON.finditer(text)]
    ruled_out = [_allergen(m) for m in _ALLERGEN.finditer(text) if not _inside(m.start(), reasons)]
    liked = [Phrase(m.group("what"), "identity") for m in _IDENTITY.finditer(text)]
    taken_to = 0  # markers inside a phrase already taken ("places that do not have …") are its words
    liking_clause = False
    for m in _MARKER.finditer(text):
        if _CLAUSE_END.search(text, taken_to, m.start()):
            liking_clause = False
        if m.start() < taken_to or _inside(m.start(), reasons):
            continue
        marker = m.group(0).lower()
        if m.group("act") and not _ACT_PLACE.search(text[: m.start()]):
            continue
        if m.group("pos") and marker in ("must", "should", "always") and _MARKER.match(text, m.end() + 1):
            continue  # "must avoid …": the negator that follows says it
        if m.group("contrast") and not liking_clause:
            continue  # "prioritise A over B" inside something ruled out is no preference for A
        phrase, end = _phrase_after(text, m.end(), marker)
        if phrase is None:
            continue
        taken_to = end
        if m.group("pos") or m.group("act"):
            liking_clause = True
            liked.append(phrase)
        else:
            liking_clause = liking_clause and bool(m.group("contrast"))
            ruled_out.append(phrase)
    seen: set[str] = set()
    return _unique(liked, seen), _unique(ruled_out, seen)


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= at < b for a, b in spans)


def _allergen(m: re.Match[str]) -> Phrase:
    return Phrase(f"anything with {m.group('what') or m.group('one')}", "noun")


def _unique(phrases: list[Phrase], seen: set[str]) -> list[Phrase]:
    out = []
    for p in phrases:
        if p.text.lower() not in seen and not p.text.lower().startswith("anything with a "):
            seen.add(p.text.lower())
            out.append(p)
    return out


def _phrase_after(text: str, start: int, marker: str) -> tuple[Phrase | None, int]:
    """The phrase a marker opens, and where it ends in ``text``."""
    rest = text[start:]
    end = _PHRASE_END.search(rest)
    contrast = re.search(rf"\s+{_CONTRAST}\s+", rest[: end.start() if end else len(rest)])
    stop = contrast.start() if contrast else end.start() if end else len(rest)
    raw = rest[:stop].strip(" ,")
    if marker in _BARE_NEGATORS and _PREPOSITION.match(raw):
        return None, start + stop
    words = _LEADING.sub("", _LEADING.sub("", _POSSESSIVE.sub("a ", raw))).split()
    only = marker.startswith("only")
    if words and words[0].lower() == "only":  # "travels only by sleeper train"
        only, words = True, _LEADING.sub("", " ".join(words[1:])).split()
    if len(words) > MAX_PHRASE_WORDS:  # a long one: up to its last "and" or comma within the limit
        head = " ".join(words[:MAX_PHRASE_WORDS])
        cuts = [m.start() for m in re.finditer(r",|\s+and\s+", head)] or [
            m.start() for m in re.finditer(r"\s+(?:with|when|for)\s+", head)
        ]
        words = head[: cuts[-1]].split() if cuts else []
    while words and (words[-1].lower().endswith("ly") or words[-1].lower() in _WEAK_END):
        words.pop()
    span = " ".join(words).strip(" ,")
    if not span or words[0].lower() in _PRONOUN_START or not any(is_content(w.lower().strip(",")) for w in words):
        return None, start + stop
    if marker in ("must", "should", "always", "would rather"):
        return Phrase(span, "verb"), start + stop
    first = words[0].lower()
    kind = "gerund" if first.endswith("ing") and is_content(first) else "noun"
    only = only or bool(re.match(r"(?:at most|at least|exactly|no more than)\b", span))
    return Phrase(span, kind, only=only), start + stop


def second_person(text: str) -> str:
    """A first-person preference as said back to its user ("I avoid X" → "you avoid X")."""
    swaps = {"i": "you", "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll", "me": "you"}
    swaps |= {"my": "your", "mine": "yours", "myself": "yourself", "am": "are"}
    return re.sub(
        r"\b(?:i'm|i've|i'd|i'll|i|me|my|mine|myself|am)\b", lambda m: swaps[m.group(0).lower()], text, flags=re.I
    )
