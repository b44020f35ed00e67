"""Issue 22's acceptance check: the estimate of a 10-query × Extreme grid on one sample user shows
what caching saves, and every scenario agrees with arithmetic done here from prices.toml.

maya (a sample user) has 32 queries; the grid takes her first 10 (p1-* to p3-mcq: open, MCQ and
true/false), expression type 1, zero-shot. Extreme (35K interval + 210K tail filler) makes ~252K
-token prompts: the models are ones whose window takes them (1M tokens), so the plans pass the
window check as a real batch's would (an estimate; nothing is sent).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.batch import open_batch
from app.workbench import Workbench
from core.history.tokens import MESSAGE_OVERHEAD, REPLY_PRIMING, count_tokens
from core.providers import pricing
from core.run.cost_scenarios import BATCH, BATCH_CACHING, CACHING, LIST, SCENARIOS
from core.run.estimate import ASSUMED_OUTPUT_TOKENS
from core.run.grid import Grid
from core.settings import Settings
from tui.cli import main

QUERIES = ["p1-open", "p1-mcq", "p1-tf-yes", "p1-tf-no", "p2-open", "p2-mcq", "p2-tf-yes", "p2-tf-no"]
QUERIES += ["p3-open", "p3-mcq"]
SONNET, GPT = "anthropic:claude-sonnet-4-6", "openai:gpt-4.1"
PRICES = tomllib.loads(Path(pricing.__file__).with_name("prices.toml").read_text())


def sample_db(tmp_path) -> Path:
    path = tmp_path / "prefscope.db"
    Workbench.open(Settings(db=path), path).close()  # the sample users and their filler pool
    return path


def expected_usd(model: str, *, prompt_tokens: int, calls: int, prefix: int) -> dict[str, float]:
    """The four scenarios by hand: every call sends the same ``prefix`` tokens before its question;
    the first call writes it (Anthropic only: OpenAI charges no write), the others read it."""
    provider, name = model.split(":")
    p, off = PRICES[provider][name], PRICES["batch_discount"][provider]
    out = calls * ASSUMED_OUTPUT_TOKENS * p["output"]
    read = (calls - 1) * prefix
    write = prefix if "cache_write" in p else 0
    full = (prompt_tokens * p["input"] + out) / 1e6
    cached = ((prompt_tokens - read - write) * p["input"] + read * p["cache_read"] + out) / 1e6
    cached += write * p.get("cache_write", 0) / 1e6
    return {LIST.name: full, CACHING.name: cached, BATCH.name: full * (1 - off), BATCH_CACHING.name: cached * (1 - off)}


async def test_extreme_grid_estimate_shows_the_caching_saving_priced_from_the_table(tmp_path):
    path = sample_db(tmp_path)
    wb = Workbench.open(Settings(db=path), path, sample_data=False)
    grid = Grid(
        name="extreme-10",
        users=["maya"],
        queries=QUERIES,
        expression_types=[1],
        contexts=["extreme"],
        methods=["zero-shot"],
        models=[SONNET, GPT],
    )
    session = open_batch(wb, grid, owns_workbench=True)
    try:
        est = await session.estimate()  # the path `prefscope batch` takes: plans built by prepare
        plans = {c.plan_key: await session.cell_runner.plan_for(c) for c in session.cells}
    finally:
        session.close()

    assert len(session.cells) == 20 and len(plans) == 10 and not est.failures
    steps = [p.steps[0] for p in plans.values()]
    assert all(len(p.steps) == 1 for p in plans.values())
    history = steps[0].messages[:-1]
    assert all(s.messages[:-1] == history for s in steps)  # one shared history, ten questions
    prefixes = {s.tokens - count_tokens(s.messages[-1].content) - MESSAGE_OVERHEAD - REPLY_PRIMING for s in steps}
    (prefix,) = prefixes
    assert prefix > 200_000
    prompt_tokens = sum(s.tokens for s in steps)
    assert est.input_tokens == 2 * prompt_tokens
    assert est.cache_read_tokens == 2 * 9 * prefix and est.cache_write_tokens == prefix

    by_model = [expected_usd(m, prompt_tokens=prompt_tokens, calls=10, prefix=prefix) for m in (SONNET, GPT)]
    for s in SCENARIOS:
        assert est.scenario_cost_usd(s) == pytest.approx(sum(e[s.name] for e in by_model), rel=1e-9), s.name
    saving = est.caching_saving_usd
    assert saving is not None and saving > 0
    assert saving == pytest.approx(sum(e[LIST.name] - e[CACHING.name] for e in by_model), rel=1e-9)


def test_batch_dry_run_prints_the_four_scenarios(tmp_path, monkeypatch):
    path = sample_db(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    args = ["--db", str(path), "batch", "--dry-run", "--user", "maya", "--expression", "1", "--context", "extreme"]
    args += [a for q in QUERIES for a in ("--query", q)] + ["--method", "zero-shot", "--model", SONNET]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = result.output

    def row(label: str) -> str:
        (line,) = [ln for ln in out.splitlines() if ln.strip().startswith(label + " ")]
        return line

    prompt_tokens = int(re.search(r"prompt tokens\s+([\d,]+)", out).group(1).replace(",", ""))
    read, written = (
        int(n.replace(",", "")) for n in re.search(r"([\d,]+) prompt tokens read .*?([\d,]+) written", out).groups()
    )
    assert read == 9 * written  # ten calls of one history: written once, read nine times
    e = expected_usd(SONNET, prompt_tokens=prompt_tokens, calls=10, prefix=written)
    for s in SCENARIOS:
        assert f"${e[s.name]:,.4f}" in row(s.label), (s.label, out)
    assert f"saves ${e[LIST.name] - e[CACHING.name]:,.4f}" in row(CACHING.label)
    assert "best-effort" in row(BATCH_CACHING.label)
    assert f"prices of {PRICES['as_of']}" in row(LIST.label)
