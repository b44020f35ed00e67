"""A self-hosted OpenAI-compatible server is asked its context window over real HTTP: vLLM's
max_model_len in /v1/models, llama.cpp's n_ctx in /props, nothing from an Ollama-like server (the
window stays unknown and the note says why). Asked once per process, never for longer than its
timeout, and never raising."""

from __future__ import annotations

import asyncio
import socket

import pytest

from core.providers.base import ModelSpec
from core.providers.openai_chat import OpenAIChatProvider
from core.providers.server_window import forget, server_window, shown_url
from tests.servers.local_models import LocalModelServer

#: Bounds a hang only: an ask that should end by itself (a refusal, its own timeout) and does not.
HANG_S = 60


@pytest.fixture(autouse=True)
def _fresh_answers():
    """Answers are kept per process and an OS port may be reused: start and end with none."""
    forget()
    yield
    forget()


async def test_vllm_reports_max_model_len_for_the_model_asked():
    with LocalModelServer(models=["other-model", "test-model"], max_model_len=8192) as server:
        answer = await server_window(server.base_url, "test-model")
        asked = [(r.method, r.path) for r in server.window_asks]
    assert answer.window == 8192
    assert answer.detail == "max_model_len in /v1/models" and answer.server == server.base_url
    assert "8,192 tokens" in answer.note and server.base_url in answer.note
    assert asked == [("GET", "/v1/models")], "a window found in /v1/models: /props is not asked"


@pytest.mark.parametrize("top_level", [False, True])
async def test_llama_cpp_reports_n_ctx_in_props(top_level):
    # llama-server lists its model file in /v1/models, without max_model_len
    with LocalModelServer(models=["model.gguf"], n_ctx=4096, n_ctx_top_level=top_level) as server:
        answer = await server_window(server.base_url, "anything")
        asked = [r.path for r in server.window_asks]
    assert (answer.window, answer.detail) == (4096, "n_ctx in /props")
    assert asked == ["/v1/models", "/props"], "/props is asked at the server's root, not under /v1"


async def test_a_server_that_reports_no_window_leaves_it_unknown_and_says_so():
    with LocalModelServer(models=["llama3:latest"]) as server:  # Ollama: a model list, no window, no /props
        answer = await server_window(server.base_url, "llama3:latest")
    assert answer.window is None
    assert answer.detail == "/v1/models has no max_model_len, /props absent"
    assert answer.note.startswith(f"window unknown: {server.base_url} did not report one (")


async def test_a_window_listed_for_another_model_is_not_taken():
    with LocalModelServer(models=["big-model"], max_model_len=32768) as server:
        answer = await server_window(server.base_url, "test-model")
    assert answer.window is None and "/v1/models does not list this model" in answer.detail


async def test_asked_once_per_process_including_an_unknown_answer():
    with LocalModelServer(max_model_len=8192) as vllm, LocalModelServer(models=None) as bare:
        for _ in range(3):
            assert (await server_window(vllm.base_url, "test-model")).window == 8192
            assert (await server_window(bare.base_url, "test-model")).window is None
        assert len(vllm.window_asks) == 1 and len(bare.window_asks) == 2  # bare: /v1/models and /props, once
        forget()
        await server_window(vllm.base_url, "test-model")
        assert len(vllm.window_asks) == 2, "forget() makes the next run ask again"


async def test_a_down_server_is_unknown_at_once():
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # "At once": the refusal ends the ask, not the timeout; with an hour to wait, waiting would hang
    # the test into wait_for's bound (a hang bound, not a measurement).
    ask = server_window(f"http://127.0.0.1:{port}/v1", "test-model", timeout_s=3600)
    answer = await asyncio.wait_for(ask, HANG_S)
    assert answer.window is None and answer.detail == "could not be reached: ConnectError"


async def test_a_slow_server_is_given_up_on_after_the_timeout():
    with LocalModelServer(max_model_len=8192, answer_delay_s=3600) as server:  # it never answers in time
        answer = await asyncio.wait_for(server_window(server.base_url, "test-model", timeout_s=0.3), HANG_S)
        asked = [r.path for r in server.window_asks]
    assert answer.window is None and answer.detail == "no answer within 0.3 s"
    assert asked == ["/v1/models"], "asked, and given up on while waiting for its first answer"


async def test_the_endpoint_key_is_sent_as_bearer_and_shown_nowhere(monkeypatch):
    monkeypatch.setenv("LOCAL_LLM_KEY", "sk-local-secret-0123456789")
    provider = OpenAIChatProvider(name="local", base_url=None, api_key_env="LOCAL_LLM_KEY")
    with LocalModelServer(max_model_len=8192) as server:
        provider.base_url = server.base_url
        spec = ModelSpec(id="local:test-model")
        assert provider.context_window(spec) is None, "not asked yet: unknown"
        answer = await provider.discover_context_window(spec)
        auth = server.window_asks[0].auth
    assert auth == "bearer"
    assert answer is not None and answer.window == 8192
    assert provider.context_window(spec) == 8192, "the sync window is the server's answer once asked"
    assert "sk-local" not in answer.note + answer.source


async def test_a_keyless_endpoint_sends_no_authorization():
    with LocalModelServer(max_model_len=2048) as server:
        provider = OpenAIChatProvider(name="local", base_url=server.base_url, api_key_env=None)
        answer = await provider.discover_context_window(ModelSpec(id="local:test-model"))
        assert server.window_asks[0].auth is None and "authorization" not in server.window_asks[0].headers
    assert answer is not None and answer.window == 2048


async def test_a_spec_base_url_is_asked_and_api_openai_com_is_not():
    provider = OpenAIChatProvider()
    assert await provider.discover_context_window(ModelSpec(id="openai:gpt-4o")) is None
    assert provider.context_window(ModelSpec(id="openai:gpt-4o")) == 128_000, "the price table's window"
    with LocalModelServer(models=["gpt-4o"], max_model_len=16384) as server:
        spec = ModelSpec(id="openai:gpt-4o", base_url=server.base_url)
        answer = await provider.discover_context_window(spec)
    assert answer is not None and answer.window == 16384
    assert provider.context_window(spec) == 16384


def test_the_shown_url_drops_credentials():
    assert shown_url("http://alice:pw@host:8000/v1/?key=abc#x") == "http://host:8000/v1"
