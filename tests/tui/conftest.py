"""TUI test helpers: a real Workbench on a real SQLite file with the sample users, real demo
providers (or scripted ones injected through the factory), and the real app driven by Pilot."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.settings import Settings
from tests.servers.fixtures import openai_server  # noqa: F401
from tui.app import make_app
from tui.widgets.estimate_line import EstimateLine
from tui.workbench import Workbench

DEMO = ["demo:generic", "demo:retrieval", "demo:oracle"]


def workbench(db: Path, *, tokens_per_s: float = 0, provider_for=None, **settings) -> Workbench:
    """A workbench on ``db`` with the sample data imported. ``tokens_per_s=0``: demo models unpaced.
    The background embedding is off unless asked for (``settle`` would wait for it)."""
    settings.setdefault("embed_ahead", False)
    s = Settings(db=db, demo_tokens_per_s=tokens_per_s, **settings)
    wb = Workbench(s, provider_for=provider_for)
    wb.ensure_sample_data()
    return wb


def app_for(wb: Workbench, models: list[str] | None = None, user: str = "maya"):
    return make_app(wb.settings, wb, models=models or list(DEMO), initial_user=user, remember_theme=False)


@pytest.fixture
def wb(tmp_path):
    return workbench(tmp_path / "prefscope.db")


async def settle(pilot, app, timeout: float = 30.0) -> None:
    """Wait until no worker runs (prepare, run, evidence …) and the message queues are drained."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    await pilot.pause()
    while loop.time() < end:
        estimate = next(iter(app.screen.query(EstimateLine)), None)
        busy = [w for w in app.workers if w.is_running] or (estimate is not None and estimate.timer is not None)
        run_view = getattr(app.screen, "run_view", None)
        if not busy and not (run_view is not None and run_view.running):
            await pilot.pause()
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"still busy after {timeout} s: {[w.description for w in app.workers if w.is_running]}")


async def run_and_wait(pilot, app) -> None:
    await settle(pilot, app)
    await pilot.press("ctrl+r")
    await pilot.pause()
    await settle(pilot, app)
    app.workbench.flush()


def db_rows(wb: Workbench, sql: str, args=()) -> list[tuple]:
    wb.flush()
    return [tuple(r) for r in wb.db.execute(sql, list(args)).fetchall()]
