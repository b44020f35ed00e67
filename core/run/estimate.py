"""Before sending: how many tokens a run or a batch sends and what it costs where a price is known.

One estimate for the TUI's line (one run: every model gets the same plan) and `prefscope batch`'s
table (many cells). Judge calls are not included.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from core.plan import PromptPlan
from core.providers.base import ModelSpec
from core.run.grid import Cell

#: Output tokens assumed per call when a model has no max_tokens.
ASSUMED_OUTPUT_TOKENS = 400

#: (model, input tokens, output tokens) -> USD, or None when the price is unknown.
CostOf = Callable[[ModelSpec, int, int], float | None]


@dataclass
class Estimate:
    #: (plan, model) pairs: one per model of a run, one per cell of a batch.
    cells: int = 0
    input_tokens: int = 0
    #: Assumed: each model's max_tokens, else ASSUMED_OUTPUT_TOKENS per call.
    output_tokens: int = 0
    calls: int = 0
    unpriced_models: list[str] = field(default_factory=list)
    demo_models: list[str] = field(default_factory=list)
    #: Cells whose plan could not be built (they are recorded as errors when the batch runs).
    failures: list[str] = field(default_factory=list)
    #: Prompt + output tokens going to models without a known price.
    unpriced_tokens: int = 0
    _known_usd: float = 0.0
    _paid_priced: bool = False
    _priced: bool = False

    @property
    def cost_usd(self) -> float | None:
        """Sum of the known prices; None when only models without a price are in the estimate."""
        return None if self.unpriced_models and not self._priced else self._known_usd

    def add(self, model: ModelSpec, plan: PromptPlan, cost_of: CostOf) -> None:
        steps = len(plan.steps)
        out = (model.params.max_tokens or ASSUMED_OUTPUT_TOKENS) * steps
        self.cells += 1
        self.input_tokens += plan.total_tokens
        self.output_tokens += out
        self.calls += steps
        if model.is_demo and model.id not in self.demo_models:
            self.demo_models.append(model.id)
        try:
            cost = cost_of(model, plan.total_tokens, out)
        except Exception:  # an unknown provider has no price; the run itself will say why
            cost = None
        if cost is None:
            self.unpriced_tokens += plan.total_tokens + out
            if model.id not in self.unpriced_models:
                self.unpriced_models.append(model.id)
        else:
            self._priced = True
            self._paid_priced |= not model.is_demo
            self._known_usd += cost

    def cost_text(self) -> str:
        if self.cost_usd is None:
            return "n/a"
        text = f"${self.cost_usd:,.4f}"
        if self.unpriced_models:
            text += f" + n/a for {', '.join(self.unpriced_models)}"
        return text

    def text(self) -> str:
        """One run's line: the plan's prompt tokens × its models, the cost where known."""
        n = self.cells
        per_model = self.input_tokens // n if n else 0
        parts = [f"{per_model:,} prompt tokens × {n} model{'s' if n != 1 else ''} = {self.input_tokens:,} tokens in"]
        if self._paid_priced:
            parts.append(f"≈ ${self._known_usd:.4f} with ≤ {self.output_tokens:,} tokens out")
        if self.unpriced_models:
            parts.append(f"cost n/a for {', '.join(self.unpriced_models)}")
        if self.demo_models:
            d = len(self.demo_models)
            parts.append(f"{d} demo model{'s' if d != 1 else ''} free")
        return " · ".join(parts)


def estimate_run(models: Sequence[ModelSpec], plan: PromptPlan, cost_of: CostOf) -> Estimate:
    """Every model of a run receives the same plan."""
    est = Estimate()
    for model in models:
        est.add(model, plan, cost_of)
    return est


async def estimate_cells(
    cells: Iterable[Cell], plan_of: Callable[[Cell], Awaitable[PromptPlan]], cost_of: CostOf
) -> Estimate:
    """A batch: each cell's plan (built or cached by ``plan_of``) × its model."""
    est = Estimate()
    for cell in cells:
        try:
            plan = await plan_of(cell)
        except Exception as exc:
            est.cells += 1
            est.failures.append(
                f"{cell.spec.user_id}/{cell.spec.query_id} {cell.spec.method} {cell.spec.context}: {exc}"
            )
            continue
        est.add(cell.model, plan, cost_of)
    return est
