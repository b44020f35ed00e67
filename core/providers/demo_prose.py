"""The demo models' templated answers to open questions, for data without hand-written reference
answers (anything imported). Each reads as written prose whatever the data: a template takes only
the phrases :mod:`core.providers.demo_phrases` read whole from the question or the preference, and
does without where there is none.

The shape follows what is asked (``Question.intent``): suggestions ("advice"), a first draft
("write"), or a fact from the conversation ("recall", as in LoCoMo, where a prompt asking for a
short phrase gets one). What each model does with it:

- generic: the question only; it never quotes the history and never refers to the user;
- retrieval: the generic answer after one quoted turn it retrieved (chosen in :mod:`core.providers.demo`);
- oracle: leans towards what the preference likes and steers away from what it rules out, then
  restates the preference;
- violator: puts forward what the preference rules out, or dismisses what it asks for, in the
  preference's own words, and never mentions the user.
"""

from __future__ import annotations

import re

from core.providers import demo_phrases as dp
from core.providers import demo_text as dt

_SUGGESTIONS = [
    "Here are a few general suggestions for {x}:",
    "Some ideas for {x} that work for most people:",
    "A few pointers on {x}:",
]
_SUGGESTIONS_BARE = [
    "Here are a few general suggestions:",
    "Some ideas that work for most people:",
    "A few general pointers:",
]
_BULLETS = [
    "Shortlist two or three well-reviewed options and compare them before you commit.",
    "Check the practical details early: cost, timing and how easy each option is to get to.",
    "Start with the most popular choice; you can branch out once you have tried it.",
    "Read a few recent reviews, since things change from season to season.",
    "Leave some slack in case the first choice does not work out.",
]
_CLOSERS = [
    "Let me know if you want more detail on any of these.",
    "Happy to narrow this down if you share more about what you need.",
    "I can expand on any of these if that helps.",
]
_DRAFT_BODY = (
    "Hello everyone,\n\n"
    "A quick note with the main points. Please read it through and reply if anything is unclear.\n\n"
    "- What is changing, and from when.\n"
    "- What it means for the work day to day.\n"
    "- Who to ask with questions.\n\n"
    "Thanks,\nBest regards"
)
#: Heads of a liked phrase that say how to choose rather than what to choose ("a strict vegan diet").
_REGIMES = re.compile(r"\b(?:diet|diets|lifestyle|regime|flavou?rs|cuisine|cooking|techniques|style)\b", re.I)
RECALL_UNKNOWN_SHORT = "I don't know."
#: demo:violator's answers to a question with a gold answer and no preference (LoCoMo QA): it denies
#: what the gold says, in words that share none with it.
_DENIALS = ("I don't think that ever came up.", "Nothing I know of.", "No idea.")


def pick(options: list[str], *seed: str) -> str:
    return options[dt.stable_int(*seed) % len(options)]


def ends(text: str) -> str:
    """``text`` as a sentence: a full stop unless it ends on one ("3 a.m.")."""
    return text if text.endswith((".", "!", "?")) else text + "."


def denial(gold: str) -> str:
    """The first denial that shares no word with ``gold``."""
    said = set(re.findall(r"[a-z0-9']+", gold.lower()))
    return next((d for d in _DENIALS if not said & set(re.findall(r"[a-z0-9']+", d.lower()))), _DENIALS[-1])


# ---- generic ------------------------------------------------------------------------------------
def generic(question: dp.Question, short: bool) -> str:
    if question.intent == "recall":
        return _recall_unknown(question, short)
    if question.intent == "write":
        return _draft(question, [])
    return _suggestions(question, [])


def _recall_unknown(question: dp.Question, short: bool) -> str:
    if short:
        return RECALL_UNKNOWN_SHORT
    about = f" about {dp.join_names(question.names)}" if question.names else ""
    return (
        f"I'm not sure. I don't have the details{about} that would answer this; if you can tell me "
        "where it came up, I'll take another look."
    )


def _subject(question: dp.Question) -> str | None:
    if question.topic and question.place:
        return f"{question.topic} in {question.place}"
    if question.topic:
        return question.topic
    return f"your time in {question.place}" if question.place else None


def _suggestions(question: dp.Question, personal: list[str], reason: str = "") -> str:
    """An opener on what is asked, ``personal`` bullets first, general ones to make three, a closer."""
    q = question.text
    subject = _subject(question)
    opener = pick(_SUGGESTIONS, q).format(x=subject) if subject else pick(_SUGGESTIONS_BARE, q)
    start = dt.stable_int(q, "b")
    general = [_BULLETS[(start + i) % len(_BULLETS)] for i in range(max(1, 3 - len(personal)))]
    bullets = personal + general
    lines = [opener, "", *(f"{i}. {b}" for i, b in enumerate(bullets, 1)), "", pick(_CLOSERS, q, "close")]
    return "\n".join(([reason, ""] if reason else []) + lines)


def _draft(question: dp.Question, notes: list[str]) -> str:
    """A first draft: what it does first (``notes``), then the draft itself."""
    topic = question.topic
    if topic is None:
        opener = "Here is a first draft you can adapt"
    elif topic.split()[0].lower() in ("a", "an"):
        opener = f"Here is {topic} you can adapt"
    else:
        opener = f"Here is {topic} as a first draft"
    opener = f"{opener}. {' '.join(notes)}" if notes else f"{opener}:"
    return f"{opener}\n\n{_DRAFT_BODY}"


