"""The one streaming interface every provider speaks.

``Provider.stream(...)`` is an async iterator of these events, in this order:
``Delta*`` then optionally ``Usage``, then exactly one of ``Done`` or ``Error``.
``t`` is ``time.monotonic()`` when the provider saw the event; the engine derives TTFT and
tokens/s from these, never the UI.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

ErrorKind = Literal["http", "rate_limit", "transport", "timeout", "stream", "config", "cancelled"]


def now() -> float:
    return time.monotonic()


@dataclass(frozen=True, slots=True)
class Delta:
    text: str
    t: float = field(default_factory=now)


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call. ``input_tokens`` counts EVERY prompt token, those served from or written
    to the provider's prompt cache included (OpenAI's ``prompt_tokens``; the Anthropic provider adds
    its separately reported parts up); the cache counts say how many of them were which."""

    input_tokens: int | None
    output_tokens: int | None
    t: float = field(default_factory=now)
    #: Prompt tokens read from the provider's cache (OpenAI ``cached_tokens``, Anthropic
    #: ``cache_read_input_tokens``); None when the provider did not say.
    cache_read_tokens: int | None = None
    #: Prompt tokens written to the cache (Anthropic ``cache_creation_input_tokens``).
    cache_write_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Done:
    finish_reason: str | None = None
    t: float = field(default_factory=now)
    #: False when the stream ended cleanly but without its finish signal (no finish_reason /
    #: ``[DONE]``, no ``message_stop``): the text may be cut short, so it is stored as incomplete.
    complete: bool = True


@dataclass(frozen=True, slots=True)
class Error:
    """A failure, with a message an operator can act on. Partial text already streamed stands."""

    message: str
    kind: ErrorKind = "stream"
    status: int | None = None
    #: True when nothing was streamed yet, so a retry cannot duplicate output.
    before_first_byte: bool = False
    t: float = field(default_factory=now)
    #: Seconds the server asked us to wait (HTTP retry-after), when it said so.
    retry_after: float | None = None


StreamEvent = Delta | Usage | Done | Error
