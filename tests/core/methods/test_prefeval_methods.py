"""PrefEval's methods as its official code builds them (PROTOCOL §2.3, §3.5, §5.2–5.3), the
per-step limits and prefill the engine honours, and `prefscope prompt --context prefeval-turns`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from core.benchmarks.prefeval.methods import mcq_block
from core.formats import load_path
from core.history.build import build_context
from core.history.configs import ContextError
from core.methods import method_info, plan
from core.model import Query
from core.plan import Message, PromptPlan, PromptStep
from core.providers.base import CALLS_A_MODEL, ModelParams, ModelSpec
from core.providers.events import Delta, Done
from core.providers.replay import ReplayProvider
from core.run.engine import Engine, step_model, with_prefill
from core.run.prepare import limit_notes
from core.run.spec import ResponseStarted, RunSpec
from tests.conftest import dataset
from tui.cli import main

SUFFIX = " (Please respond within 300 words.)"
REMINDER = (
    "\nIn your response, please ensure that you take into account our earlier discussion, and provide an "
    "answer that is consistent with my preference."
)


@pytest.fixture(scope="module")
def prefeval():
    root = dataset("prefeval")
    return root, load_path(root)


def ctx_for(result, query, expression=1, n=2):
    bundle = result.bundles[0]
    return build_context(
        bundle,
        query=query,
        expression_type=expression,
        config="prefeval-turns",
        turns=n,
        filler_pools=result.fillers,
    )


def open_q(result) -> Query:
    return next(q for q in result.bundles[0].queries if q.kind == "open")


def mcq_q(result) -> Query:
    return next(q for q in result.bundles[0].queries if q.kind == "mcq")


def test_question_modifiers_in_prefeval_order(prefeval):
    _, result = prefeval
    q = open_q(result)
    ctx = ctx_for(result, q)
    last = {
        m: plan(m, ctx, q).steps[-1].messages[-1].content
        for m in ("prefeval-zero-shot", "prefeval-remind", "prefeval-cot")
    }
    assert last["prefeval-zero-shot"] == q.text + SUFFIX
    assert last["prefeval-remind"] == q.text + REMINDER + SUFFIX
    cot = last["prefeval-cot"]
    assert cot.startswith("\nWhen answering a user's question") and cot.endswith("\n\n            " + q.text + SUFFIX)


def test_mcq_block_prefill_and_five_tokens(prefeval):
    _, result = prefeval
    q = mcq_q(result)
    p = plan("prefeval-zero-shot", ctx_for(result, q), q)
    pref, answer = p.steps
    assert pref.max_tokens == 5 and answer.max_tokens == 5 and answer.prefill == "<choice>"
    options = "\n".join(f"{letter}. {o}" for letter, o in zip("ABCD", q.options, strict=True))
    block = (
        "\n    I'm trying to decide on this and here are 4 options for my query: \n" + options + "\nNow, I'd like you"
    )
    text = answer.messages[-1].content
    assert text.startswith(q.text + block) and text.endswith("<choice>[A/B/C/D]</choice>\n    ")
    assert "Please respond within" not in text and answer.messages[-1].role == "user"
    assert any("OpenAI-compatible models are not sent it" in n for n in p.notes)


def test_self_critic_open_structure_and_limits(prefeval):
    _, result = prefeval
    q = open_q(result)
    p = plan("prefeval-selfcritic", ctx_for(result, q), q)
    assert method_info("prefeval-selfcritic").name == "self-critic"
    assert [(s.name, s.max_tokens) for s in p.steps] == [
        ("preference", 300),
        ("answer", 300),
        ("critique", 300),
        ("revise", 500),
    ]
    answer, critique, revise = p.steps[1:]
    assert answer.messages[-1].content == q.text + SUFFIX
    tail = [(m.role, m.content) for m in critique.messages[-3:]]
    assert tail[0] == ("user", q.text) and tail[1] == ("assistant", "{{output:answer}}")
    assert tail[2][1].startswith("Critique Request:") and tail[2][1].endswith("\nCritic: ")
    assert revise.messages[:-2] == critique.messages
    assert revise.messages[-2].content == "{{output:critique}}"
    assert revise.messages[-1].content.startswith("Revision Request:")
    assert f"Answer the question again: {q.text}. Answer in this format" in revise.messages[-1].content
    assert all(s.temperature == 0.0 and s.prefill is None for s in p.steps)


@pytest.mark.parametrize("expression,indent", [(1, "\n    Critic: "), (3, "\nCritic: ")])
def test_self_critic_mcq_uses_the_mcq_requests(prefeval, expression, indent):
    _, result = prefeval
    q = mcq_q(result)
    p = plan("self-critic", ctx_for(result, q, expression), q)
    steps = p.steps[1:] if expression == 1 else p.steps
    assert [(s.name, s.max_tokens, s.prefill) for s in steps] == [
        ("answer", 5, "<choice>"),
        ("critique", 300, None),
        ("revise", 5, "<choice>"),
    ]
    critique, revise = steps[1], steps[2]
    assert critique.messages[-2].content == "<choice>{{output:answer}}"
    assert critique.messages[-1].content.endswith(indent)
    assert critique.messages[-3].content == steps[0].messages[-1].content  # question + MCQ block
    assert revise.messages[-1].content.startswith("Revision Request: Based on your critic, please choose an option")
    assert revise.messages[-1].content.endswith("<choice>[A/B/C/D]</choice>\n    ")


def test_methods_on_another_benchmark_merge_with_a_note(mara):
    ctx = build_context(mara, query="q1-open", expression_type=1, config="simple")
    p = plan("prefeval-zero-shot", ctx, mara.query("q1-open"))
    assert [s.name for s in p.steps] == ["answer"] and p.steps[0].messages[0].content == "You are a helpful assistant."


def test_step_limits_fill_unset_params_and_explicit_ones_win():
    step = PromptStep(name="a", messages=[], max_tokens=5, temperature=0.0, prefill="<choice>")
    plain = ModelSpec(id="openai:x")
    assert step_model(plain, step).params.max_tokens == 5 and step_model(plain, step).params.temperature == 0.0
    mine = ModelSpec(id="openai:x", params=ModelParams(max_tokens=50))
    assert step_model(mine, step).params.max_tokens == 50 and step_model(mine, step).params.temperature == 0.0
    spec = RunSpec(user_id="u", query_id="q", models=[mine])
    notes = limit_notes(spec, PromptPlan(method="m", steps=[step]))
    assert notes == ["openai:x: your max_tokens=50 overrides the protocol's per-step value (a 5)"]


class _Anthropicish:
    capabilities = CALLS_A_MODEL
    supports_prefill = True


class _OpenAIish:
    capabilities = CALLS_A_MODEL


def test_prefill_only_for_providers_that_continue_a_message():
    step = PromptStep(name="a", messages=[], prefill="<choice>")
    msgs = [Message(role="user", content="q")]
    claude, gpt = ModelSpec(id="anthropic:claude-x"), ModelSpec(id="openai:gpt-x")
    prefilled = [*msgs, Message(role="assistant", content="<choice>")]
    assert with_prefill(msgs, step, _Anthropicish(), claude) == prefilled
    assert with_prefill(msgs, step, _OpenAIish(), gpt) == msgs
    replay = ReplayProvider(None)
    assert with_prefill(msgs, step, replay, ModelSpec(id="replay:anthropic:claude-x")) == prefilled
    assert with_prefill(msgs, step, replay, ModelSpec(id="replay:openai:gpt-x")) == msgs
    from core.providers.anthropic_messages import AnthropicProvider

    assert AnthropicProvider.supports_prefill is True


async def test_engine_sends_step_limits_and_prefill(mara):
    seen = []

    class Recorder:
        capabilities = CALLS_A_MODEL
        supports_prefill = True

        async def stream(self, spec, messages):
            seen.append((spec.params.max_tokens, spec.params.temperature, [m.role for m in messages]))
            yield Delta("B")
            yield Done("stop")

        def cost_usd(self, *a):
            return None

    steps = [
        PromptStep(name="preference", messages=[Message(role="user", content="p")], max_tokens=5, temperature=0.0),
        PromptStep(
            name="answer",
            messages=[Message(role="user", content="{{output:preference}} q")],
            max_tokens=5,
            temperature=0.0,
            prefill="<choice>",
        ),
    ]
    events = []
    spec = RunSpec(user_id="fx-mara", query_id="q1-open", models=[ModelSpec(id="scripted:m")])
    await Engine(lambda s: Recorder(), events.append).run(spec, PromptPlan(method="m", steps=steps), mara)
    assert seen == [(5, 0.0, ["user"]), (5, 0.0, ["user", "assistant"])]
    started = [e for e in events if isinstance(e, ResponseStarted)]
    assert [e.model.params.max_tokens for e in started] == [5, 5]


def test_cli_prompt_shows_the_preference_step_and_the_final_step(prefeval):
    root, result = prefeval
    bundle = result.bundles[0]
    q = open_q(result)
    args = ["prompt", bundle.user.id, q.id, "--bundle", str(root), "--filler", str(root / "filtered_inter_turns.json")]
    args += ["--context", "prefeval-turns", "--turns", "10", "--expression", "1", "--method", "prefeval-zero-shot"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "step 1/2: preference" in r.output and "step 2/2: answer" in r.output
    assert "--seed has no effect" in r.output
    assert "tokens before the query" in r.output and " 0 tokens before the query" not in r.output
    bad = CliRunner().invoke(main, [*args[:7], "--context", "simple", "--turns", "3"])
    assert bad.exit_code != 0 and "--turns goes with --context prefeval-turns" in bad.output


def test_rag_block_explicit_and_implicit(prefeval):
    _, result = prefeval
    q = open_q(result)
    pref = result.bundles[0].sessions[0].turns[0].content
    p = plan("prefeval-rag", ctx_for(result, q, 1, n=5), q, retriever="bm25", k=6)
    assert [s.name for s in p.steps] == ["preference", "answer"] and p.steps[1].needs() == ["preference"]
    text = p.steps[1].messages[-1].content
    assert text.startswith("Before answering my question") and "These are the 5 most relevant" in text  # literal 5
    assert f"#Start of Context#\nexchange 1. User: {pref}\nexchange 2. Assistant: {{{{output:preference}}}}\n" in text
    assert text.count("\nexchange ") == 6 and text.endswith("Now, please address my question:\n\n" + q.text + SUFFIX)
    assert [r.rank for r in p.retrieved] == [1, 2, 3, 4, 5, 6] and p.retrieved[0].is_evidence
    implicit = plan("prefeval-rag", ctx_for(result, q, 3, n=5), q, retriever="bm25", k=6)
    assert "These are the 6 most relevant" in implicit.steps[-1].messages[-1].content  # counted
    assert [s.name for s in implicit.steps] == ["answer"]


def test_rag_needs_exactly_k_messages_and_mcq_gets_the_block_and_prefill(prefeval):
    _, result = prefeval
    q = open_q(result)
    with pytest.raises(ContextError, match="exactly top-5"):
        plan("prefeval-rag", ctx_for(result, q, 1, n=1), q, retriever="bm25")
    m = mcq_q(result)
    p = plan("prefeval-rag", ctx_for(result, m, 1, n=2), m, retriever="bm25", k=5)
    answer = p.steps[-1]
    assert answer.prefill == "<choice>" and answer.max_tokens == 5 and p.steps[0].max_tokens == 5
    assert "These are the 5 most relevant" in answer.messages[-1].content
    assert answer.messages[-1].content.endswith(m.text + mcq_block(m))


async def test_sft_reply_reuse_drops_the_preference_step(prefeval):
    """PrefEval's SFT files record the model's reply to the preference; given in method_options
    it is inserted unstripped and the preference step is not run."""
    import json

    from core.run.prepare import prepare
    from core.settings import Settings

    root, result = prefeval
    sft = root / "SFT" / "single_pref_remind" / "travel_restaurant" / "mistral8x7b_travel_restaurant_10turn.json"
    reply = json.loads(sft.read_text(encoding="utf-8"))[0]["response_to_pref"]
    assert reply.startswith(" ")
    bundle, q = result.bundles[0], open_q(result)
    spec = RunSpec(
        user_id=bundle.user.id,
        query_id=q.id,
        expression_type=1,
        context="prefeval-turns",
        turns=10,
        method="prefeval-remind",
        method_options={"outputs": {"preference": reply}, "outputs_source": sft.name},
        models=[ModelSpec(id="demo:generic")],
    )
    p = (await prepare(spec, bundle, result.fillers, Settings())).plan
    assert [s.name for s in p.steps] == ["answer"] and p.steps[0].needs() == []
    assert p.steps[0].messages[2] == Message(role="assistant", content=reply)
    assert any(sft.name in n and "not generated" in n for n in p.notes)


def test_gpt_format_drops_the_system_message_and_the_limits(prefeval):
    _, result = prefeval
    q = open_q(result)
    claude = plan("prefeval-zero-shot", ctx_for(result, q), q)
    gpt = plan("prefeval-zero-shot", ctx_for(result, q), q, extra={"prefeval_format": "gpt"})
    for c, g in zip(claude.steps, gpt.steps, strict=True):
        assert c.messages[0].role == "system" and g.messages == c.messages[1:]
        assert (g.max_tokens, g.temperature) == (None, None) and g.tokens < c.tokens
    rag = plan("prefeval-rag", ctx_for(result, q), q, retriever="bm25", extra={"prefeval_format": "gpt"})
    assert rag.steps[-1].messages[0].role == "system" and rag.steps[0].messages[0].role == "user"
    with pytest.raises(ContextError, match="no GPT branch"):
        plan("prefeval-zero-shot", ctx_for(result, q, 3), q, extra={"prefeval_format": "gpt"})
    with pytest.raises(ContextError, match="no GPT branch"):
        plan("prefeval-zero-shot", ctx_for(result, mcq_q(result)), mcq_q(result), extra={"prefeval_format": "gpt"})
