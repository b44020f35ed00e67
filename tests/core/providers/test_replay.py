"""replay: – recorded responses come back with their text, usage and rhythm."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from core.providers.base import ModelParams, ModelSpec
from core.providers.demo import DemoProvider
from core.providers.events import Delta, Done, Error, Usage
from core.providers.recording import MemoryResponseCache, Recorder, request_hash
from core.providers.replay import ReplayProvider
from tests.core.providers.conftest import MESSAGES, check_order, collect, text_of


def test_request_hash_is_canonical_and_ignores_timeouts():
    a = request_hash("openai:gpt-4o", MESSAGES, ModelParams(temperature=0.0, timeout_s=30))
    b = request_hash("openai:gpt-4o", [m.model_dump() for m in MESSAGES], {"temperature": 0.0, "timeout_s": 99})
    assert a == b and len(a) == 64
    assert a != request_hash("openai:gpt-4o", MESSAGES, ModelParams(temperature=0.5))
    assert a != request_hash("openai:gpt-4o-mini", MESSAGES, ModelParams(temperature=0.0))
    assert a != request_hash("openai:gpt-4o", MESSAGES[1:], ModelParams(temperature=0.0))


async def test_record_then_replay_reproduces_text_and_usage():
    original = ModelSpec(id="demo:retrieval")
    events = await collect(DemoProvider(tokens_per_s=0), original)
    rec = Recorder(original.id, started_at=events[0].t).extend(events).record()
    assert rec is not None and rec["text"] == text_of(events)
    cache = MemoryResponseCache()
    cache.put(request_hash(original.id, MESSAGES, original.params), rec)
    replayed = await collect(ReplayProvider(cache, speed=0), ModelSpec(id="replay:demo:retrieval"))
    check_order(replayed)
    assert text_of(replayed) == text_of(events)
    assert [e.text for e in replayed if isinstance(e, Delta)] == [e.text for e in events if isinstance(e, Delta)]
    orig_usage = next(e for e in events if isinstance(e, Usage))
    new_usage = next(e for e in replayed if isinstance(e, Usage))
    assert (new_usage.input_tokens, new_usage.output_tokens) == (orig_usage.input_tokens, orig_usage.output_tokens)
    # ... and directly by hash
    by_hash = await collect(
        ReplayProvider(cache, speed=0),
        ModelSpec(id="replay:" + request_hash(original.id, MESSAGES, original.params)),
        [],
    )
    assert text_of(by_hash) == text_of(events)


async def test_replay_keeps_the_rhythm():
    # Offsets from the call start (what storage records): a quick first token, one long pause.
    record = {
        "model": "openai:gpt-4o",
        "text": "abcd",
        "usage": {"input_tokens": 3, "output_tokens": 4},
        "chunks": [[0.01, "a"], [0.02, "b"], [0.22, "c"], [0.23, "d"]],
    }
    cache = MemoryResponseCache()
    cache.put("f" * 64, record)
    stream: list = []  # the waits asked for and the chunks yielded, in the order they happened

    async def fake_sleep(s):
        stream.append(s)

    replay = ReplayProvider(cache, sleep=fake_sleep)
    async for event in replay.stream(ModelSpec(id="replay:" + "f" * 64), MESSAGES):
        stream.append(event.text if isinstance(event, Delta) else type(event).__name__)
    # Each chunk after the gap since the one before it, at the recorded pace (speed 1): the long pause
    # is still before "c". These are the waits asked of the sleep; how long a loaded machine takes to
    # sleep them is not the replay's doing (nor a test's to measure).
    assert stream == pytest.approx([0.01, "a", 0.01, "b", 0.2, "c", 0.01, "d", "Usage", "Done"])
    assert inspect.signature(ReplayProvider).parameters["sleep"].default is asyncio.sleep, "really sleeps"


async def test_replay_speed_scales_the_gaps():
    sleeps: list[float] = []

    async def fake_sleep(s):
        sleeps.append(s)

    cache = MemoryResponseCache()
    cache.put("e" * 64, {"text": "xy", "chunks": [[0.4, "x"], [1.0, "y"]]})
    await collect(ReplayProvider(cache, speed=2.0, sleep=fake_sleep), ModelSpec(id="replay:" + "e" * 64))
    assert sleeps == [0.2, 0.3]


async def test_missing_record_says_how_to_record_one():
    events = await collect(ReplayProvider(MemoryResponseCache()), ModelSpec(id="replay:openai:gpt-4o"))
    assert len(events) == 1 and isinstance(events[0], Error) and events[0].kind == "config"
    assert "openai:gpt-4o" in events[0].message and "Record one" in events[0].message


async def test_no_cache_is_a_config_error():
    events = await collect(ReplayProvider(None), ModelSpec(id="replay:openai:gpt-4o"))
    assert events[0].kind == "config"


def test_failed_or_unfinished_calls_are_not_recorded():
    r = Recorder("openai:x", started_at=0.0)
    r.add(Delta("part", t=0.1))
    assert r.record() is None
    r.add(Error("boom"))
    r.add(Done())
    assert r.record() is None
    ok = Recorder("openai:x", started_at=1.0).extend([Delta("a", t=1.5), Delta("b", t=2.0), Done("stop", t=2.1)])
    assert ok.record()["chunks"] == [[0.5, "a"], [1.0, "b"]]


def test_replay_is_free_and_marked():
    p = ReplayProvider(MemoryResponseCache())
    assert p.cost_usd(ModelSpec(id="replay:x:y"), Usage(1, 1)) == 0.0 and p.capabilities.is_replay
