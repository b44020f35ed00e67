"""The run engine: the only place that orchestrates a run.

Given a RunSpec and its PromptPlan it streams every chosen model concurrently (multi-step
methods step by step per model), times them, retries only before the first byte (the one retry
layer, :mod:`core.providers.retry`), enforces a deadline per call and a concurrency limit per
provider, runs the judges on each finished answer, and emits RunEvents. Views (TUI, CLI) and the
storage recorder subscribe to those events; one model's failure or cancellation never touches
the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from functools import cached_property

from core.judges.apply import judge_answer
from core.judges.base import Judge, JudgeInput
from core.model import UserBundle
from core.plan import Message, PromptPlan, PromptStep, fill
from core.providers.base import ModelSpec, Provider
from core.providers.calls import Completion, collect
from core.providers.events import Delta, Done, Error, StreamEvent, Usage
from core.providers.hints import Hints, gold_hints
from core.providers.recording import request_hash
from core.providers.retry import RetryPolicy, retrying
from core.run.spec import (
    JudgeScored,
    ResponseFinished,
    ResponseStarted,
    RunEvent,
    RunFinished,
    RunSpec,
    RunStarted,
    RunStatus,
    TokensArrived,
    new_id,
)


def step_model(model: ModelSpec, step: PromptStep) -> ModelSpec:
    """The model as this step calls it: the step's max_tokens/temperature (a protocol's limits,
    e.g. PrefEval's 300 / 5 tokens at temperature 0) fill the params the user left unset; a
    param the user set explicitly wins (prepare notes it in the plan)."""
    update: dict[str, float | int] = {}
    if step.max_tokens is not None and model.params.max_tokens is None:
        update["max_tokens"] = step.max_tokens
    if step.temperature is not None and model.params.temperature is None:
        update["temperature"] = step.temperature
    if not update:
        return model
    return model.model_copy(update={"params": model.params.model_copy(update=update)})


def with_prefill(messages: list[Message], step: PromptStep, provider: Provider, model: ModelSpec) -> list[Message]:
    """Append the step's prefill as a trailing assistant message for providers that continue one
    (Anthropic, and the replay of an Anthropic model, so the recorded request is found again);
    other providers are not sent it (PrefEval's MCQ has no OpenAI branch)."""
    if step.prefill is None:
        return messages
    replayed = provider.capabilities.is_replay and model.model.startswith("anthropic:")
    if not (getattr(provider, "supports_prefill", False) or replayed):
        return messages
    return [*messages, Message(role="assistant", content=step.prefill)]


def usage_cost(provider: Provider, model: ModelSpec, usage: Usage | None, *, batch: bool = False) -> float | None:
    """What a call cost at the provider's prices, or None."""
    if usage is None:
        return None
    try:
        return provider.cost_usd(model, usage, batch=batch)
    except Exception:  # a price table problem must not lose the answer
        return None


Emit = Callable[[RunEvent], None]
ProviderFor = Callable[[ModelSpec], Provider]


@dataclass
class EngineOptions:
    #: Attempts after the first, only before the first byte, for every provider.
    retries: int = 2
    #: First wait when the server sends no retry-after; doubles each attempt.
    backoff_s: float = 0.5
    #: Max concurrent calls per provider name (openai, anthropic, demo …).
    per_provider: int = 4
    #: An answer is cut here and stored as ``incomplete``: a runaway or hostile stream must not
    #: grow without end (settings.max_answer_chars).
    max_answer_chars: int = 400_000

    @property
    def retry(self) -> RetryPolicy:
        return RetryPolicy(retries=self.retries, backoff_s=self.backoff_s)


@dataclass
class _Slot:
    index: int
    model: ModelSpec
    task: asyncio.Task | None = None


@dataclass
class _Run:
    """One run's inputs, and what is derived from them once rather than per call."""

    run_id: str
    spec: RunSpec
    plan: PromptPlan
    bundle: UserBundle
    judges: list[Judge]

    @cached_property
    def hints(self) -> Hints:
        return gold_hints(self.bundle, self.spec.query_id)


class RunHandle:
    """A run in progress: lets a view cancel one model or the whole run."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self._slots: list[_Slot] = []

    def cancel(self, slot: int | None = None) -> None:
        if slot is None:
            for s in self._slots:
                if s.task and not s.task.done():
                    s.task.cancel()
        elif 0 <= slot < len(self._slots):
            task = self._slots[slot].task
            if task and not task.done():
                task.cancel()

    def running(self) -> list[int]:
        return [s.index for s in self._slots if s.task and not s.task.done()]


class Engine:
    def __init__(
        self,
        provider_for: ProviderFor,
        emit: Emit,
        *,
        judges: Sequence[Judge] = (),
        options: EngineOptions | None = None,
    ):
        self._provider_for = provider_for
        self._emit = emit
        self._judges = list(judges)
        self.options = options or EngineOptions()
        self._limits: dict[str, asyncio.Semaphore] = {}

    # -- public ------------------------------------------------------------------------
    async def run(
        self,
        spec: RunSpec,
        plan: PromptPlan,
        bundle: UserBundle,
        *,
        run_id: str | None = None,
        on_handle: Callable[[RunHandle], None] | None = None,
        judges: Sequence[Judge] | None = None,
    ) -> str:
        """Run to the end (or cancellation); returns the run id. ``judges`` replaces the engine's
        judges for this run (knowledge probes are scored by their own)."""
        handle = RunHandle(run_id or new_id("run"))
        if on_handle:
            on_handle(handle)
        chosen = self._judges if judges is None else list(judges)
        await self._run(handle, _Run(handle.run_id, spec, plan, bundle, chosen))
        return handle.run_id

    # -- orchestration -------------------------------------------------------------------
    async def _run(self, handle: RunHandle, run: _Run) -> None:
        self._emit(RunStarted(run.run_id, run.spec, run.plan))
        handle._slots = [_Slot(i, m) for i, m in enumerate(run.spec.models)]
        for slot in handle._slots:
            slot.task = asyncio.ensure_future(self._run_slot(run, slot))
        try:
            results = await asyncio.gather(*(s.task for s in handle._slots if s.task), return_exceptions=True)
        except asyncio.CancelledError:
            handle.cancel()
            await asyncio.gather(*(s.task for s in handle._slots if s.task), return_exceptions=True)
            self._emit(RunFinished(run.run_id, "cancelled"))
            raise
        statuses = [r if isinstance(r, str) else "error" for r in results]
        overall: RunStatus
        if all(s == "ok" for s in statuses):
            overall = "ok"
        elif all(s == "cancelled" for s in statuses):
            overall = "cancelled"
        elif any(s == "ok" for s in statuses):
            overall = "partial"
        else:
            overall = "error"
        self._emit(RunFinished(run.run_id, overall))

    async def _run_slot(self, run: _Run, slot: _Slot) -> str:
        provider = self._provider_for(slot.model)
        hints = run.hints if provider.capabilities.accepts_hints else None
        outputs: dict[str, str] = {}
        final: ResponseFinished | None = None
        for n, step in enumerate(run.plan.steps):
            is_final = n == len(run.plan.steps) - 1
            messages = with_prefill(fill(step, outputs), step, provider, slot.model)
            model = step_model(slot.model, step)
            finished = await self._stream_step(run.run_id, slot, model, provider, hints, step.name, is_final, messages)
            if finished.status != "ok":
                return finished.status
            outputs[step.name] = finished.text
            final = finished
        if final is not None and run.judges:
            await self._judge(run, final, slot.model)
        return "ok"

    async def _stream_step(
        self,
        run_id: str,
        slot: _Slot,
        model: ModelSpec,
        provider: Provider,
        hints: Hints | None,
        step: str,
        is_final: bool,
        messages: list[Message],
    ) -> ResponseFinished:
        response_id = new_id("resp")
        req_hash = request_hash(model.id, messages, model.params)
        self._emit(ResponseStarted(run_id, response_id, model, slot.index, step, is_final, req_hash))
        parts: list[str] = []
        size = 0  # characters in parts
        chunks: list[tuple[float, str]] = []
        usage: Usage | None = None
        status, error = "ok", None
        t0 = time.monotonic()  # taken again once a call may start: a cancel while queued has a duration
        first: float | None = None
        limit = self._limits.setdefault(model.provider, asyncio.Semaphore(self.options.per_provider))

        def open_stream() -> AsyncGenerator[StreamEvent, None]:
            if hints is None:
                return provider.stream(model, messages)
            return provider.stream(model, messages, hints=hints)  # type: ignore[call-arg]  # accepts_hints

        try:
            async with limit, asyncio.timeout(model.params.timeout_s):
                # TTFT and duration count from the model call: not the wait for the provider's
                # limit (other cells' calls) nor anything before it (prepare, embedding).
                t0 = time.monotonic()
                async with aclosing(retrying(open_stream, self.options.retry)) as events:
                    async for event in events:
                        if isinstance(event, Delta):
                            if not event.text:
                                continue
                            if first is None:
                                first = event.t
                            text = event.text[: self.options.max_answer_chars - size]
                            size += len(text)
                            parts.append(text)
                            chunks.append((round(event.t - t0, 4), text))
                            self._emit(TokensArrived(response_id, text, event.t))
                            if size >= self.options.max_answer_chars:
                                status = "incomplete"
                                error = (
                                    f"cut at {size:,} characters, the answer size limit "
                                    "(max_answer_chars in the settings)"
                                )
                                break
                        elif isinstance(event, Usage):
                            usage = event
                        elif isinstance(event, Done) and not event.complete:
                            status = "incomplete"
                            error = "the stream ended without its finish signal; the answer may be cut short"
                        elif isinstance(event, Error):
                            status, error = "error", event.message
        except TimeoutError:
            status = "error"
            error = (
                f"no complete answer within the {model.params.timeout_s:g} s deadline (raise timeout_s for slow models)"
            )
        except asyncio.CancelledError:
            status, error = "cancelled", "cancelled by the operator"
        except Exception as exc:  # a provider bug must not take the other panes down
            status, error = "error", f"{type(exc).__name__}: {exc}"
        finished = self._finished(
            run_id,
            response_id,
            slot.index,
            step,
            is_final,
            status,
            error,
            parts,
            chunks,
            usage,
            t0,
            first,
            provider,
            model,
        )
        self._emit(finished)
        return finished

    def _finished(
        self, run_id, response_id, slot, step, is_final, status, error, parts, chunks, usage, t0, first, provider, model
    ) -> ResponseFinished:
        end = time.monotonic()
        in_tok = usage.input_tokens if usage else None
        out_tok = usage.output_tokens if usage else None
        cost = usage_cost(provider, model, usage)
        replayed = provider.capabilities.is_replay
        return ResponseFinished(
            run_id=run_id,
            response_id=response_id,
            slot=slot,
            step=step,
            is_final_step=is_final,
            status=status,
            text="".join(parts),
            error=error,
            ttft_ms=round((first - t0) * 1000, 1) if first is not None else None,
            duration_ms=round((end - t0) * 1000, 1),
            input_tokens=in_tok,
            output_tokens=out_tok,
            cost_usd=cost,
            cache_hit=replayed,
            chunks=() if replayed else tuple(chunks),
            cache_read_tokens=usage.cache_read_tokens if usage else None,
            cache_write_tokens=usage.cache_write_tokens if usage else None,
        )

    # -- judging -------------------------------------------------------------------------
    async def _judge(self, run: _Run, final: ResponseFinished, model: ModelSpec) -> None:
        query = run.bundle.query(run.spec.query_id)
        item = JudgeInput(run.bundle, query, run.spec.expression_type, run.plan, final.text, model.id)

        async def complete(judge_spec: ModelSpec, messages: list[Message]) -> Completion:
            provider = self._provider_for(judge_spec)
            limit = self._limits.setdefault(judge_spec.provider, asyncio.Semaphore(self.options.per_provider))
            async with limit:
                return await collect(provider, judge_spec, messages)

        judgments = await judge_answer(run.judges, item, complete)
        for j in judgments:
            self._emit(JudgeScored(run.run_id, final.response_id, j))
