"""TUI test helpers: a real Workbench on a real SQLite file with the sample users, real demo
providers (or scripted ones injected through the factory), and the real app driven by Pilot."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from textual.command import Command, CommandInput, CommandList, CommandPalette

from app.workbench import Workbench
from core.settings import Settings
from tests.conftest import REPO
from tests.servers.fixtures import openai_server  # noqa: F401
from tests.waiting import await_until
from tui.app import make_app
from tui.widgets.estimate_line import EstimateLine

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


async def settle(pilot, app, timeout: float = 60.0) -> None:
    """Wait until no worker runs (prepare, run, evidence …) and the message queues are drained.
    ``timeout`` only bounds a hang (a prepare may embed for a while on a loaded machine)."""
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


async def choose_in_palette(pilot, query: str, title: str) -> None:
    """Open the command palette, type ``query``, wait until the palette's (asynchronous) search for
    it has finished with the command whose title starts with ``title`` highlighted, then press enter."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await await_until(lambda: isinstance(app.screen, CommandPalette), what="the command palette")
    await pilot.press(*query)

    def chosen() -> bool:
        palette = app.screen
        if not isinstance(palette, CommandPalette) or palette.query_one(CommandInput).value != query:
            return False
        searching = any(
            w.node is palette and w.group == CommandPalette._GATHER_COMMANDS_GROUP and not w.is_cancelled
            for w in app.workers
            if not w.is_finished
        )
        option = palette.query_one(CommandList).highlighted_option
        return not searching and isinstance(option, Command) and str(option.hit.text).startswith(title)

    await await_until(chosen, what=f"{title!r} highlighted in the palette after typing {query!r}")
    await pilot.pause()  # a search the last key started is under way now, or done: look again
    await await_until(chosen, what=f"{title!r} still highlighted in the palette after typing {query!r}")
    await pilot.press("enter")


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a child process (``python -m tui.cli …``, a script): this one's without
    provider keys, prefscope settings or the developer's HOME and XDG folders (those go under
    ``home``); the background embedding off, the shared embedding graph, the repository importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "PREFSCOPE_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "xdg-data"),
        XDG_CONFIG_HOME=str(home / "xdg-config"),
        XDG_CACHE_HOME=str(home / "xdg-cache"),
        PREFSCOPE_EMBED_AHEAD="false",
        PYTHONPATH=str(REPO),
    )
    if "PREFSCOPE_EMBEDDER_CACHE" in os.environ:  # set by tests/conftest.py: the graph `make install` exported
        env["PREFSCOPE_EMBEDDER_CACHE"] = os.environ["PREFSCOPE_EMBEDDER_CACHE"]
    env.update(extra)
    return env


def db_rows(wb: Workbench, sql: str, args=()) -> list[tuple]:
    wb.flush()
    return [tuple(r) for r in wb.db.execute(sql, list(args)).fetchall()]
