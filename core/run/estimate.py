"""Before sending: how many tokens a run or a batch sends and what it costs where a price is known.

One estimate for the TUI's line (one run: every model gets the same plan) and `prefscope batch`'s
table (many cells). Judge calls are not included.

Besides the list price it prices the other scenarios of :mod:`core.run.cost_scenarios`: with
caching, batch discount, batch + caching. For caching it replays the calls in order, per model, and
counts the prompt tokens a provider's cache would serve (see ``CACHE_KIND``): the history a user's
queries share, cut at whole messages before the final user message, from 1,024 tokens on. It
assumes each prefix is still cached when reused (Anthropic keeps it 5 minutes after its last use)
and that calls in flight together do not race for it: a lower bound on what caching costs.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from core.history.tokens import MESSAGE_OVERHEAD, count_tokens
from core.plan import OUTPUT_MARKER, PromptPlan, PromptStep
from core.providers.base import ModelSpec
from core.providers.events import Usage
from core.providers.prompt_cache import cache_cut
from core.run.cost_scenarios import CACHE_KIND, CACHING, LIST, MIN_CACHED_TOKENS, SCENARIOS, Scenario
from core.run.grid import Cell

#: Output tokens assumed per call when a model has no max_tokens.
ASSUMED_OUTPUT_TOKENS = 400


class CostOf(Protocol):
    """A call's usage -> USD at the model's prices (cache reads and writes at the cache prices;
    ``batch``: at the batch discount), or None when the price is unknown."""

    def __call__(self, model: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None: ...


@dataclass
class _Prefixes:
    """One step's messages as cache keys: ``chain[i]`` stands for messages[:i+1], ``tokens[i]`` is
    what they cost; ``reusable`` leading messages can come from a cache, ``cut`` ends the prefix a
    breakpoint cache stores (None: nothing worth caching)."""

    chain: list[bytes]
    tokens: list[int]
    reusable: int
    cut: int | None


@dataclass
class _ModelCalls:
    """One model's calls so far: token totals and what its provider's cache would serve."""

    model: ModelSpec
    input_tokens: int = 0
    output_tokens: int = 0
    read_tokens: int = 0
    #: automatic caches: every prefix sent so far
    sent: set[bytes] = field(default_factory=set)
    #: breakpoint caches: how often each prefix is sent, and what its first call writes
    uses: Counter[bytes] = field(default_factory=Counter)
    first_write: dict[bytes, int] = field(default_factory=dict)

    @property
    def write_tokens(self) -> int:
        """A breakpoint is marked only on a prefix sent more than once (the provider's "auto")."""
        return sum(n for key, n in self.first_write.items() if self.uses[key] > 1)

    def send(self, p: _Prefixes) -> None:
        kind = CACHE_KIND.get(self.model.provider)
        if kind == "automatic":
            self.read_tokens += _cached(p.tokens, _longest_sent(p, self.sent))
            self.sent.update(p.chain)
        elif kind == "breakpoint" and p.cut is not None and p.reusable > p.cut:
            key, n = p.chain[p.cut], p.tokens[p.cut]
            if n < MIN_CACHED_TOKENS:
                return
            if self.uses[key]:
                self.read_tokens += n
            else:
                self.first_write[key] = n
            self.uses[key] += 1


def _longest_sent(p: _Prefixes, sent: set[bytes]) -> int:
    """How many leading messages an earlier call sent (every prefix of a sent prefix was sent, so
    membership is monotone: binary search)."""
    lo, hi = 0, min(p.reusable, (p.cut + 1) if p.cut is not None else 0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if p.chain[mid - 1] in sent:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _cached(tokens: list[int], messages: int) -> int:
    n = tokens[messages - 1] if messages else 0
    return n if n >= MIN_CACHED_TOKENS else 0


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
    _cost_of: CostOf | None = field(default=None, repr=False)
    _by_model: dict[str, _ModelCalls] = field(default_factory=dict, repr=False)
    #: message digest -> tokens (content + overhead): a history is counted once per estimate
    _message_tokens: dict[bytes, int] = field(default_factory=dict, repr=False)
    #: the last steps seen -> their prefixes (a run's models, a cell's models share a plan)
    _steps: OrderedDict[int, tuple[PromptStep, _Prefixes]] = field(default_factory=OrderedDict, repr=False)

    @property
    def cost_usd(self) -> float | None:
        """Sum of the known list prices; None when only models without a price are in the estimate."""
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
            cost = cost_of(model, Usage(plan.total_tokens, out))
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
        self._cost_of = cost_of
        calls = self._by_model.setdefault(model.id, _ModelCalls(model))
        calls.input_tokens += plan.total_tokens
        calls.output_tokens += out
        if CACHE_KIND.get(model.provider):
            for step in plan.steps:
                calls.send(self._prefixes(step))

    # -- caching and batch scenarios ---------------------------------------------------
    @property
    def cache_read_tokens(self) -> int:
        """Prompt tokens a provider's cache would serve (priced at its cache-read price)."""
        return sum(c.read_tokens for c in self._by_model.values())

    @property
    def cache_write_tokens(self) -> int:
        """Prompt tokens written to a breakpoint cache (Anthropic: at its cache-write price)."""
        return sum(c.write_tokens for c in self._by_model.values())

    def scenario_cost(self, scenario: Scenario) -> tuple[float | None, list[str]]:
        """USD of the priced models under ``scenario`` (None when no model has a price there) and
        the models without one. The list price is :attr:`cost_usd`."""
        if scenario == LIST:
            return self.cost_usd, list(self.unpriced_models)
        usd, priced, unpriced = 0.0, False, []
        for c in self._by_model.values():
            cost = self._price(c, scenario)
            if cost is None:
                unpriced.append(c.model.id)
            else:
                usd, priced = usd + cost, True
        return (usd if priced or not unpriced else None), unpriced

    def scenario_cost_usd(self, scenario: Scenario) -> float | None:
        return self.scenario_cost(scenario)[0]

    def scenario_cost_text(self, scenario: Scenario) -> str:
        usd, unpriced = self.scenario_cost(scenario)
        return _cost_text(usd, unpriced)

    @property
    def caching_saving_usd(self) -> float | None:
        """List price − with caching, over the models priced in both (negative: writes cost more)."""
        full, cached = self.scenario_cost_usd(LIST), self.scenario_cost_usd(CACHING)
        return None if full is None or cached is None else full - cached

    def scenario_costs(self) -> dict[str, float | None]:
        return {s.name: self.scenario_cost_usd(s) for s in SCENARIOS}

    def _price(self, c: _ModelCalls, scenario: Scenario) -> float | None:
        if self._cost_of is None:
            return None
        read, write = (c.read_tokens, c.write_tokens) if scenario.caching else (0, 0)
        try:
            usage = Usage(c.input_tokens, c.output_tokens, cache_read_tokens=read, cache_write_tokens=write)
            return self._cost_of(c.model, usage, batch=scenario.batch)
        except Exception:  # a cost function without these prices: unknown here, not a crash
            return None

    def _prefixes(self, step: PromptStep) -> _Prefixes:
        hit = self._steps.get(id(step))
        if hit is not None and hit[0] is step:
            return hit[1]
        chain, tokens = [], []
        digest, total = b"", 0
        reusable = len(step.messages)
        for i, m in enumerate(step.messages):
            if OUTPUT_MARKER.search(m.content):  # an earlier step's reply: unknown until sent
                reusable = i
                break
            text = hashlib.blake2b(m.content.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            n = self._message_tokens.get(text)
            if n is None:
                n = self._message_tokens[text] = count_tokens(m.content) + MESSAGE_OVERHEAD
            digest = hashlib.blake2b(digest + m.role.encode() + text, digest_size=16).digest()
            total += n
            chain.append(digest)
            tokens.append(total)
        prefixes = _Prefixes(chain, tokens, reusable, cache_cut(step.messages))
        self._steps[id(step)] = (step, prefixes)
        while len(self._steps) > 16:
            self._steps.popitem(last=False)
        return prefixes

    # -- text ----------------------------------------------------------------------------
    def cost_text(self) -> str:
        return _cost_text(self.cost_usd, self.unpriced_models)

    def text(self) -> str:
        """One run's line: the plan's prompt tokens × its models, the cost where known."""
        n = self.cells
        per_model = self.input_tokens // n if n else 0
        parts = [f"{per_model:,} prompt tokens × {n} model{'s' if n != 1 else ''} = {self.input_tokens:,} tokens in"]
        if self._paid_priced:
            parts.append(f"≈ ${self._known_usd:.4f} with ≤ {self.output_tokens:,} tokens out")
            cached = self.scenario_cost_usd(CACHING)
            if cached is not None and f"{cached:.4f}" != f"{self._known_usd:.4f}":
                parts.append(f"≈ ${cached:.4f} with caching")
        if self.unpriced_models:
            parts.append(f"cost n/a for {', '.join(self.unpriced_models)}")
        if self.demo_models:
            d = len(self.demo_models)
            parts.append(f"{d} demo model{'s' if d != 1 else ''} free")
        return " · ".join(parts)


def _cost_text(usd: float | None, unpriced: Sequence[str]) -> str:
    if usd is None:
        return "n/a"
    text = f"${usd:,.4f}"
    if unpriced:
        text += f" + n/a for {', '.join(unpriced)}"
    return text


def estimate_run(models: Sequence[ModelSpec], plan: PromptPlan, cost_of: CostOf) -> Estimate:
    """Every model of a run receives the same plan."""
    est = Estimate()
    for model in models:
        est.add(model, plan, cost_of)
    return est


async def estimate_cells(
    cells: Iterable[Cell], plan_of: Callable[[Cell], Awaitable[PromptPlan]], cost_of: CostOf
) -> Estimate:
    """A batch: each cell's plan (built or cached by ``plan_of``) × its model, in running order."""
    est = Estimate()
    for cell in cells:
        try:
            plan = await plan_of(cell)
        except Exception as exc:
            est.cells += 1
            est.failures.append(
                f"{cell.spec.user_id}/{cell.spec.query_id} {cell.model.id} {cell.spec.method} {cell.spec.context}: {exc}"
            )
            continue
        est.add(cell.model, plan, cost_of)
    return est
