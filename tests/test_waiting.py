import asyncio

import pytest

from tests.waiting import await_until, wait_until


def test_wait_until_returns_the_value_and_fails_loudly():
    calls = iter([0, 0, 7])
    assert wait_until(lambda: next(calls), every=0) == 7
    with pytest.raises(AssertionError, match="timed out after 0.05 s waiting for the moon"):
        wait_until(lambda: False, timeout=0.05, every=0.01, what="the moon")


def test_await_until_fails_loudly():
    with pytest.raises(AssertionError, match="waiting for a reply"):
        asyncio.run(await_until(lambda: None, timeout=0.05, what="a reply"))
