"""The four ways a grid's calls can be paid for, and what a grid described by numbers costs in each.

* list price – every prompt token at the input price;
* with caching – the history a user's queries share is served from the provider's cache after its
  first call (Anthropic writes it once at its cache-write price, OpenAI charges nothing to write);
* batch discount – the provider's batch API (half price at both);
* batch + caching – both; the providers cache batch requests on a best-effort basis only, so this
  is the lowest figure to hope for, not a promise.

:func:`grid_cost` prices a paper-scale grid from a few numbers (no plans built), for planning.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.providers import pricing


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str
    caching: bool
    batch: bool


LIST = Scenario("list", "list price", caching=False, batch=False)
CACHING = Scenario("caching", "with caching", caching=True, batch=False)
BATCH = Scenario("batch", "batch discount", caching=False, batch=True)
BATCH_CACHING = Scenario("batch+caching", "batch + caching", caching=True, batch=True)
SCENARIOS = (LIST, CACHING, BATCH, BATCH_CACHING)

#: The providers cache no shorter prefix.
MIN_CACHED_TOKENS = 1024
#: How a provider's prompt cache fills. "automatic" (OpenAI): every prefix sent is cached, for free.
#: "breakpoint" (Anthropic): the prefix up to the message the provider marks (the last one before
#: the final user message), marked when several calls share it, written by the first of them.
#: Providers not listed: caching is not modelled (the cost stays the list price).
CACHE_KIND = {"openai": "automatic", "anthropic": "breakpoint"}


@dataclass(frozen=True)
class GridCost:
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    #: Prompt tokens served from the cache (all scenarios with caching).
    cache_read_tokens: int
    #: Prompt tokens written to the cache at the write price (breakpoint caches only).
    cache_write_tokens: int
    #: Scenario name -> USD, None where the price table has no price.
    usd: dict[str, float | None]
    #: The model's input window, None when unknown.
    context_window: int | None
    prompt_tokens: int

    @property
    def fits_window(self) -> bool | None:
        """Whether one prompt fits the model's window (None: the window is unknown)."""
        return None if self.context_window is None else self.prompt_tokens <= self.context_window


def grid_cost(
    model: str,
    *,
    users: int,
    queries_per_user: int,
    prompt_tokens: int,
    shared_prefix_tokens: int,
    output_tokens: int,
    histories_per_user: int = 1,
) -> GridCost:
    """Cost of ``users`` × ``histories_per_user`` × ``queries_per_user`` single-step calls of
    ``model`` ("provider:model"), each of ``prompt_tokens`` tokens in and ``output_tokens`` out.

    Each history (e.g. one per expression type) is the same ``shared_prefix_tokens``-token prefix
    for all of its queries: its first call writes it (breakpoint caches), the others read it."""
    if not 0 <= shared_prefix_tokens <= prompt_tokens:
        raise ValueError(f"shared_prefix_tokens must be within 0..prompt_tokens ({prompt_tokens})")
    provider, _, name = model.partition(":")
    histories = users * histories_per_user
    calls = histories * queries_per_user
    kind = CACHE_KIND.get(provider)
    reused = kind is not None and shared_prefix_tokens >= MIN_CACHED_TOKENS and queries_per_user > 1
    read = histories * (queries_per_user - 1) * shared_prefix_tokens if reused else 0
    write = histories * shared_prefix_tokens if reused and kind == "breakpoint" else 0
    tokens_in, tokens_out = calls * prompt_tokens, calls * output_tokens
    usd = {
        s.name: pricing.cost_usd(
            provider,
            name,
            tokens_in,
            tokens_out,
            cache_read_tokens=read if s.caching else 0,
            cache_write_tokens=write if s.caching else 0,
            batch=s.batch,
        )
        for s in SCENARIOS
    }
    return GridCost(
        model=model,
        calls=calls,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cache_read_tokens=read,
        cache_write_tokens=write,
        usd=usd,
        context_window=pricing.context_window(provider, name),
        prompt_tokens=prompt_tokens,
    )
