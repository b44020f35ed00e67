"""Cached-token and batch prices: ``pricing.cost_usd`` against the figures in prices.toml, and
prices.toml against the cost map it was copied from."""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path

import pytest

from core.providers import pricing

PRICES = Path(pricing.__file__).with_name("prices.toml")


def prices() -> dict:
    return tomllib.loads(PRICES.read_text())


def usd(per_million: float, tokens: int) -> float:
    return per_million * tokens / 1_000_000


def test_anthropic_reads_and_writes_are_charged_at_their_own_prices():
    p = prices()["anthropic"]["claude-sonnet-4-5"]
    read, write, plain, out = 90_000, 10_000, 2_000, 400
    expected = (
        usd(p["input"], plain) + usd(p["cache_read"], read) + usd(p["cache_write"], write) + usd(p["output"], out)
    )
    got = pricing.cost_usd(
        "anthropic", "claude-sonnet-4-5", plain + read + write, out, cache_read_tokens=read, cache_write_tokens=write
    )
    assert got == pytest.approx(expected)
    # the figures the estimate relies on: reading is cheaper than input, writing dearer
    assert p["cache_read"] < p["input"] < p["cache_write"]
    assert got < pricing.cost_usd("anthropic", "claude-sonnet-4-5", plain + read + write, out)


def test_openai_has_no_write_price_so_writes_cost_the_input_price():
    p = prices()["openai"]["gpt-4o"]
    assert "cache_write" not in p
    list_price = pricing.cost_usd("openai", "gpt-4o", 50_000, 300)
    assert pricing.cost_usd("openai", "gpt-4o", 50_000, 300, cache_write_tokens=40_000) == pytest.approx(list_price)
    read = pricing.cost_usd("openai", "gpt-4o", 50_000, 300, cache_read_tokens=40_000)
    assert read == pytest.approx(list_price - usd(p["input"] - p["cache_read"], 40_000))


def test_batch_takes_the_providers_discount_off_every_part():
    t = prices()
    for provider, model in (("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4o")):
        kw = {"cache_read_tokens": 30_000, "cache_write_tokens": 5_000}
        full = pricing.cost_usd(provider, model, 40_000, 400, **kw)
        batch = pricing.cost_usd(provider, model, 40_000, 400, batch=True, **kw)
        assert batch == pytest.approx(full * (1 - t["batch_discount"][provider]))
        assert pricing.batch_discount(provider) == t["batch_discount"][provider]


def test_dated_snapshots_get_their_alias_cache_prices():
    dated = pricing.cost_usd("anthropic", "claude-sonnet-4-5-20250929", 10_000, 10, cache_read_tokens=9_000)
    assert dated == pricing.cost_usd("anthropic", "claude-sonnet-4-5", 10_000, 10, cache_read_tokens=9_000)


def test_unknown_prices_are_none_never_zero(monkeypatch):
    assert pricing.cost_usd("openai", "no-such-model", 10, 10, cache_read_tokens=5, batch=True) is None
    assert pricing.cost_usd("batch_discount", "openai", 10, 10) is None  # not a provider's table
    table = {"acme": {"m": {"input": 1.0, "output": 2.0}}}
    monkeypatch.setattr(pricing, "table", lambda: table)
    assert pricing.cost_usd("acme", "m", 1_000_000, 0, batch=True) is None  # no batch discount known
    # no cache prices: cached tokens at the input price
    assert pricing.cost_usd("acme", "m", 1_000_000, 0, cache_read_tokens=600_000, cache_write_tokens=1) == 1.0


def _cost_map() -> dict:
    spec = importlib.util.find_spec("litellm")  # located only: importing it takes seconds
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the bundled cost map is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "model_prices_and_context_window_backup.json"
    if not path.exists():
        pytest.skip(f"no cost map at {path}")
    return json.loads(path.read_text())


def test_cache_and_batch_prices_are_the_cost_maps_own():
    cost_map, t = _cost_map(), prices()
    fields = {"cache_read": "cache_read_input_token_cost", "cache_write": "cache_creation_input_token_cost"}
    for provider in ("openai", "anthropic"):
        discount = t["batch_discount"][provider]
        for model, entry in t[provider].items():
            source = cost_map[model]
            for ours, theirs in fields.items():
                if theirs in source:
                    assert entry[ours] == pytest.approx(source[theirs] * 1e6), (model, ours)
                else:
                    assert ours not in entry, f"{model}: {ours} is not in the cost map"
            for part in ("input", "output"):
                batch = source[f"{part}_cost_per_token_batches"] * 1e6
                assert batch == pytest.approx(entry[part] * (1 - discount)), (model, part)
