"""Polling helpers for tests: wait for a condition, and fail loudly (naming it) when it never comes.

A bare ``for _ in range(500): sleep`` loop falls through silently on timeout and lets the test go on
to assert something confusing; these raise ``AssertionError`` saying what was awaited and for how long.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


def wait_until(
    condition: Callable[[], object], *, timeout: float = 30.0, every: float = 0.05, what: str = ""
) -> object:
    """Poll ``condition`` (a blocking check) until it returns something truthy; return that value."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what or repr(condition)}")
        time.sleep(every)


async def await_until(
    condition: Callable[[], object], *, timeout: float = 30.0, every: float = 0.01, what: str = ""
) -> object:
    """``wait_until`` for code running on an event loop (Pilot tests, engine tests)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = condition()
        if value:
            return value
        if loop.time() >= end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what or repr(condition)}")
        await asyncio.sleep(every)
