"""Prices and context windows from the bundled ``prices.toml`` (no litellm import needed).

Unknown model → ``None`` (never 0): a wrong zero would make a paid run look free.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources

_DATED = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")


@lru_cache(maxsize=1)
def table() -> dict:
    with resources.files("core.providers").joinpath("prices.toml").open("rb") as fh:
        return tomllib.load(fh)


def entry(provider: str, model: str) -> dict | None:
    models = table().get(provider) or {}
    if model in models:
        return models[model]
    base = _DATED.sub("", model)
    return models.get(base)


def cost_usd(provider: str, model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
    e = entry(provider, model)
    if e is None or input_tokens is None or output_tokens is None:
        return None
    return (input_tokens * e["input"] + output_tokens * e["output"]) / 1_000_000


def context_window(provider: str, model: str) -> int | None:
    e = entry(provider, model)
    return int(e["context"]) if e and e.get("context") else None


def as_of() -> str:
    return str(table().get("as_of", "unknown"))
