"""The one retry layer's rules: what is retried, how long it waits, and what is never retried."""

from __future__ import annotations

import pytest

from core.providers.events import Delta, Done, Error
from core.providers.retry import RetryPolicy, retrying

POLICY = RetryPolicy(retries=2, backoff_s=0.5, max_wait_s=60)


def err(kind="rate_limit", *, status=None, before=True, retry_after=None) -> Error:
    return Error("boom", kind=kind, status=status, before_first_byte=before, retry_after=retry_after)


@pytest.mark.parametrize(
    "error, attempt, wait",
    [
        (err(retry_after=3.0), 0, 3.0),  # the server's retry-after wins
        (err(), 0, 0.5),  # otherwise backoff, doubling
        (err("transport"), 1, 1.0),
        (err("timeout"), 0, 0.5),
        (err("http", status=503), 0, 0.5),
        (err("http", status=400), 0, None),  # a bad request stays bad
        (err("config"), 0, None),
        (err("stream"), 0, None),
        (err(before=False), 0, None),  # text already streamed is never retried
        (err(), 2, None),  # out of retries
        (err(retry_after=600.0), 0, None),  # too long to block a run on
    ],
)
def test_wait_before_retry(error, attempt, wait):
    assert POLICY.wait_before_retry(error, attempt) == wait


class Attempts:
    """Each call to ``open`` plays the next scripted attempt (a list of events)."""

    def __init__(self, *attempts: list):
        self.attempts = list(attempts)
        self.opened = 0

    async def open(self):
        script = self.attempts[min(self.opened, len(self.attempts) - 1)]
        self.opened += 1
        for event in script:
            yield event


async def drain(attempts: Attempts, policy: RetryPolicy = POLICY) -> tuple[list, list[float]]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    events = [e async for e in retrying(attempts.open, policy, sleep=sleep)]
    return events, waits


async def test_a_failure_before_any_text_is_retried_after_the_servers_wait():
    attempts = Attempts([err(retry_after=0.25)], [Delta("ok"), Done("stop")])
    events, waits = await drain(attempts)
    assert [type(e) for e in events] == [Delta, Done] and waits == [0.25] and attempts.opened == 2


async def test_a_failure_after_text_ends_the_stream_with_that_text():
    attempts = Attempts([Delta("half"), err("transport", before=False)], [Delta("never"), Done()])
    events, waits = await drain(attempts)
    assert [e.text for e in events if isinstance(e, Delta)] == ["half"]
    assert isinstance(events[-1], Error) and attempts.opened == 1 and waits == []


async def test_giving_up_says_how_many_attempts_were_made():
    events, waits = await drain(Attempts([err()]))
    assert events[-1].message == "boom (gave up after 3 attempts)" and waits == [0.5, 1.0]