# ---- retrieval ----------------------------------------------------------------------------------
_SAID = re.compile(r'^(?P<who>[A-Z][\w .\'’-]{0,40}?) said,? ["“](?P<text>.*?)["”]?$')


def snippet(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


def quoted(turn: str, question: str) -> tuple[str | None, str]:
    """(who said it when the turn names its speaker, what to quote of it): the turn from its start
    when the words that found it are there, else its sentence that best matches the question
    ("Hey Gina! … Lost my job as a banker yesterday …" is quoted from "Lost")."""
    said = _SAID.match(turn.strip())
    who, text = (said.group("who"), said.group("text")) if said else (None, turn)
    if dt.topical(question, snippet(text)):
        return who, text
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s.strip()] or [text]
    best = dt.best_match(question, sentences)
    return who, sentences[best[0]] if best and best[1] > 0 else text


def retrieval_lead(turn: str, question: str) -> str:
    who, text = quoted(turn, question)
    if who:
        return f'Earlier, {who} said: "{snippet(text)}"'
    asked = text.rstrip().endswith("?") and not re.search(r"[.!]\s", text)  # one question, nothing said
    verb = "asked" if asked else "mentioned"
    return f'Since you {verb} "{snippet(text)}", I took that into account.'


def retrieval(question: dp.Question, turn: str | None, query: str, short: bool) -> str:
    """The retrieved turn quoted, then the generic answer; a recall question gets the quote as its
    answer (bare, when the prompt asks for a short phrase). ``query``: the words that found the turn."""
    if turn is None:
        return generic(question, short)
    if question.intent != "recall":
        return f"{retrieval_lead(turn, query)}\n\n{generic(question, short)}"
    who, text = quoted(turn, query)
    if short:
        return snippet(text, 80)
    said = f"{who} said" if who else "you said"
    return f'The closest thing I could find in our conversation: {said} "{snippet(text)}"'


# ---- oracle -------------------------------------------------------------------------------------
def oracle(question: dp.Question, preference: str) -> str:
    liked, ruled_out = dp.preference_phrases(preference)
    lead = f'Keeping your preference in mind ("{snippet(preference)}"), here is my answer.'
    if question.intent == "write":
        notes = [_written_to(p) for p in liked[:1]] + [_written_without(p) for p in ruled_out[:1]]
        body = _draft(question, notes)
        return f"{lead}\n\n{body}\n\nEverything above is chosen to fit your preference: {preference}"
    personal = [_favour(p) for p in liked[:1]] + [_avoid(p) for p in ruled_out[:1]]
    body = _suggestions(question, personal, reason=lead)
    return body + f"\n\nEverything above is chosen to fit your preference: {preference}"


def _favour(p: dp.Phrase) -> str:
    if p.kind == "verb":
        return ends(f"Keep to what you asked for: {p.text}")
    if p.kind == "identity":
        return ends(f"Go for options {_article(p.text)} {p.text} can enjoy")
    if p.only:
        return ends(f"Stick to {p.text}")
    if p.kind == "gerund":
        return ends(f"Make room for {p.text}")
    return ends(f"Pick options that fit {p.text}" if _REGIMES.search(p.text) else f"Go for {p.text}")


def _written_to(p: dp.Phrase) -> str:
    return ends(f"It is written to {p.text}" if p.kind == "verb" else f"It sticks to {p.text}")


def _written_without(p: dp.Phrase) -> str:
    return f'It has none of this: "{p.text}".' if "," in p.text else ends(f"It has no {p.text}")


def _avoid(p: dp.Phrase) -> str:
    # Quoted when it lists things: "Avoid A, B or C" would read as avoiding A only.
    return f'Avoid anything like "{p.text}".' if "," in p.text else ends(f"Avoid {p.text}")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


# ---- violator -----------------------------------------------------------------------------------
def violator(question: dp.Question, preference: str) -> str:
    liked, ruled_out = dp.preference_phrases(preference)
    write = question.intent == "write"
    pushes = [_push(p, write, i) for i, p in enumerate(ruled_out[:2])]
    pushes += [_dismiss(p) for p in liked[: max(0, 2 - len(ruled_out))]]
    pushes = pushes or ["Go with whatever is most popular; there is no need to tailor this."]
    return _draft(question, pushes) if write else _suggestions(question, pushes)


_PUSH_TAILS = ("it is what most people go for", "it is the crowd favourite for a reason")


def _push(p: dp.Phrase, write: bool, i: int) -> str:
    if write:
        return f"I have leaned on {p.text.rstrip('.')} throughout."
    text, tail = p.text.rstrip("."), _PUSH_TAILS[i % len(_PUSH_TAILS)]
    return f"Make a point of {text}; {tail}." if p.kind == "gerund" else f"Make a point of trying {text}; {tail}."


def _dismiss(p: dp.Phrase) -> str:
    text = p.text.split(",")[0].rstrip(".")  # a waved-away list reads as waving away its first item
    if p.kind == "verb":
        return ends(f"There is no need to {text}")
    if p.kind == "identity":
        return f"Don't limit yourself to what {_article(text)} {text} would pick; most people don't bother."
    if p.kind == "gerund":
        return f"There is no need for {text}; most people don't bother."
    return f"There is no need to stick to {text}; most people don't bother."
