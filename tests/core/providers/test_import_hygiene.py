"""Importing the providers package and streaming a demo model must not pull in the heavy SDKs, nor
must a configured router (its litellm Router is built on its first call, never before)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_demo_streaming_imports_no_sdk():
    code = textwrap.dedent(
        """
        import asyncio, sys
        from core.plan import Message
        from core.providers import available_models, check_model_name, get_provider
        from core.providers.base import ModelSpec
        from core.settings import Deployment, Router, Settings

        settings = Settings(routers={"gpt4o": Router(deployments=[Deployment(model="openai/gpt-4o", rpm=5)] * 2)})

        async def main():
            spec = ModelSpec(id="demo:retrieval")
            provider = get_provider(spec)
            provider.tokens_per_s = 0
            out = [e async for e in provider.stream(spec, [Message(role="user", content="Hello there?")])]
            assert out, "no events"
            available_models(settings)
            router = get_provider("router:gpt4o", settings)
            assert check_model_name("router:gpt4o", settings) is None and check_model_name("router:x", settings)
            assert type(router).__name__ == "RouterProvider"

        asyncio.run(main())
        heavy = sorted(m for m in ("litellm", "anthropic", "openai", "httpx2") if m in sys.modules)
        print("HEAVY=" + ",".join(heavy))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "HEAVY=\n" in result.stdout or result.stdout.strip().endswith("HEAVY="), result.stdout
