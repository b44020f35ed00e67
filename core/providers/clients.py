"""SDK clients reused across calls within one event loop.

Building an SDK client (and its httpx pool) per call costs milliseconds and a fresh TCP
connection each time; a batch of a thousand calls pays that a thousand times. A client is bound
to the event loop that created it, so clients are kept per running loop and dropped with it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable
from typing import Any


class LoopClients:
    def __init__(self, factory: Callable[..., Any]):
        self._factory = factory
        self._by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def get(self, *key: Hashable) -> Any:
        """The client for ``key`` (e.g. base URL and key) in the running loop, made on first use."""
        clients = self._by_loop.setdefault(asyncio.get_running_loop(), {})
        client = clients.get(key)
        if client is None:
            client = clients[key] = self._factory(*key)
        return client
