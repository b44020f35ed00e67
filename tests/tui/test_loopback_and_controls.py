"""A real OpenAI-protocol model on a loopback server beside a demo one; the context-window check
and force; the command palette; remapped keys; the narrow (80×24) layout."""

from __future__ import annotations

from textual.widgets import Checkbox, Select, Tabs

from core.settings import Endpoint
from tests.servers.script import Reply
from tests.tui.conftest import app_for, choose_in_palette, db_rows, run_and_wait, settle, workbench


async def test_an_openai_compatible_server_streams_into_its_pane(tmp_path, openai_server):
    answer = "Since you eat your main meal at 3 a.m., keep the evening light: eggs on toast, then sleep."
    openai_server.script(Reply.text(answer, delay_s=0.002, usage=(11_000, 24)))
    wb = workbench(
        tmp_path / "p.db",
        endpoints={"local": Endpoint(base_url=openai_server.base_url)},
        models=["local:qwen-test", "demo:generic"],
    )
    app = app_for(wb, ["local:qwen-test", "demo:generic"])
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        local, demo = app.screen.run_view.panes
        assert (local.status, demo.status) == ("ok", "ok")
        assert local.full_text == answer
        header = str(local.query_one(".pane-header").render())
        assert "11,000→24 tok" in header and "cost n/a" in header and "free (demo)" not in header
        assert "free (demo)" in str(demo.query_one(".pane-header").render())
        sent = openai_server.requests[0].body
        plan = app.screen.plan
        assert sent["model"] == "qwen-test"
        assert sent["messages"] == [m.model_dump() for m in plan.steps[0].messages]  # the exact prompt shown
        rows = db_rows(wb, "SELECT model, text, cost_usd, input_tokens FROM responses WHERE model = 'local:qwen-test'")
        assert rows == [("local:qwen-test", answer, None, 11_000)]
        assert "cost n/a for local:qwen-test" in str(app.screen.query_one("#estimate").render())


async def test_a_prompt_past_the_model_window_is_refused_until_forced(tmp_path):
    wb = workbench(tmp_path / "p.db")
    app = app_for(wb, ["openai:gpt-4o"])  # 128K window; nothing is sent in this test
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        app.screen.query_one("#rb-context", Select).value = "extreme"
        await settle(pilot, app, timeout=120)
        text = str(app.screen.query_one("#estimate").render())
        assert "too long" in text and "128,000" in text and "force" in text
        assert app.screen.plan is None
        await pilot.press("ctrl+r")  # refused again: still nothing sent, nothing stored
        await settle(pilot, app, timeout=120)
        assert db_rows(wb, "SELECT count(*) FROM runs") == [(0,)]
        app.screen.query_one("#rb-force", Checkbox).value = True
        await settle(pilot, app, timeout=120)
        text = str(app.screen.query_one("#estimate").render())
        assert "forced" in text and app.screen.plan is not None and app.screen.plan.total_tokens > 128_000


async def test_command_palette_chooses_a_method(wb):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        await choose_in_palette(pilot, "method reminder", "Method: reminder")
        await settle(pilot, app)
        assert app.screen.query_one("#rb-method", Select).value == "reminder"


async def test_keys_are_remappable_from_settings(tmp_path):
    wb = workbench(tmp_path / "p.db", keymap={"run": "f5"})
    app = app_for(wb, ["demo:generic"])
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        await pilot.press("f5")
        await pilot.pause()
        await settle(pilot, app)
        assert [p.status for p in app.screen.run_view.panes] == ["ok"]


async def test_80x24_shows_one_pane_at_a_time_behind_tabs(wb):
    app = app_for(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await run_and_wait(pilot, app)
        screen = app.screen
        assert screen.has_class("narrow")
        assert [p.display for p in screen.run_view.panes] == [True, False, False]
        tabs = screen.query_one("#pane-tabs", Tabs)
        tabs.active = "ptab-2"
        await pilot.pause()
        assert [p.display for p in screen.run_view.panes] == [False, False, True]
        assert screen.run_view.panes[2].region.width > 40 and screen.run_view.panes[2].region.height >= 10
        assert screen.query_one("#rb-run").region.right <= 80  # the run button stays on screen
        await pilot.press("f2")  # narrow: the analysis tabs take the panes' place
        await pilot.pause()
        assert screen.query_one("#tabs").display and not screen.query_one("#run-view").display
