"""The run engine: the only place that orchestrates a run.

Given a RunSpec and its PromptPlan it streams every chosen model concurrently (multi-step
methods step by step per model), times them, retries only before the first byte, enforces a
deadline per call and a concurrency limit per provider, runs the judges on each finished answer,
and emits RunEvents. Views (TUI, CLI) and the storage recorder subscribe to those events; one
model's failure or cancellation never touches the others.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from core.judges.apply import judge_answer
from core.judges.base import Judge, JudgeInput
from core.model import UserBundle
from core.plan import Message, PromptPlan, fill
from core.providers.base import ModelSpec, Provider
from core.providers.calls import Completion, collect
from core.providers.events import Delta, Done, Error, Usage
from core.run.spec import (
    JudgeScored,
    ResponseFinished,
    ResponseStarted,
    RunEvent,
    RunFinished,
    RunSpec,
    RunStarted,
    TokensArrived,
    new_id,
)

Emit = Callable[[RunEvent], None]
ProviderFor = Callable[[ModelSpec], Provider]

#: Error kinds worth another attempt when nothing has been streamed yet.
RETRYABLE = {"rate_limit", "transport", "timeout"}


@dataclass
class EngineOptions:
    #: Attempts after the first, only before the first byte. Providers whose SDK already
    #: retries (``retries_itself = True``) are not retried again here.
    retries: int = 2
    backoff_s: float = 0.5
    #: Max concurrent calls per provider name (openai, anthropic, demo …).
    per_provider: int = 4


@dataclass
class _Slot:
    index: int
    model: ModelSpec
    task: asyncio.Task | None = None
    response_ids: list[str] = field(default_factory=list)


class RunHandle:
    """A run in progress: lets a view cancel one model or the whole run."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self._slots: list[_Slot] = []
        self._task: asyncio.Task | None = None

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
        judge_model: ModelSpec | None = None,
        options: EngineOptions | None = None,
    ):
        self._provider_for = provider_for
        self._emit = emit
        self._judges = list(judges)
        self._judge_model = judge_model
        self.options = options or EngineOptions()
        self._limits: dict[str, asyncio.Semaphore] = {}

    # -- public ------------------------------------------------------------------------
    def start(self, spec: RunSpec, plan: PromptPlan, bundle: UserBundle, *, run_id: str | None = None) -> RunHandle:
        """Start a run on the running loop; await ``handle.wait()``-style via :meth:`run`."""
        handle = RunHandle(run_id or new_id("run"))
        handle._task = asyncio.ensure_future(self._run(handle, spec, plan, bundle))
        return handle

    async def run(
        self,
        spec: RunSpec,
        plan: PromptPlan,
        bundle: UserBundle,
        *,
        run_id: str | None = None,
        on_handle: Callable[[RunHandle], None] | None = None,
    ) -> str:
        """Run to the end (or cancellation); returns the run id."""
        handle = RunHandle(run_id or new_id("run"))
        if on_handle:
            on_handle(handle)
        await self._run(handle, spec, plan, bundle)
        return handle.run_id

    # -- orchestration -------------------------------------------------------------------
    async def _run(self, handle: RunHandle, spec: RunSpec, plan: PromptPlan, bundle: UserBundle) -> None:
        self._emit(RunStarted(handle.run_id, spec, plan))
        handle._slots = [_Slot(i, m) for i, m in enumerate(spec.models)]
        for slot in handle._slots:
            slot.task = asyncio.ensure_future(self._run_slot(handle.run_id, slot, spec, plan, bundle))
        statuses: list[str] = []
        try:
            results = await asyncio.gather(*(s.task for s in handle._slots), return_exceptions=True)
        except asyncio.CancelledError:
            handle.cancel()
            await asyncio.gather(*(s.task for s in handle._slots), return_exceptions=True)
            self._emit(RunFinished(handle.run_id, "cancelled"))
            raise
        for r in results:
            statuses.append(r if isinstance(r, str) else "error")
        if all(s == "ok" for s in statuses):
            overall = "ok"
        elif all(s == "cancelled" for s in statuses):
            overall = "cancelled"
        elif any(s == "ok" for s in statuses):
            overall = "partial"
        else:
            overall = "error"
        self._emit(RunFinished(handle.run_id, overall))

    async def _run_slot(self, run_id: str, slot: _Slot, spec: RunSpec, plan: PromptPlan, bundle: UserBundle) -> str:
        outputs: dict[str, str] = {}
        final: ResponseFinished | None = None
        for n, step in enumerate(plan.steps):
            is_final = n == len(plan.steps) - 1
            messages = fill(step, outputs)
            finished = await self._stream_step(run_id, slot, step.name, is_final, messages, spec, bundle)
            if finished.status != "ok":
                return finished.status
            outputs[step.name] = finished.text
            final = finished
        if final is not None and self._judges:
            await self._judge(run_id, final, spec, plan, bundle, slot.model)
        return "ok"

    async def _stream_step(
        self,
        run_id: str,
        slot: _Slot,
        step: str,
        is_final: bool,
        messages: list[Message],
        spec: RunSpec,
        bundle: UserBundle,
    ) -> ResponseFinished:
        from core.providers.recording import request_hash  # light module, no SDK imports

        model = slot.model
        response_id = new_id("resp")
        slot.response_ids.append(response_id)
        req_hash = request_hash(model.id, messages, model.params)
        provider = self._provider_for(model)
        self._emit(ResponseStarted(run_id, response_id, model, slot.index, step, is_final, req_hash))
        parts: list[str] = []
        chunks: list[tuple[float, str]] = []
        usage: Usage | None = None
        status, error = "ok", None
        t0 = time.monotonic()
        first: float | None = None
        limit = self._limits.setdefault(model.provider, asyncio.Semaphore(self.options.per_provider))
        attempts = 0 if getattr(provider, "retries_itself", False) else self.options.retries
        try:
            async with limit:
                for attempt in range(attempts + 1):
                    outcome = await self._consume(
                        provider, model, messages, spec, bundle, response_id, parts, chunks, t0
                    )
                    usage = outcome.usage or usage
                    first = first or outcome.first
                    if outcome.error is None:
                        break
                    err = outcome.error
                    retryable = (
                        err.before_first_byte and not parts and (err.kind in RETRYABLE or (err.status or 0) >= 500)
                    )
                    if not retryable or attempt == attempts:
                        status, error = "error", err.message
                        break
                    await asyncio.sleep(self._retry_delay(err, attempt))
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

    async def _consume(
        self,
        provider: Provider,
        model: ModelSpec,
        messages: list[Message],
        spec: RunSpec,
        bundle: UserBundle,
        response_id: str,
        parts: list[str],
        chunks: list,
        t0: float,
    ):
        outcome = _Outcome()
        kwargs = {}
        if _accepts_hints(provider):
            kwargs["hints"] = demo_hints(bundle, spec)
        try:
            async with asyncio.timeout(model.params.timeout_s):
                async for event in provider.stream(model, messages, **kwargs):
                    if isinstance(event, Delta):
                        if not event.text:
                            continue
                        if outcome.first is None:
                            outcome.first = event.t
                        parts.append(event.text)
                        chunks.append((round(event.t - t0, 4), event.text))
                        self._emit(TokensArrived(response_id, event.text, event.t))
                    elif isinstance(event, Usage):
                        outcome.usage = event
                    elif isinstance(event, Error):
                        outcome.error = event
                        return outcome
                    elif isinstance(event, Done):
                        return outcome
        except TimeoutError:
            outcome.error = Error(
                f"no complete answer within the {model.params.timeout_s:g} s deadline "
                "(raise timeout_s for slow models)",
                kind="timeout",
                before_first_byte=not parts,
            )
        return outcome

    def _retry_delay(self, err: Error, attempt: int) -> float:
        retry_after = getattr(err, "retry_after", None)
        if retry_after is not None:
            return max(0.0, float(retry_after))
        return self.options.backoff_s * (2**attempt)

    def _finished(
        self, run_id, response_id, slot, step, is_final, status, error, parts, chunks, usage, t0, first, provider, model
    ) -> ResponseFinished:
        end = time.monotonic()
        in_tok = usage.input_tokens if usage else None
        out_tok = usage.output_tokens if usage else None
        try:
            cost = provider.cost_usd(model, in_tok, out_tok) if usage else None
        except Exception:
            cost = None
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
            cache_hit=bool(getattr(provider, "is_replay", False)),
            chunks=tuple(chunks) if not getattr(provider, "is_replay", False) else (),
        )

    # -- judging -------------------------------------------------------------------------
    async def _judge(
        self,
        run_id: str,
        final: ResponseFinished,
        spec: RunSpec,
        plan: PromptPlan,
        bundle: UserBundle,
        model: ModelSpec,
    ) -> None:
        query = bundle.query(spec.query_id)
        item = JudgeInput(bundle, query, spec.expression_type, plan, final.text, model.id)

        async def complete(judge_spec: ModelSpec, messages: list[Message]) -> Completion:
            provider = self._provider_for(judge_spec)
            limit = self._limits.setdefault(judge_spec.provider, asyncio.Semaphore(self.options.per_provider))
            async with limit:
                return await collect(provider, judge_spec, messages)

        judgments = await judge_answer(self._judges, item, complete)
        for j in judgments:
            self._emit(JudgeScored(run_id, final.response_id, j))


@dataclass
class _Outcome:
    first: float | None = None
    usage: Usage | None = None
    error: Error | None = None


def _accepts_hints(provider: Provider) -> bool:
    try:
        return "hints" in inspect.signature(provider.stream).parameters
    except (TypeError, ValueError):
        return False


def demo_hints(bundle: UserBundle, spec: RunSpec) -> dict:
    """Gold facts only the offline demo models may see (``demo:oracle`` is the upper bound)."""
    query = bundle.query(spec.query_id)
    pref = bundle.preference(query.preference_id).text if query.preference_id else query.gold_preference
    return {"gold_preference": pref, "query_kind": query.kind, "options": list(query.options), "answer": query.answer}
