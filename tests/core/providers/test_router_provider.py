"""router:<name> – a real litellm Router over loopback OpenAI servers, one text per server so each
answer says which deployment served it: spreading, 429 cooldown and failover, the engine as the one
retry layer, mid-stream failures, prices per deployment, and `prefscope run` / `batch` end to end.

All litellm tests of the router live here, so its import (~6 s) is paid once (``litellm`` fixture)."""

from __future__ import annotations

import asyncio
import typing
from collections import Counter

import pytest

from core.providers import available_models, check_model_name, get_provider
from core.providers.base import ModelParams, ModelSpec
from core.providers.events import Done, Error, Usage
from core.providers.retry import RetryPolicy, retrying
from core.providers.router_provider import RouterProvider
from core.settings import Deployment, Router, RoutingStrategy, Settings
from storage.db import open_db
from storage.runs import list_runs, load_run
from tests.cli_runner import cli
from tests.conftest import SAMPLE_DATA
from tests.core.providers.conftest import collect, text_of
from tests.servers import OpenAIServer, Reply

TEXTS = {"alpha": "from alpha", "bravo": "from bravo", "charlie": "from charlie"}
#: litellm's list prices (USD per token, input / output) of the deployments' models.
GPT_4O = (2.5e-6, 10e-6)
GPT_4O_MINI = (0.15e-6, 0.6e-6)
#: Bounds a hang only (a loopback call takes milliseconds), and is shorter than a 60 s retry-after.
NO_WAIT_HANG_S = 30


@pytest.fixture(scope="module")
def litellm():
    from core.providers.litellm_provider import load_litellm

    return load_litellm()


@pytest.fixture
def servers(litellm):
    """Three fresh servers (fresh ports: a new router definition, so no cooldowns carry over)."""
    started = {name: OpenAIServer([Reply.text(text)]).start() for name, text in TEXTS.items()}
    yield started
    for server in started.values():
        server.stop()


def router(*deps: tuple[OpenAIServer, str], **kw) -> Router:
    return Router(deployments=[Deployment(model=model, api_base=s.base_url) for s, model in deps], **kw)


def provider(name: str, config: Router) -> tuple[RouterProvider, ModelSpec]:
    return RouterProvider({name: config}), ModelSpec(id=f"router:{name}")


async def test_calls_spread_over_deployments_and_each_is_priced_as_the_one_that_served(servers):
    a, b, c = servers["alpha"], servers["bravo"], servers["charlie"]
    config = router((a, "openai/gpt-4o"), (b, "openai/gpt-4o-mini"), (c, "openai/our-own-llama"))
    p, spec = provider("spread", config)
    served: Counter[str] = Counter()
    for _ in range(30):
        events = await collect(p, spec)
        assert isinstance(events[-1], Done), events[-1]
        text = text_of(events)
        served[text] += 1
        cost = p.cost_usd(spec, Usage(11, 4))  # the servers report 11 prompt and 4 completion tokens
        if text == TEXTS["alpha"]:
            assert cost == pytest.approx(11 * GPT_4O[0] + 4 * GPT_4O[1])
        elif text == TEXTS["bravo"]:
            assert cost == pytest.approx(11 * GPT_4O_MINI[0] + 4 * GPT_4O_MINI[1])
        else:
            assert text == TEXTS["charlie"] and cost is None, "a model without a price is n/a, never 0"
    assert served == Counter({TEXTS[n]: len(s.requests) for n, s in servers.items()})
    assert all(len(s.requests) >= 1 for s in servers.values()), served
    assert {r.body["model"] for r in a.requests} == {"gpt-4o"}


async def test_rpm_is_passed_per_deployment(servers):
    """simple-shuffle weighs by rpm: a deployment allowed 1 request a minute next to one allowed
    a million gets (practically) none of 20."""
    a, b = servers["alpha"], servers["bravo"]
    config = Router(
        deployments=[
            Deployment(model="openai/gpt-4o", api_base=a.base_url, rpm=1),
            Deployment(model="openai/gpt-4o", api_base=b.base_url, rpm=1_000_000),
        ]
    )
    p, spec = provider("weighted", config)
    texts = [text_of(await collect(p, spec)) for _ in range(20)]
    assert texts == [TEXTS["bravo"]] * 20 and not a.requests


async def test_a_429_with_retry_after_cools_its_deployment_down_and_another_answers(servers):
    a, b = servers["alpha"], servers["bravo"]
    # 60 s: the longest retry-after litellm obeys (it backs off 0.5-8 s instead of a longer one), and
    # longer than the hang bound, so a call that waited it out before failing over fails the test.
    a.script(Reply.http_error(429, "slow down", retry_after="60"), Reply.text(TEXTS["alpha"]))
    p, spec = provider("cool", router((a, "openai/gpt-4o"), (b, "openai/gpt-4o-mini")))
    for _ in range(40):  # until the shuffle has picked alpha once
        # Failover to bravo does not wait. Bounded in this task (not in wait_for's), whose context
        # holds the deployment that served the call, priced below.
        async with asyncio.timeout(NO_WAIT_HANG_S):
            events = await collect(p, spec)
        assert isinstance(events[-1], Done) and text_of(events) == TEXTS["bravo"], events[-1]
        if a.requests:
            break
    assert len(a.requests) == 1 and a.log.outcomes == ["http:429"]
    assert p.cost_usd(spec, Usage(11, 4)) == pytest.approx(11 * GPT_4O_MINI[0] + 4 * GPT_4O_MINI[1])
    for _ in range(8):  # alpha is cooling down for its 60 s: everything goes to bravo
        assert text_of(await collect(p, spec)) == TEXTS["bravo"]
    assert len(a.requests) == 1


