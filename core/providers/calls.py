"""A whole (non-interactive) model call on top of the streaming interface: judges and
intermediate method steps that do not need to be watched use this. It retries through the same
one layer as the engine (:mod:`core.providers.retry`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass

from core.plan import Message
from core.providers.base import ModelSpec, Provider
from core.providers.events import Delta, Done, Error, Usage
from core.providers.retry import DEFAULT_RETRY, RetryPolicy, retrying


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


Complete = Callable[[ModelSpec, list[Message]], Awaitable[Completion]]


async def collect(
    provider: Provider, spec: ModelSpec, messages: list[Message], retry: RetryPolicy = DEFAULT_RETRY
) -> Completion:
    parts: list[str] = []
    usage: Usage | None = None
    async with aclosing(retrying(lambda: provider.stream(spec, messages), retry)) as events:
        async for event in events:
            if isinstance(event, Delta):
                parts.append(event.text)
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, Done) and not event.complete:
                # A reply that may be cut short is not parsed as if whole (a judge's score, a summary).
                return Completion("".join(parts), error="the stream ended without its finish signal (incomplete)")
            elif isinstance(event, Error):
                return Completion("".join(parts), error=event.message)
    return Completion(
        "".join(parts),
        input_tokens=usage.input_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
    )
