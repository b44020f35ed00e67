"""check_model_name: the one answer to "can this id be used?" for the CLI and the TUI model picker."""

from __future__ import annotations

from core.history.configs import ContextWindowExceeded
from core.providers import check_model_name
from core.settings import Endpoint, Settings


def test_usable_ids_pass():
    for name in ("demo:oracle", "openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest", "litellm:groq/llama3"):
        assert check_model_name(name) is None, name
    local = Settings(endpoints={"local": Endpoint(base_url="http://127.0.0.1:8000/v1")})
    assert check_model_name("local:qwen", local) is None


def test_problems_name_the_cause_and_the_fix():
    assert "known: openai, anthropic, litellm, demo, replay" in check_model_name("foo:bar")
    assert "[endpoints.<name>]" in check_model_name("foo:bar")
    assert "did you mean openai" in check_model_name("opnai:gpt-4o")
    assert "expected provider:model" in check_model_name("gpt4")
    assert "expected provider:model" in check_model_name("openai:")
    assert "available: demo:generic" in check_model_name("demo:nope")


def test_the_window_refusal_names_the_flag():
    assert "--force" in str(ContextWindowExceeded(200, 100))
