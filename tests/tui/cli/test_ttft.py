"""TTFT counts from the model call: not the wait for the provider's concurrency limit, nor another
cell's prepare (a RAG cell's embedding) holding the event loop while a batch streams."""

from __future__ import annotations

import asyncio
import threading

from app.batch import open_batch
from app.workbench import Workbench
from core.plan import Message, PromptPlan, PromptStep
from core.providers.base import CALLS_A_MODEL, ModelSpec
from core.providers.events import Delta, Done, Usage
from core.run.engine import Engine, EngineOptions
from core.run.grid import Grid
from core.run.spec import ResponseFinished, RunSpec
from core.settings import Settings
from tests.conftest import SAMPLE_DATA
from tests.storage.export_fixtures import db_with_maya

#: Seconds every call takes to its first token (on the fake clock).
LATENCY = 5.0


class Clock:
    """The engine's clock, moved by hand: the numbers below are exact, whatever the machine does."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


class SlowFirstToken:
    """Every call takes LATENCY (on the clock) to its first token, then finishes at once."""

    capabilities = CALLS_A_MODEL

    def __init__(self, clock: Clock):
        self.clock = clock

    async def stream(self, spec, messages):
        await asyncio.sleep(0)
        self.clock.now += LATENCY
        yield Delta("answer", t=self.clock.now)
        yield Usage(3, 1)
        yield Done("stop")

    def cost_usd(self, spec, usage, *, batch=False):
        return None

    def context_window(self, spec):
        return None


async def test_ttft_does_not_count_the_wait_for_the_providers_limit(monkeypatch):
    from core.formats.native import load_file

    clock = Clock()
    monkeypatch.setattr("core.run.engine.time", clock)
    provider = SlowFirstToken(clock)
    events: list = []
    engine = Engine(lambda spec: provider, events.append, options=EngineOptions(per_provider=1))
    maya = load_file(SAMPLE_DATA / "users" / "maya.json").bundles[0]
    spec = RunSpec(user_id="maya", query_id="p1-open", models=[ModelSpec(id="scripted:a"), ModelSpec(id="scripted:b")])
    plan = PromptPlan(
        method="zero-shot", steps=[PromptStep(name="answer", messages=[Message(role="user", content="hi")])]
    )
    await engine.run(spec, plan, maya)
    finished = [e for e in events if isinstance(e, ResponseFinished)]
    # One call at a time: the second waited the first's 5 s for the limit, which is not its TTFT.
    assert [f.ttft_ms for f in finished] == [LATENCY * 1000, LATENCY * 1000]
    assert all(f.duration_ms == LATENCY * 1000 for f in finished)


class StreamsWhilePreparing:
    """A provider whose first call waits (without blocking the loop) until the other cell's
    prepare has begun, then streams and says so."""

    capabilities = CALLS_A_MODEL

    def __init__(self, preparing: threading.Event, streamed: threading.Event):
        self.preparing, self.streamed = preparing, streamed

    async def stream(self, spec, messages):
        for _ in range(3000):  # 30 s at most
            if self.preparing.is_set():
                break
            await asyncio.sleep(0.01)
        yield Delta("answer")
        self.streamed.set()
        yield Usage(3, 1)
        yield Done("stop")

    def cost_usd(self, spec, usage, *, batch=False):
        return None

    def context_window(self, spec):
        return None


async def test_a_cells_prepare_does_not_hold_the_other_cells_streams(tmp_path, monkeypatch):
    """p2-open's prepare (standing in for a RAG cell's embedding) blocks until p1-open's answer
    has streamed: that happens only if prepares run off the event loop the streams share."""
    import core.methods

    preparing, streamed = threading.Event(), threading.Event()
    plan = core.methods.plan

    def slow_plan(method, ctx, query, options):
        if query.id == "p2-open":
            preparing.set()
            assert streamed.wait(10), "the other cell could not stream while this one prepared"
        return plan(method, ctx, query, options)

    monkeypatch.setattr(core.methods, "plan", slow_plan)
    db = db_with_maya(tmp_path / "b.db")
    provider = StreamsWhilePreparing(preparing, streamed)
    wb = Workbench.open(Settings(db=db, demo_tokens_per_s=0), db, sample_data=False, provider_for=lambda s: provider)
    grid = Grid(
        name="t",
        users=["maya"],
        queries=["p1-open", "p2-open"],
        expression_types=[4],
        models=["scripted:m"],
        concurrency={"runs": 2, "per_provider": 2},
    )
    session = open_batch(wb, grid, owns_workbench=True)
    try:
        progress = await session.run()
    finally:
        session.close()
    assert (progress.ok, progress.failed) == (2, 0), progress.errors
