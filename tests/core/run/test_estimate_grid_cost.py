"""``grid_cost``: a grid described by numbers, priced four ways from prices.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from core.providers import pricing
from core.run.cost_scenarios import grid_cost

PRICES = tomllib.loads(Path(pricing.__file__).with_name("prices.toml").read_text())


def test_each_history_is_written_once_and_read_by_its_other_queries():
    g = grid_cost(
        "anthropic:claude-sonnet-4-5",
        users=3,
        queries_per_user=5,
        histories_per_user=2,
        prompt_tokens=40_000,
        shared_prefix_tokens=39_900,
        output_tokens=400,
    )
    p, off = PRICES["anthropic"]["claude-sonnet-4-5"], PRICES["batch_discount"]["anthropic"]
    calls, histories = 30, 6
    assert (g.calls, g.cache_read_tokens, g.cache_write_tokens) == (calls, histories * 4 * 39_900, histories * 39_900)
    full = (calls * 40_000 * p["input"] + calls * 400 * p["output"]) / 1e6
    cached = (
        (calls * 40_000 - histories * 5 * 39_900) * p["input"]
        + histories * 4 * 39_900 * p["cache_read"]
        + histories * 39_900 * p["cache_write"]
        + calls * 400 * p["output"]
    ) / 1e6
    assert g.usd == pytest.approx(
        {"list": full, "caching": cached, "batch": full * (1 - off), "batch+caching": cached * (1 - off)}
    )
    assert g.fits_window is True


def test_openai_pays_nothing_to_write_and_short_or_unshared_prefixes_are_not_cached():
    g = grid_cost(
        "openai:gpt-4o",
        users=1,
        queries_per_user=3,
        prompt_tokens=150_000,
        shared_prefix_tokens=149_000,
        output_tokens=0,
    )
    p = PRICES["openai"]["gpt-4o"]
    assert g.cache_write_tokens == 0 and g.cache_read_tokens == 2 * 149_000
    assert g.usd["caching"] == pytest.approx(
        (3 * 150_000 - 2 * 149_000) * p["input"] / 1e6 + 2 * 149_000 * p["cache_read"] / 1e6
    )
    assert g.fits_window is False  # 150K > gpt-4o's 128K window
    for short in (
        grid_cost(
            "openai:gpt-4o",
            users=1,
            queries_per_user=3,
            prompt_tokens=2_000,
            shared_prefix_tokens=1_000,
            output_tokens=1,
        ),
        grid_cost(
            "openai:gpt-4o",
            users=4,
            queries_per_user=1,
            prompt_tokens=9_000,
            shared_prefix_tokens=8_000,
            output_tokens=1,
        ),
    ):
        assert short.cache_read_tokens == 0 and short.usd["caching"] == short.usd["list"]


def test_unknown_models_have_no_price_and_bad_numbers_are_refused():
    g = grid_cost("x:nobody", users=1, queries_per_user=2, prompt_tokens=10, shared_prefix_tokens=5, output_tokens=1)
    assert set(g.usd.values()) == {None} and g.fits_window is None
    with pytest.raises(ValueError):
        grid_cost(
            "openai:gpt-4o", users=1, queries_per_user=2, prompt_tokens=10, shared_prefix_tokens=11, output_tokens=1
        )
