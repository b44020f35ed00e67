"""Model-written session summaries (CUPID §4.2.3, Fig. 23): the cache key and the sync/async fill."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections.abc import Awaitable, Callable

from core.history.configs import ContextError
from core.history.dialogue import session_log
from core.model import Session

Summariser = Callable[[Session], "str | Awaitable[str]"]


class InMemorySummaryCache:
    """A process-local :class:`core.ports.SummaryCache` (tests, CLI without a database)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], str] = {}

    def get_summary(self, model: str, text_hash: str) -> str | None:
        return self._data.get((model, text_hash))

    def put_summary(self, model: str, text_hash: str, summary: str) -> None:
        self._data[(model, text_hash)] = summary


def session_hash(session: Session) -> str:
    """sha256 of the session's dialogue as the summary prompt shows it (the summary cache key)."""
    return hashlib.sha256(session_log(session).encode("utf-8")).hexdigest()


def summaries_sync(sessions, summarise, cache, model) -> dict[str, str]:
    out: dict[str, str] = {}
    for s in sessions:
        h = session_hash(s)
        text = cache.get_summary(model, h) if cache is not None else None
        if text is None and summarise is not None:
            text = summarise(s)
            if inspect.isawaitable(text):
                if inspect.iscoroutine(text):
                    text.close()
                raise ContextError("the summariser is async: use abuild_context")
            if cache is not None:
                cache.put_summary(model, h, text)
        if text is not None:
            out[s.id] = text
    return out


async def summaries_async(sessions, summarise, cache, model, concurrency) -> dict[str, str]:
    out: dict[str, str] = {}
    todo = []
    for s in sessions:
        h = session_hash(s)
        text = cache.get_summary(model, h) if cache is not None else None
        if text is not None:
            out[s.id] = text
        elif summarise is not None:
            todo.append((s, h))
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(s: Session, h: str) -> None:
        async with gate:
            text = summarise(s)
            if inspect.isawaitable(text):
                text = await text
        out[s.id] = text
        if cache is not None:
            cache.put_summary(model, h, text)

    await asyncio.gather(*(one(s, h) for s, h in todo))
    return out
