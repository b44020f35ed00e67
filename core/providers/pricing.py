"""Prices and context windows from the bundled ``prices.toml`` (no litellm import needed).

Unknown model → ``None`` (never 0): a wrong zero would make a paid run look free.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources

from core.providers.events import Usage

_DATED = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")
#: Top-level tables of prices.toml that are not a provider's models.
_NOT_PROVIDERS = ("batch_discount",)


@lru_cache(maxsize=1)
def table() -> dict:
    with resources.files("core.providers").joinpath("prices.toml").open("rb") as fh:
        return tomllib.load(fh)


def entry(provider: str, model: str) -> dict | None:
    if provider in _NOT_PROVIDERS:
        return None
    models = table().get(provider) or {}
    if model in models:
        return models[model]
    base = _DATED.sub("", model)
    return models.get(base)


def batch_discount(provider: str) -> float | None:
    """Fraction taken off every price in the provider's batch API (0.5 = half price), or None."""
    value = (table().get("batch_discount") or {}).get(provider)
    return None if value is None else float(value)


def cost_usd(
    provider: str,
    model: str,
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    batch: bool = False,
) -> float | None:
    """USD for one call (or a sum of calls). ``input_tokens`` is every prompt token, the cache's
    reads and writes included; those are charged at ``cache_read`` / ``cache_write`` — or at the
    input price when the model has none (OpenAI charges nothing extra to write its cache).
    ``batch``: less the provider's batch discount, None when it has none."""
    e = entry(provider, model)
    if e is None or input_tokens is None or output_tokens is None:
        return None
    read, write = cache_read_tokens or 0, cache_write_tokens or 0
    plain = max(input_tokens - read - write, 0)  # a provider's parts never exceed its total
    usd = (
        plain * e["input"]
        + read * e.get("cache_read", e["input"])
        + write * e.get("cache_write", e["input"])
        + output_tokens * e["output"]
    ) / 1_000_000
    if not batch:
        return usd
    discount = batch_discount(provider)
    return None if discount is None else usd * (1 - discount)


def context_window(provider: str, model: str) -> int | None:
    e = entry(provider, model)
    return int(e["context"]) if e and e.get("context") else None


def as_of() -> str:
    return str(table().get("as_of", "unknown"))


def usage_cost(provider: str, model: str, usage: Usage, *, batch: bool = False) -> float | None:
    """:func:`cost_usd` of one call's reported usage."""
    return cost_usd(
        provider,
        model,
        usage.input_tokens,
        usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens or 0,
        cache_write_tokens=usage.cache_write_tokens or 0,
        batch=batch,
    )
