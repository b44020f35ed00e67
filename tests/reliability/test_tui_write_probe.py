"""Issue 34 item 3 in the TUI: ctrl+r checks that the database can store the answers before the
first model call, as the CLI does, and refuses with one line when it cannot. The check writes and
may wait for a lock up to ``write_deadline_s``, so it runs off the event loop: the screen keeps
answering keys meanwhile.

The real app (Pilot) on a real SQLite file, a real loopback OpenAI-protocol model counting the
calls, and a real second connection holding the write lock (as another process would)."""

from __future__ import annotations

import sqlite3

import pytest

from core.settings import Endpoint
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tests.tui.conftest import app_for, db_rows, settle, workbench
from tests.waiting import await_until

MODEL = "local:m"


@pytest.fixture
def server():
    with OpenAIServer([Reply.text("an answer")]) as s:
        yield s


def checking(app) -> bool:
    """The write check is under way (waiting for the lock)."""
    return any(w.group == "write-check" and w.is_running for w in app.workers)


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


def hold_the_write_lock(db_path) -> sqlite3.Connection:
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


async def test_a_database_that_cannot_store_the_answers_is_refused_before_any_call(tmp_path, server):
    wb = workbench(tmp_path / "p.db", endpoints={"local": Endpoint(base_url=server.base_url)}, write_deadline_s=1)
    app = app_for(wb, [MODEL])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        holder = hold_the_write_lock(tmp_path / "p.db")
        try:
            await pilot.press("ctrl+r")
            refused = await await_until(
                lambda: [m for m in notices(app) if "no model was called" in m], what="the write check's refusal"
            )
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        (line,) = refused
        assert "cannot write to" in line and str(tmp_path / "p.db") in line and "locked" in line, line
        assert "\n" not in line
        await settle(pilot, app)
        assert len(server.requests) == 0, "no model is called for answers that could not be stored"
        assert app.is_running and not app.screen.run_view.running
        assert db_rows(wb, "SELECT count(*) FROM runs") == [(0,)]
        await pilot.press("ctrl+r")  # the lock is gone: the same key runs and stores
        await settle(pilot, app)
        assert len(server.requests) == 1
        assert db_rows(wb, "SELECT count(*) FROM runs WHERE status = 'ok'") == [(1,)]
    wb.close()


async def test_the_screen_answers_keys_while_the_check_waits_for_the_lock(tmp_path, server):
    wb = workbench(tmp_path / "p.db", endpoints={"local": Endpoint(base_url=server.base_url)})
    app = app_for(wb, [MODEL])  # the default write deadline: the check would wait a minute for the lock
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        holder = hold_the_write_lock(tmp_path / "p.db")
        try:
            await pilot.press("ctrl+r")
            await await_until(lambda: checking(app), what="the write check under way")
            assert app.screen.tabs.active != "evidence"
            await pilot.press("2")  # handled now, not after the check: the loop is free
            await await_until(lambda: app.screen.tabs.active == "evidence", what="the Evidence tab shown")
            assert checking(app) and len(server.requests) == 0  # still waiting, nothing sent
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        await settle(pilot, app)  # the check commits once the lock is free, then the run goes
        assert len(server.requests) == 1
        assert db_rows(wb, "SELECT count(*) FROM runs WHERE status = 'ok'") == [(1,)]
    wb.close()