async def test_when_every_deployment_fails_the_error_names_the_router_and_the_engine_waits_out_the_cooldown(
    servers,
):
    a, b = servers["alpha"], servers["bravo"]
    a.script(Reply.http_error(429, "quota A", retry_after="20"))
    b.script(Reply.http_error(429, "quota B", retry_after="20"))
    p, spec = provider("busy", router((a, "openai/gpt-4o"), (b, "openai/gpt-4o")))
    events = await collect(p, spec)
    (err,) = events
    assert isinstance(err, Error) and err.kind == "rate_limit" and err.before_first_byte
    assert "router busy" in err.message and "deployment" in err.message and err.retry_after == 20
    assert len(a.requests) == len(b.requests) == 1, "each deployment tried once, no SDK retries"

    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    events = [e async for e in retrying(lambda: p.stream(spec, []), RetryPolicy(retries=1), sleep=sleep)]
    (err,) = events
    assert isinstance(err, Error) and err.kind == "rate_limit"
    assert "every deployment of router busy is cooling down" in err.message and "after 2 attempts" in err.message
    assert waits == [20.0], "the engine waits out the shortest cooldown before asking the router again"
    assert len(a.requests) == len(b.requests) == 1, "cooling deployments are not called"


async def test_a_single_deployment_is_called_once_per_attempt(servers):
    """The engine stays the one retry layer: no litellm or SDK retry behind one attempt."""
    a = servers["alpha"]
    a.script(Reply.http_error(429, retry_after="0"), Reply.http_error(500))
    p, spec = provider("solo", router((a, "openai/gpt-4o")))
    (err,) = await collect(p, spec)
    assert isinstance(err, Error) and err.status == 429 and err.retry_after == 0
    assert "router solo (deployment 1, openai/gpt-4o at " in err.message
    assert len(a.requests) == 1


async def test_a_mid_stream_failure_keeps_the_partial_text_and_is_not_continued_elsewhere(servers):
    a, b = servers["alpha"], servers["bravo"]
    for server in (a, b):
        server.script(Reply.text("half of an answer that breaks", fault="drop", fault_after=2))
    p, spec = provider("cut", router((a, "openai/gpt-4o"), (b, "openai/gpt-4o")))
    events = await collect(p, spec)
    err = events[-1]
    assert text_of(events) == "half of"
    assert isinstance(err, Error) and not err.before_first_byte and err.kind == "transport"
    assert "router cut" in err.message and "after 7 chars of output" in err.message
    assert len(a.requests) + len(b.requests) == 1, "no second deployment after text has streamed"


async def test_params_reach_the_deployment_and_context_window_is_the_smallest(servers, litellm):
    a = servers["alpha"]
    p, spec = provider("params", router((a, "openai/gpt-4o")))
    spec = spec.model_copy(update={"params": ModelParams(max_tokens=33, temperature=0.25)})
    events = await collect(p, spec)
    assert isinstance(events[-1], Done)
    body = a.requests[0].body
    assert body["max_tokens"] == 33 and body["temperature"] == 0.25
    assert body["stream_options"] == {"include_usage": True}
    assert a.requests[0].headers["authorization"] == "<redacted>", "a placeholder key for a keyless server"

    mixed = Router(deployments=[Deployment(model="anthropic/claude-sonnet-4-5"), Deployment(model="openai/gpt-4o")])
    windows = [litellm.get_model_info(m)["max_input_tokens"] for m in ("anthropic/claude-sonnet-4-5", "openai/gpt-4o")]
    assert RouterProvider({"m": mixed}).context_window(ModelSpec(id="router:m")) == min(windows)
    unknown = Router(deployments=[Deployment(model="openai/our-own-llama")])
    assert RouterProvider({"u": unknown}).context_window(ModelSpec(id="router:u")) is None


async def test_the_key_comes_from_the_named_env_var_and_a_missing_one_is_named(servers, monkeypatch):
    a = servers["alpha"]
    config = Router(deployments=[Deployment(model="openai/gpt-4o", api_base=a.base_url, api_key_env="ROUTER_KEY_A")])
    p, spec = provider("keyed", config)
    monkeypatch.delenv("ROUTER_KEY_A", raising=False)
    (err,) = await collect(p, spec)
    assert isinstance(err, Error) and err.kind == "config" and not a.requests
    assert err.message.startswith("router 'keyed' deployment 1 (openai/gpt-4o) reads its key from $ROUTER_KEY_A")
    monkeypatch.setenv("ROUTER_KEY_A", "sk-test-router-a")
    events = await collect(p, spec)
    assert text_of(events) == TEXTS["alpha"] and a.requests[0].auth == "bearer"
    assert "sk-test-router-a" not in repr(a.requests[0].headers)


