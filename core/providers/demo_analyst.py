"""``demo:extractor``'s scripted answers to the Re-Centering analysis prompts, so the Attributes and
Relevance tabs can be shown and tested without a key.

It is deliberately simple and recognisable as a demo: attributes are the user's own first-person
sentences ("I …", "My …") quoted back with their turn reference; verification and relevance are
decided by word overlap. Deterministic: the same prompt gives the same answer.
"""

from __future__ import annotations

import json
import re

from core.plan import Message
from core.providers import demo_text as dt

_TURN = re.compile(r"^\[(?P<ref>[^\]]+)\] User: (?P<text>.+)$", re.M)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_SELF = re.compile(r"^(I|I'm|I've|I'd|I'll|My|We|Our)\b")
_STRONG = re.compile(r"\b(prefer|always|never|can't stand|hate|love|only|avoid|rather)\b", re.I)
MAX_PER_CHUNK = 8


def reply(messages: list[Message]) -> str | None:
    """The scripted JSON answer for an extraction, verification or relevance prompt, else None."""
    text = messages[-1].content if messages else ""
    if '{"attributes":' in text:
        return _extract(text)
    if '"verdict":' in text:
        return _verify(text)
    if '"relevant":' in text:
        return _relevance(text)
    return None


def _extract(prompt: str) -> str:
    found: list[dict] = []
    for m in _TURN.finditer(prompt):
        for sentence in _SENTENCE.split(m.group("text")):
            sentence = sentence.strip()
            if not (20 <= len(sentence) <= 220) or not _SELF.match(sentence):
                continue
            strong = bool(_STRONG.search(sentence))
            found.append(
                {
                    "attribute": f'The user says: "{sentence}"',
                    "reasoning": f"stated in the user's own words in {m.group('ref')} (demo extractor: first-person sentence)",
                    "confidence": 0.75 if strong else 0.5,
                    "evidence": [m.group("ref")],
                }
            )
    found.sort(key=lambda a: -a["confidence"])
    return json.dumps({"attributes": found[:MAX_PER_CHUNK]}, ensure_ascii=False)


def _section(prompt: str, title: str) -> str:
    m = re.search(rf"## {re.escape(title)}\n(.*?)(?:\n## |\n---|\Z)", prompt, re.S)
    return m.group(1).strip() if m else ""


def _verify(prompt: str) -> str:
    attribute, evidence = _section(prompt, "Attribute"), _section(prompt, "Evidence turns")
    share = dt.overlap(attribute, evidence)
    verdict = "accept" if share >= 0.5 else "uncertain" if share >= 0.2 else "reject"
    return json.dumps(
        {"verdict": verdict, "reason": f"{share:.0%} of the attribute's words appear in the evidence (demo)"}
    )


def _relevance(prompt: str) -> str:
    fact = _section(prompt, "Fact about the user") or _section(prompt, "Earlier conversation passage")
    request = _section(prompt, "The user's request") or _section(prompt, "The user's new request")
    share = dt.overlap(request, fact)
    relevant = share >= 0.15
    return json.dumps(
        {
            "relevant": "yes" if relevant else "no",
            "reason": f"{share:.0%} of the request's words appear in it (demo word overlap)",
        }
    )
