"""A whole (non-interactive) model call on top of the streaming interface: judges and
intermediate method steps that do not need to be watched use this."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.plan import Message
from core.providers.base import ModelSpec, Provider
from core.providers.events import Delta, Done, Error, Usage


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


async def collect(provider: Provider, spec: ModelSpec, messages: list[Message]) -> Completion:
    parts: list[str] = []
    usage: Usage | None = None
    async for event in provider.stream(spec, messages):
        if isinstance(event, Delta):
            parts.append(event.text)
        elif isinstance(event, Usage):
            usage = event
        elif isinstance(event, Error):
            return Completion("".join(parts), error=event.message)
        elif isinstance(event, Done):
            break
    return Completion(
        "".join(parts),
        input_tokens=usage.input_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
    )