async def test_an_unconfigured_router_is_a_config_error_naming_the_configured_ones():
    p = RouterProvider({"gpt4o": Router(deployments=[Deployment(model="openai/gpt-4o")])})
    (err,) = await collect(p, ModelSpec(id="router:gpt-4o"))
    assert isinstance(err, Error) and err.kind == "config"
    assert "no router 'gpt-4o'" in err.message and "configured: router:gpt4o" in err.message


def test_a_price_asked_outside_a_call_is_the_dearest_deployments_when_all_have_one(litellm):
    """What an estimate sees: no call has streamed in this context, so no deployment served yet."""
    priced = Router(deployments=[Deployment(model="openai/gpt-4o-mini"), Deployment(model="openai/gpt-4o")])
    spec = ModelSpec(id="router:est")
    assert RouterProvider({"est": priced}).cost_usd(spec, Usage(11, 4)) == pytest.approx(11 * GPT_4O[0] + 4 * GPT_4O[1])
    partly = Router(deployments=[Deployment(model="openai/gpt-4o"), Deployment(model="openai/our-own-llama")])
    assert RouterProvider({"est": partly}).cost_usd(spec, Usage(11, 4)) is None


def test_model_names_and_choices_know_the_configured_routers():
    settings = Settings(routers={"gpt4o": Router(deployments=[Deployment(model="openai/gpt-4o")] * 2)})
    assert check_model_name("router:gpt4o", settings) is None
    problem = check_model_name("router:gpt-4o", settings)
    assert problem and "no router 'gpt-4o' in the config (did you mean 'gpt4o'?)" in problem
    assert "configured: router:gpt4o" in problem and "[routers.gpt-4o]" in problem
    assert "configured: none" in (check_model_name("router:gpt4o") or "")
    choice = next(c for c in available_models(settings) if c.id == "router:gpt4o")
    assert not choice.is_demo and "2 deployment(s) of openai/gpt-4o" in choice.reason
    assert isinstance(get_provider("router:gpt4o", settings), RouterProvider)


def test_the_settings_know_litellms_routing_strategies(litellm):
    from litellm.types.router import RoutingStrategyName

    assert typing.get_args(RoutingStrategy) == typing.get_args(RoutingStrategyName)


# ---- end to end through the CLI ----------------------------------------------------------------
def write_config(tmp_path, a: OpenAIServer, b: OpenAIServer) -> str:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[routers.x]\nrouting_strategy = "simple-shuffle"\n'
        f'[[routers.x.deployments]]\nmodel = "openai/gpt-4o"\napi_base = "{a.base_url}"\nrpm = 500\n'
        f'[[routers.x.deployments]]\nmodel = "openai/gpt-4o-mini"\napi_base = "{b.base_url}"\nrpm = 500\n',
        encoding="utf-8",
    )
    return str(cfg)


def test_run_stores_an_answer_under_the_router_model_id(tmp_path, servers):
    a, b = servers["alpha"], servers["bravo"]
    db = str(tmp_path / "r.db")
    cli(db, "--config", write_config(tmp_path, a, b), "run", "maya", "p1-open", "--model", "router:x", "--plain")
    conn = open_db(db)
    (answer,) = load_run(conn, list_runs(conn)[0].id).final_responses()
    assert answer.model == "router:x" and answer.status == "ok" and not answer.is_demo
    assert answer.text in (TEXTS["alpha"], TEXTS["bravo"])
    assert len(a.requests) + len(b.requests) == 1
    model = GPT_4O if answer.text == TEXTS["alpha"] else GPT_4O_MINI
    assert answer.cost_usd == pytest.approx(11 * model[0] + 4 * model[1])


def test_batch_runs_a_grid_through_the_router(tmp_path, servers):
    a, b = servers["alpha"], servers["bravo"]
    db = str(tmp_path / "b.db")
    cfg = write_config(tmp_path, a, b)
    cli(db, "import", str(SAMPLE_DATA / "users"))
    grid = ["--user", "maya", "--user", "priya", "--query-kind", "open", "--expression", "1"]
    cli(db, "--config", cfg, "batch", "--name", "routed", *grid, "--model", "router:x", "--yes")
    conn = open_db(db)
    answers = [r for run in list_runs(conn) for r in load_run(conn, run.id).final_responses()]
    assert len(answers) >= 2 and {r.model for r in answers} == {"router:x"}
    assert {r.status for r in answers} == {"ok"}
    sent = {TEXTS["alpha"]: len(a.requests), TEXTS["bravo"]: len(b.requests)}
    assert Counter(r.text for r in answers) == {text: n for text, n in sent.items() if n}
    price = {TEXTS["alpha"]: GPT_4O, TEXTS["bravo"]: GPT_4O_MINI}
    for r in answers:  # answers streamed side by side are each priced by their own deployment
        assert r.cost_usd == pytest.approx(11 * price[r.text][0] + 4 * price[r.text][1]), r.text
