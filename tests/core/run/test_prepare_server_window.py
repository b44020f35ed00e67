"""``prepare`` asks each self-hosted server among the models for its window (once per process,
every server at once, never longer than the timeout) and checks the prompt against the answer."""

from __future__ import annotations

import asyncio

import pytest

from core.history.configs import ContextWindowExceeded
from core.providers.base import ModelSpec
from core.providers.server_window import TIMEOUT_S, forget
from core.run.prepare import prepare
from core.run.spec import RunSpec
from core.settings import Endpoint, load_settings
from tests.servers.local_models import LocalModelServer

#: Bounds a hang only: prepare must end by itself, within the servers' timeout.
HANG_S = 60


@pytest.fixture(autouse=True)
def _fresh_answers():
    forget()
    yield
    forget()


def spec(*models: ModelSpec, force: bool = False) -> RunSpec:
    return RunSpec(user_id="maya", query_id="p3-open", context="simple", models=list(models), force=force)


def settings(**endpoints: str):
    return load_settings().model_copy(update={"endpoints": {n: Endpoint(base_url=u) for n, u in endpoints.items()}})


async def test_two_prepares_ask_the_server_once(maya):
    with LocalModelServer(max_model_len=32768) as server:
        config = settings(local=server.base_url)
        first = await prepare(spec(ModelSpec(id="local:test-model")), maya, [], config)
        second = await prepare(spec(ModelSpec(id="local:test-model")), maya, [], config)
        asked = len(server.window_asks)
    assert asked == 1
    note = f"local:test-model: window 32,768 tokens, reported by {server.base_url} (max_model_len in /v1/models)"
    assert note in first.plan.notes and note in second.plan.notes


async def test_a_model_base_url_is_refused_with_the_servers_numbers(maya):
    with LocalModelServer(models=["m"], n_ctx=8192) as server:
        model = ModelSpec(id="openai:m", base_url=server.base_url)
        with pytest.raises(ContextWindowExceeded) as refused:
            await prepare(spec(model, ModelSpec(id="demo:generic")), maya, [], load_settings())
        forced = await prepare(spec(model, force=True), maya, [], load_settings())
    assert refused.value.window == 8192 and refused.value.tokens > 8192
    assert refused.value.source == f"openai:m at {server.base_url}, n_ctx in /props"
    assert any(n.startswith("openai:m: forced:") for n in forced.plan.notes)


async def test_a_slow_server_does_not_hold_prepare_past_the_timeout(maya):
    # The slow server never answers within the test; the fast one answers only once the slow one has
    # been asked, so asking them one after the other would leave the fast one unanswered too.
    with (
        LocalModelServer(max_model_len=8192, answer_delay_s=3600) as slow,
        LocalModelServer(max_model_len=8192, answer_when=lambda: slow.window_asks) as fast,
    ):
        config = settings(slow=slow.base_url, fast=fast.base_url)
        both = spec(ModelSpec(id="fast:test-model"), ModelSpec(id="slow:test-model"))
        with pytest.raises(ContextWindowExceeded) as refused:  # the fast server's answer still counts
            await asyncio.wait_for(prepare(both, maya, [], config), HANG_S)
        prepared = await asyncio.wait_for(prepare(spec(ModelSpec(id="slow:test-model")), maya, [], config), HANG_S)
        asked = len(slow.window_asks), len(fast.window_asks)
    assert refused.value.source == f"fast:test-model at {fast.base_url}, max_model_len in /v1/models"
    assert asked == (1, 1), "each server asked once: one that did not answer is not asked again"
    unknown = f"slow:test-model: window unknown: {slow.base_url} did not report one (no answer within {TIMEOUT_S:g} s)"
    assert any(n.startswith(unknown) for n in prepared.plan.notes)
