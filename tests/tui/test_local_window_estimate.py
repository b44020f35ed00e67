"""The TUI's estimate line checks the prompt against the window a local server reports, through the
same prepare as the CLI, asking the server once however often the estimate is redone."""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, Select

from core.providers.server_window import forget
from core.settings import Endpoint
from tests.servers.local_models import LocalModelServer
from tests.tui.conftest import app_for, settle, workbench


@pytest.fixture(autouse=True)
def _fresh_answers():
    forget()
    yield
    forget()


async def test_the_estimate_line_refuses_past_the_servers_window_until_forced(tmp_path):
    with LocalModelServer(max_model_len=2000) as server:
        wb = workbench(
            tmp_path / "p.db", endpoints={"local": Endpoint(base_url=server.base_url)}, models=["local:test-model"]
        )
        app = app_for(wb, ["local:test-model"])
        async with app.run_test(size=(400, 50)) as pilot:
            await settle(pilot, app)
            app.screen.query_one("#rb-context", Select).value = "full"
            await settle(pilot, app)
            text = str(app.screen.query_one("#estimate").render())
            assert "too long" in text and "window is 2,000 tokens" in text and "force" in text
            assert f"local:test-model at {server.base_url}, max_model_len in /v1/models" in text
            assert app.screen.plan is None
            app.screen.query_one("#rb-force", Checkbox).value = True
            await settle(pilot, app)
            text = str(app.screen.query_one("#estimate").render())
            assert "window 2,000 tokens, reported by" in text and "forced" in text
            assert app.screen.plan is not None
        assert [r.path for r in server.window_asks] == ["/v1/models"]
        assert server.requests == [], "nothing was sent to the model"
