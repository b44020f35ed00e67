"""The run engine with real demo providers: concurrency, isolation of failures, cancellation,
retries before the first byte only, multi-step plans, and judges."""

from __future__ import annotations

import asyncio

import pytest

from core.formats.native import load_file
from core.judges.base import Judgment
from core.plan import Message, PromptPlan, PromptStep
from core.providers.base import CALLS_A_MODEL, ModelSpec
from core.providers.demo import DemoProvider
from core.providers.events import Delta, Done, Error, Usage
from core.run.engine import Engine, EngineOptions
from core.run.spec import (
    JudgeScored,
    ResponseFinished,
    ResponseStarted,
    RunFinished,
    RunSpec,
    RunStarted,
    TokensArrived,
)
from tests.conftest import SAMPLE_DATA
from tests.waiting import await_until


@pytest.fixture(scope="module")
def maya():
    return load_file(SAMPLE_DATA / "users" / "maya.json").bundles[0]


def one_step_plan(question: str) -> PromptPlan:
    return PromptPlan(
        method="zero-shot",
        steps=[PromptStep(name="answer", messages=[Message(role="user", content=question)], tokens=10)],
    )


def spec_for(models: list[str], query: str = "p1-open") -> RunSpec:
    return RunSpec(user_id="maya", query_id=query, expression_type=4, models=[ModelSpec(id=m) for m in models])


class Collector(list):
    def __call__(self, event):
        self.append(event)

    def of(self, kind):
        return [e for e in self if isinstance(e, kind)]


def slot_tokens(events: Collector, slot: int) -> list[TokensArrived]:
    """The tokens streamed so far by the model in ``slot``."""
    ids = {e.response_id for e in events.of(ResponseStarted) if e.slot == slot}
    return [e for e in events.of(TokensArrived) if e.response_id in ids]


def demo_only(pace: float = 0):
    provider = DemoProvider(tokens_per_s=pace)
    return lambda spec: provider


async def test_models_stream_concurrently_and_each_finishes(maya):
    events = Collector()
    engine = Engine(demo_only(pace=400), events)
    q = maya.query("p1-open")
    await engine.run(spec_for(["demo:generic", "demo:retrieval", "demo:oracle"]), one_step_plan(q.text), maya)
    finished = events.of(ResponseFinished)
    assert sorted(f.slot for f in finished) == [0, 1, 2]
    assert all(f.status == "ok" and f.text for f in finished)
    assert all(f.ttft_ms is not None and f.duration_ms >= f.ttft_ms for f in finished)
    # Streams interleave: some slot-1 token arrives before slot 0 has finished.
    order = [e for e in events if isinstance(e, (TokensArrived, ResponseFinished))]
    first_finish = next(i for i, e in enumerate(order) if isinstance(e, ResponseFinished))
    started = {e.response_id: e.slot for e in events.of(ResponseStarted)}
    assert len({started[e.response_id] for e in order[:first_finish] if isinstance(e, TokensArrived)}) > 1
    assert events.of(RunFinished)[0].status == "ok"
    # The text a view would assemble from tokens equals the final text.
    for f in finished:
        assert "".join(e.text for e in events.of(TokensArrived) if e.response_id == f.response_id) == f.text


async def test_one_failing_model_does_not_affect_the_others(maya):
    events = Collector()
    engine = Engine(demo_only(), events)
    await engine.run(
        spec_for(["demo:generic", "demo:flaky", "demo:oracle"]), one_step_plan("What should I cook?"), maya
    )
    by_slot = {f.slot: f for f in events.of(ResponseFinished)}
    assert by_slot[1].status == "error" and "flaky" in by_slot[1].error
    assert by_slot[1].text, "the partial answer streamed before the failure is kept"
    assert by_slot[0].status == "ok" and by_slot[2].status == "ok"
    assert events.of(RunFinished)[0].status == "partial"


async def test_cancelling_one_slot_keeps_its_partial_text_and_spares_the_others(maya):
    events = Collector()
    engine = Engine(demo_only(pace=60), events)
    handles = []
    task = asyncio.create_task(
        engine.run(
            spec_for(["demo:generic", "demo:retrieval"]),
            one_step_plan(maya.query("p1-open").text),
            maya,
            on_handle=handles.append,
        )
    )
    # Cancel once slot 0 has streamed some text (its own tokens, not a pause that hopes for them);
    # the poll wakes long before its ~40 tokens paced at 60/s are all out.
    await await_until(lambda: slot_tokens(events, 0), what="tokens from slot 0")
    handles[0].cancel(0)
    await task
    by_slot = {f.slot: f for f in events.of(ResponseFinished)}
    assert by_slot[0].status == "cancelled" and by_slot[0].text
    assert by_slot[0].text == "".join(e.text for e in slot_tokens(events, 0)), "what streamed is kept"
    assert by_slot[1].status == "ok"
    assert len(by_slot[0].text) < len(by_slot[1].text) or by_slot[0].text != by_slot[1].text


async def test_cancelling_the_whole_run_stops_every_model(maya):
    events = Collector()
    engine = Engine(demo_only(pace=30), events)
    task = asyncio.create_task(
        engine.run(spec_for(["demo:generic", "demo:oracle"]), one_step_plan("Plan a trip"), maya)
    )
    await await_until(lambda: events.of(TokensArrived), what="the first token")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert {f.status for f in events.of(ResponseFinished)} == {"cancelled"}
    assert events.of(RunFinished)[0].status == "cancelled"


