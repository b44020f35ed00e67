"""Running one batch cell: its plan (built once per plan key), then one shared engine."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

from core.judges.base import Judge
from core.model import UserBundle
from core.plan import PromptPlan
from core.run.batch import CellOutcome, Progress
from core.run.engine import Engine, EngineOptions, ProviderFor
from core.run.grid import Cell
from core.run.probes import probe_specs, run_probes
from core.run.spec import ResponseFinished, RunEvent, RunFinished, RunSpec, RunStarted


class EngineCellRunner:
    """Runs cells through one shared :class:`Engine`, so its per-provider limit holds batch-wide.

    ``prepare(spec, bundle)`` builds the prompt plan (the workbench's prepare, which is
    ``core.run.prepare.prepare``); ``load_bundle(user_id)`` reads a user (cached by its owner).
    Plans are shared by all cells with the same plan key (the models differ) and kept in an LRU of
    ``plan_cache`` entries; cells of one key wait for the first one's plan rather than building
    it again (a summaries context would otherwise pay for every summary once per model).
    """

    def __init__(
        self,
        provider_for: ProviderFor,
        emit: Callable[[RunEvent], None],
        *,
        prepare: Callable[[RunSpec, UserBundle], Awaitable[PromptPlan]],
        load_bundle: Callable[[str], UserBundle],
        judges: Sequence = (),
        options: EngineOptions | None = None,
        progress: Progress | None = None,
        plan_cache: int = 256,
        probe_judges: Callable[[RunSpec], Sequence[Judge]] | None = None,
        estimate: Callable[[RunSpec, UserBundle], Awaitable[PromptPlan]] | None = None,
    ):
        """``probe_judges``: when given, every cell that finished is followed by its knowledge
        probes (``core.run.probes``), scored by the judges it returns for a probe spec.
        ``estimate``: builds an estimate's plan, which never embeds (default: ``prepare``); a plan
        whose retrieval it stood in for is built again before the cell runs."""
        self._downstream = emit
        self.engine = Engine(provider_for, self._emit, judges=judges, options=options)
        self._prepare = prepare
        self._estimate = estimate or prepare
        self.bundle = load_bundle
        self._plans: OrderedDict[str, PromptPlan] = OrderedDict()
        self._building: dict[str, asyncio.Lock] = {}
        self._plan_cache = max(1, plan_cache)
        self._status: dict[str, str] = {}
        self._errors: dict[str, str] = {}
        self._began: set[str] = set()
        self._finished: dict[str, list[int]] = {}
        self._probe_judges = probe_judges
        self.progress = progress or Progress()

    async def plan_for(self, cell: Cell, *, estimate: bool = False) -> PromptPlan:
        key = cell.plan_key
        async with self._building.setdefault(key, asyncio.Lock()):
            if key in self._plans and (estimate or not self._plans[key].retrieval_stand_in):
                self._plans.move_to_end(key)
                return self._plans[key]
            build = self._estimate if estimate else self._prepare
            plan = await build(cell.spec, self.bundle(cell.spec.user_id))
            self._plans[key] = plan
            while len(self._plans) > self._plan_cache:
                self._plans.popitem(last=False)
            return plan

    def _emit(self, event: RunEvent) -> None:
        if isinstance(event, ResponseFinished):
            self.progress.add_usage(event.input_tokens, event.output_tokens, event.cost_usd)
            if event.error and event.status != "cancelled":
                self._errors.setdefault(event.run_id, event.error)
            if event.is_final_step and event.status in ("ok", "incomplete"):
                self._finished.setdefault(event.run_id, []).append(event.slot)
        elif isinstance(event, RunStarted):
            self._began.add(event.run_id)
        elif isinstance(event, RunFinished):
            self._status[event.run_id] = event.status
        self._downstream(event)

    def began(self, run_id: str) -> bool:
        """The engine has started (and recorded) this run; until then a stop leaves no run behind."""
        return run_id in self._began

    async def __call__(self, cell: Cell, run_id: str) -> CellOutcome:
        try:
            bundle = self.bundle(cell.spec.user_id)
            plan = await self.plan_for(cell)
        except Exception as exc:
            return CellOutcome("error", f"could not prepare the prompt: {type(exc).__name__}: {exc}")
        await self.engine.run(cell.spec, plan, bundle, run_id=run_id)
        self._began.discard(run_id)
        finished = [cell.spec.models[slot].id for slot in sorted(self._finished.pop(run_id, []))]
        if self._probe_judges is not None and finished:
            await self._probe(cell, run_id, bundle, finished)
        return CellOutcome(self._status.pop(run_id, "error"), self._errors.pop(run_id, None))

    async def _probe(self, cell: Cell, run_id: str, bundle: UserBundle, models: list[str]) -> None:
        """The cell's knowledge probes; a probe that cannot run is reported, the cell stays done."""
        assert self._probe_judges is not None
        specs = probe_specs(cell.spec, run_id, bundle, models)
        try:
            probe_ids = await run_probes(self.engine, self._probe_judges, self._prepare, specs, bundle)
        except Exception as exc:  # a window refusal, an unknown pool: the answer itself is stored
            self.progress.errors.append(f"probes of {run_id}: {type(exc).__name__}: {exc}")
            return
        for probe_id in probe_ids:  # their outcomes are not cells'
            self._status.pop(probe_id, None)
            self._errors.pop(probe_id, None)
            self._began.discard(probe_id)
            self._finished.pop(probe_id, None)
