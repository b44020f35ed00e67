"""Where a prompt's reusable prefix ends, and whether to ask the provider to cache it.

A user's history is the same prefix for every query asked after it, so a grid sends the same
tens of thousands of tokens again and again. Anthropic caches a prefix only when asked (a
``cache_control`` breakpoint; writing costs more than plain input, reading ~10 %), OpenAI caches
automatically. The breakpoint goes on the last message before the final user message (the
query): everything up to the question is shared.

Policy (``prompt_cache`` in the settings): ``auto`` marks a prefix when it will be, or already
was, sent more than once in this process (a batch announces its prompts with :func:`expect`
before running, so even the first request writes the cache); ``always`` marks every prefix long
enough to be cached; ``off`` never marks.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from core.plan import Message, PromptPlan

CachePolicy = Literal["auto", "always", "off"]

#: Providers do not cache shorter prefixes (Anthropic: 1,024 tokens for most models); ~4 chars a token.
MIN_PREFIX_CHARS = 4 * 1024


def cache_cut(messages: Sequence[Message]) -> int | None:
    """Index of the message that ends the shared prefix (the last one before the final user
    message), or None when there is no prefix worth caching."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if last_user is None or last_user == 0:
        return None
    cut = last_user - 1
    if sum(len(m.content) for m in messages[: cut + 1]) < MIN_PREFIX_CHARS:
        return None
    return cut


def prefix_key(model_id: str, messages: Sequence[Message], cut: int) -> str:
    raw = json.dumps([model_id, [[m.role, m.content] for m in messages[: cut + 1]]], ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


class PrefixUses:
    """How often each prefix is expected or was sent in this process (thread-safe)."""

    def __init__(self) -> None:
        #: prefix -> who announced it (a cell and step): announcing twice counts once.
        self._expected: dict[str, set[str]] = {}
        self._sent: Counter[str] = Counter()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._expected.clear()
            self._sent.clear()

    def expect(self, model_id: str, messages: Sequence[Message], who: str) -> None:
        """A batch will send these messages (as ``who``, e.g. a cell's step): announce them so
        their first request writes the cache."""
        cut = cache_cut(messages)
        if cut is not None:
            with self._lock:
                self._expected.setdefault(prefix_key(model_id, messages, cut), set()).add(who)

    def breakpoint(self, policy: CachePolicy, model_id: str, messages: Sequence[Message]) -> int | None:
        """The message index to mark for caching under ``policy``, or None; counts this use."""
        if policy == "off":
            return None
        cut = cache_cut(messages)
        if cut is None:
            return None
        key = prefix_key(model_id, messages, cut)
        with self._lock:
            self._sent[key] += 1
            reused = len(self._expected.get(key, ())) > 1 or self._sent[key] > 1
        return cut if policy == "always" or reused else None


#: The process's counts: every provider and batch of this process shares them.
USES = PrefixUses()


def announce(model_id: str, plan: PromptPlan, who: str) -> None:
    """A batch will send ``plan`` to ``model_id`` (for ``who``, a cell): announce the steps whose
    messages are known now (a step that reads an earlier step's reply is not)."""
    for step in plan.steps:
        if not step.needs():
            USES.expect(model_id, step.messages, f"{who}/{step.name}")
