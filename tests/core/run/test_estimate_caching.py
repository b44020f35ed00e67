"""What a provider's prompt cache would serve, as the estimate counts it: a shared history read after
its first call, from 1,024 tokens on, per model; Anthropic writes only prefixes sent twice."""

from __future__ import annotations

import pytest

from core.history.tokens import MESSAGE_OVERHEAD, count_tokens
from core.methods.base import make_step
from core.plan import Message, PromptPlan
from core.providers import pricing
from core.providers.base import ModelSpec
from core.run.cost_scenarios import BATCH, BATCH_CACHING, CACHING, LIST
from core.run.estimate import ASSUMED_OUTPUT_TOKENS, Estimate, estimate_run

SONNET = ModelSpec(id="anthropic:claude-sonnet-4-5")
GPT = ModelSpec(id="openai:gpt-4o")


def cost_of(model, usage, *, batch=False):
    """The providers' prices without a provider: the price table itself."""
    return pricing.usage_cost(model.provider, model.model, usage, batch=batch)


def session(tag: str, words: int = 700) -> list[Message]:
    return [
        Message(role="user", content=" ".join(f"{tag}-request-{i}" for i in range(words))),
        Message(role="assistant", content=" ".join(f"{tag}-reply-{i}" for i in range(words))),
    ]


def plan(history: list[Message], question: str) -> PromptPlan:
    return PromptPlan(
        method="zero-shot", steps=[make_step("answer", [*history, Message(role="user", content=question)], "")]
    )


def tokens_of(messages: list[Message]) -> int:
    return sum(count_tokens(m.content) + MESSAGE_OVERHEAD for m in messages)


def test_a_shared_history_is_written_once_then_read():
    history = session("a") + session("b")
    prefix = tokens_of(history)
    assert prefix >= 1024
    plans = [plan(history, f"question {i}?") for i in range(5)]
    est = Estimate()
    for p in plans:
        for m in (SONNET, GPT):
            est.add(m, p, cost_of)
    by = est._by_model
    assert by[SONNET.id].read_tokens == 4 * prefix and by[SONNET.id].write_tokens == prefix
    assert by[GPT.id].read_tokens == 4 * prefix and by[GPT.id].write_tokens == 0  # OpenAI: automatic
    assert est.cache_read_tokens == 8 * prefix and est.cache_write_tokens == prefix

    total, out = sum(p.total_tokens for p in plans), 5 * ASSUMED_OUTPUT_TOKENS
    expected = {
        s.name: sum(
            pricing.cost_usd(
                m.provider,
                m.model,
                total,
                out,
                cache_read_tokens=4 * prefix if s.caching else 0,
                cache_write_tokens=prefix if s.caching and m is SONNET else 0,
                batch=s.batch,
            )
            for m in (SONNET, GPT)
        )
        for s in (CACHING, BATCH, BATCH_CACHING)
    }
    for s in (CACHING, BATCH, BATCH_CACHING):
        assert est.scenario_cost_usd(s) == pytest.approx(expected[s.name], rel=1e-12)
    assert est.scenario_cost_usd(LIST) == est.cost_usd
    assert est.caching_saving_usd is not None and est.caching_saving_usd > 0
    assert est.scenario_cost_text(CACHING) == f"${expected['caching']:,.4f}"


def test_one_call_caches_nothing_so_the_run_line_shows_one_price():
    est = estimate_run([SONNET, GPT], plan(session("a"), "q?"), cost_of)
    assert est.cache_read_tokens == est.cache_write_tokens == 0  # a prefix sent once is not marked
    assert est.scenario_cost_usd(CACHING) == est.cost_usd
    assert "caching" not in est.text()


def test_openai_reads_the_longest_shared_run_of_messages_anthropic_only_its_exact_prefix():
    common = session("common", 900)
    first, second = plan(common + session("x"), "q1?"), plan(common + session("y"), "q2?")
    est = Estimate()
    for p in (first, second):
        est.add(GPT, p, cost_of)
        est.add(SONNET, p, cost_of)
    assert est._by_model[GPT.id].read_tokens == tokens_of(common)
    assert est._by_model[SONNET.id].read_tokens == est._by_model[SONNET.id].write_tokens == 0


def test_prefixes_under_1024_tokens_are_not_cached():
    short = session("s", 100)
    assert tokens_of(short) < 1024
    est = Estimate()
    for i in range(3):
        est.add(GPT, plan(short, f"q{i}"), cost_of)
    assert est.cache_read_tokens == 0 and est.scenario_cost_usd(CACHING) == est.cost_usd


def test_a_later_step_reads_the_earlier_steps_prompt_up_to_the_reply_it_waits_for():
    history = session("h")
    ask = [*history, Message(role="user", content="the question")]
    critique = [*ask, Message(role="assistant", content="{{output:answer}}"), Message(role="user", content="revise")]
    two_steps = PromptPlan(
        method="self-critic", steps=[make_step("answer", ask, ""), make_step("revise", critique, "")]
    )
    est = estimate_run([GPT, SONNET], two_steps, cost_of)
    assert est._by_model[GPT.id].read_tokens == tokens_of(ask)
    assert est._by_model[SONNET.id].read_tokens == 0  # its breakpoint would hold the unknown reply
    cached = est.scenario_cost_usd(CACHING)
    assert cached is not None and cached < est.cost_usd
    assert f"≈ ${cached:.4f} with caching" in est.text()


def test_unpriced_models_leave_scenarios_na():
    p = plan(session("a"), "q?")
    est = estimate_run([ModelSpec(id="x:unknown")], p, cost_of)
    assert [est.scenario_cost_text(s) for s in (LIST, CACHING, BATCH, BATCH_CACHING)] == ["n/a"] * 4
    mixed = estimate_run([GPT, ModelSpec(id="x:unknown")], p, cost_of)
    assert mixed.scenario_cost_text(BATCH).endswith(" + n/a for x:unknown")
