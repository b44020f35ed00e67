"""Provider-test helpers: the loopback servers and a way to drain a stream into a list."""

from __future__ import annotations

from contextlib import aclosing

from core.plan import Message
from core.providers.events import Delta, Done, Error, Usage
from tests.servers.fixtures import anthropic_server, openai_server  # noqa: F401

MESSAGES = [Message(role="system", content="Be brief."), Message(role="user", content="Say hello.")]


async def collect(provider, spec, messages=None, **kw) -> list:
    events = []
    async with aclosing(provider.stream(spec, messages or MESSAGES, **kw)) as stream:
        async for event in stream:
            events.append(event)
    return events


def text_of(events) -> str:
    return "".join(e.text for e in events if isinstance(e, Delta))


def last(events):
    return events[-1]


def check_order(events) -> None:
    """Delta* then optionally Usage, then exactly one Done or Error, nothing after it."""
    kinds = [type(e) for e in events]
    assert kinds and kinds[-1] in (Done, Error), kinds
    assert sum(k in (Done, Error) for k in kinds) == 1, kinds
    tail = kinds[kinds.index(Usage) :] if Usage in kinds else []
    assert all(k is not Delta for k in tail), kinds
