"""The one retry layer: another attempt only before the first byte, never after text has streamed.

Every provider's SDK client is built with its own retries off (openai/anthropic ``max_retries=0``,
litellm ``num_retries=0``), so this is the only place a call is repeated. It is used by the run
engine for every answer stream and by :func:`core.providers.calls.collect` for whole calls
(judges, summaries). A server's ``retry-after`` is honoured; otherwise the wait doubles.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass

from core.providers.events import Delta, Done, Error, StreamEvent

#: Failures worth another attempt (plus any HTTP 5xx).
RETRYABLE_KINDS = frozenset({"rate_limit", "transport", "timeout"})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    #: Attempts after the first.
    retries: int = 2
    #: First wait when the server names none; doubles each attempt.
    backoff_s: float = 0.5
    #: A longer ``retry-after`` than this ends the call instead of blocking it for minutes.
    max_wait_s: float = 60.0

    def wait_before_retry(self, err: Error, attempt: int) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None when ``err`` is final."""
        if attempt >= self.retries or not err.before_first_byte:
            return None
        if err.kind not in RETRYABLE_KINDS and not (err.status or 0) >= 500:
            return None
        if err.retry_after is not None:
            return err.retry_after if err.retry_after <= self.max_wait_s else None
        return self.backoff_s * (2**attempt)


DEFAULT_RETRY = RetryPolicy()


async def retrying(
    open_stream: Callable[[], AsyncGenerator[StreamEvent, None]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> AsyncGenerator[StreamEvent, None]:
    """The events of ``open_stream()``, reopened after a retryable failure before any text.

    A failure that is not retried ends the stream as it came, its message saying how many
    attempts were made when there was more than one.
    """
    attempt = 0
    while True:
        streamed = False
        failure: Error | None = None
        async with aclosing(open_stream()) as stream:
            async for event in stream:
                if isinstance(event, Error):
                    failure = event
                    break
                streamed = streamed or (isinstance(event, Delta) and bool(event.text))
                yield event
                if isinstance(event, Done):
                    return
        if failure is None:
            return  # the provider ended without Done: nothing more to say
        wait = None if streamed else policy.wait_before_retry(failure, attempt)
        if wait is None:
            yield _with_attempts(failure, attempt + 1)
            return
        await sleep(wait)
        attempt += 1


def _with_attempts(err: Error, attempts: int) -> Error:
    if attempts == 1:
        return err
    return Error(
        f"{err.message} (gave up after {attempts} attempts)",
        kind=err.kind,
        status=err.status,
        before_first_byte=err.before_first_byte,
        t=err.t,
        retry_after=err.retry_after,
    )