class FailsThenAnswers:
    """A provider whose first attempts fail before any byte (as a 429 would) with a retry-after."""

    name = "scripted"
    capabilities = CALLS_A_MODEL

    def __init__(self, failures: int, *, after_first_byte: bool = False):
        self.failures = failures
        self.after_first_byte = after_first_byte
        self.calls = 0

    async def stream(self, spec, messages):
        self.calls += 1
        if self.calls <= self.failures:
            if self.after_first_byte:
                yield Delta("partial ")
            yield Error(
                "429 rate limited",
                kind="rate_limit",
                status=429,
                before_first_byte=not self.after_first_byte,
                retry_after=0.0,
            )
            return
        yield Delta("fine")
        yield Usage(3, 1)
        yield Done("stop")

    def cost_usd(self, spec, usage, *, batch=False):
        return None

    def context_window(self, spec):
        return None


async def test_retries_before_the_first_byte_then_succeeds(maya):
    provider = FailsThenAnswers(failures=2)
    events = Collector()
    engine = Engine(lambda s: provider, events, options=EngineOptions(retries=2))
    await engine.run(spec_for(["scripted:m"]), one_step_plan("hi"), maya)
    (finished,) = events.of(ResponseFinished)
    assert finished.status == "ok" and finished.text == "fine" and provider.calls == 3
    assert finished.cost_usd is None, "unknown price stays unknown, never 0"


async def test_never_retries_after_the_first_byte(maya):
    provider = FailsThenAnswers(failures=1, after_first_byte=True)
    events = Collector()
    await Engine(lambda s: provider, events).run(spec_for(["scripted:m"]), one_step_plan("hi"), maya)
    (finished,) = events.of(ResponseFinished)
    assert finished.status == "error" and finished.text == "partial " and provider.calls == 1


async def test_gives_up_after_the_configured_retries(maya):
    provider = FailsThenAnswers(failures=5)
    events = Collector()
    await Engine(lambda s: provider, events, options=EngineOptions(retries=1)).run(
        spec_for(["scripted:m"]), one_step_plan("hi"), maya
    )
    (finished,) = events.of(ResponseFinished)
    assert finished.status == "error" and "429" in finished.error and provider.calls == 2


async def test_only_providers_that_accept_hints_are_given_the_gold_preference(maya):
    seen: list[dict] = []

    class RealModel(FailsThenAnswers):
        async def stream(self, spec, messages, **kwargs):
            seen.append(kwargs)
            yield Delta("an answer")
            yield Done("stop")

    events = Collector()
    demo = DemoProvider(tokens_per_s=0)
    real = RealModel(0)
    providers = {"demo:oracle": demo, "scripted:m": real}
    await Engine(lambda s: providers[s.id], events).run(
        spec_for(["demo:oracle", "scripted:m"]), one_step_plan(maya.query("p1-open").text), maya
    )
    by_slot = {f.slot: f for f in events.of(ResponseFinished)}
    # The oracle's answer that follows the preference reaches it only through the hints.
    assert by_slot[0].status == "ok"
    assert by_slot[0].text == maya.query("p1-open").meta["reference_answers"]["follows"]
    assert seen == [{}], "a real model is never sent hints"


async def test_deadline_ends_a_stalled_call(maya):
    spec = RunSpec(user_id="maya", query_id="p1-open", models=[ModelSpec(id="demo:slow", params={"timeout_s": 0.2})])
    events = Collector()
    await Engine(demo_only(pace=5), events).run(spec, one_step_plan("hi"), maya)
    (finished,) = events.of(ResponseFinished)
    assert finished.status == "error" and "deadline" in finished.error


async def test_multi_step_plan_feeds_earlier_output_into_later_steps(maya):
    seen: list[list[Message]] = []

    class Echo(FailsThenAnswers):
        async def stream(self, spec, messages):
            seen.append(messages)
            yield Delta(f"out{len(seen)}")
            yield Done("stop")

    plan = PromptPlan(
        method="workflow",
        steps=[
            PromptStep(name="summarise", messages=[Message(role="user", content="summarise")]),
            PromptStep(name="answer", messages=[Message(role="user", content="prefs: {{output:summarise}}")]),
        ],
    )
    events = Collector()
    await Engine(lambda s: Echo(0), events).run(spec_for(["scripted:m"]), plan, maya)
    assert seen[1][0].content == "prefs: out1"
    finals = [f for f in events.of(ResponseFinished) if f.is_final_step]
    assert [f.text for f in finals] == ["out2"]


async def test_judges_score_each_final_answer_and_a_broken_judge_is_recorded(maya):
    class Fixed:
        name = "fixed"
        applies_to = ("open",)

        async def judge(self, item, complete):
            return [
                Judgment(
                    kind="test",
                    dimension="len",
                    score=float(len(item.response_text) > 0),
                    rationale="r",
                    raw="1",
                    parse_ok=True,
                    judge_model="fixed",
                    prompt_version="v0",
                )
            ]

    class Broken(Fixed):
        name = "broken"

        async def judge(self, item, complete):
            raise ValueError("judge exploded")

    events = Collector()
    engine = Engine(demo_only(), events, judges=[Fixed(), Broken()])
    await engine.run(spec_for(["demo:generic", "demo:oracle"]), one_step_plan("hi"), maya)
    scored = events.of(JudgeScored)
    assert len(scored) == 4
    broken = [s.judgment for s in scored if not s.judgment.parse_ok]
    assert len(broken) == 2 and all("judge exploded" in j.error for j in broken)
    assert all(s.response_id for s in scored)


async def test_run_started_carries_the_plan(maya):
    events = Collector()
    plan = one_step_plan("hi")
    await Engine(demo_only(), events).run(spec_for(["demo:generic"]), plan, maya)
    (started,) = events.of(RunStarted)
    assert started.plan == plan and started.run_id.startswith("run-")
