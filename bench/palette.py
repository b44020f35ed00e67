"""Benchmark: the workbench's command palette (ctrl+p) filtering with 1,000 users.

    .venv/bin/python bench/palette.py [--users N] [--repeats R]

Builds a temporary database (the sample users and N copies of maya, made in SQL as
``bench/users_scale.py`` does), opens the real workbench headless (200x50) and, for each query,
presses ctrl+p, sends the query's keys at once (a fast typist's; ``pilot.press`` waits for the app
to go idle after every key, ~60-90 ms a key here, which no terminal does) and measures until the
palette's search for the typed text has finished with the expected entry highlighted (median of
R). Baseline measured in the same run and the same way: Textual's own palette on a bare App with
20 plain commands (issue 36: under 100 ms for 20 commands and 1,000 users; the ratio to that
baseline is the figure).

Also times the workbench's provider alone: each query typed key by key, the slowest key's
``search()`` run to its end (no list drawn).
Runs in a temporary directory; never touches the configured database.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from statistics import median

from _common import figure, line
from users_scale import replicate

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

#: (typed, expected start of the highlighted entry's title) on the workbench.
QUERIES = (
    ("cancel all", "Cancel all"),
    ("context long", "Context: Long"),
    ("method rag", "Method: rag"),
    ("maya-00777", "Switch user: "),
    ("tab runs", "Show tab: Runs"),
    # long titles (a query's text): the fuzzy scoring's worst case
    ("query four days off", "Query: "),
)
#: The same shapes on the bare App's 20 commands.
PLAIN = tuple(f"Command number {n:02d}" for n in range(20))
PLAIN_QUERIES = (("number 07", "Command number 07"), ("cmd 15", "Command number 15"))


def search_done(app, query: str, title: str) -> bool:
    """The palette shows the results of ``query`` (typed whole), its search has finished, and the
    highlighted entry's title starts with ``title``."""
    from textual.command import Command, CommandInput, CommandList, CommandPalette

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


def highlighted(app) -> str | None:
    from textual.command import Command, CommandList

    option = app.screen.query_one(CommandList).highlighted_option
    return str(option.hit.text) if isinstance(option, Command) else None


def send_keys(app, text: str) -> None:
    """The keys of ``text`` as a fast typist's: queued at once, without Pilot's wait for the app to
    go idle after each (that wait is most of a ``pilot.press``, and no terminal has it)."""
    from textual import events

    for char in text:
        key = "space" if char == " " else ("minus" if char == "-" else char)
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


async def typed(app, pilot, query: str, title: str) -> float:
    """Seconds from the first key of ``query`` to its search done with ``title`` highlighted."""
    from textual.command import CommandInput, CommandPalette

    await pilot.press("ctrl+p")
    while not isinstance(app.screen, CommandPalette):
        await asyncio.sleep(0.001)
    await pilot.pause()
    start = time.perf_counter()
    send_keys(app, query)
    deadline = start + 30
    while not search_done(app, query, title):
        if time.perf_counter() > deadline:
            typed_text = app.screen.query_one(CommandInput).value
            raise SystemExit(
                f"{query!r}: {title!r} never highlighted (typed {typed_text!r}, shown: {highlighted(app)!r})"
            )
        await asyncio.sleep(0.001)
    took = time.perf_counter() - start
    await pilot.press("escape")
    while isinstance(app.screen, CommandPalette):
        await asyncio.sleep(0.001)
    return took


def plain_app():
    from textual.app import App
    from textual.command import Hit, Hits, Provider

    class Plain(Provider):
        async def search(self, query: str) -> Hits:
            matcher = self.matcher(query)
            for title in PLAIN:
                score = matcher.match(title)
                if score > 0:
                    yield Hit(score, matcher.highlight(title), lambda: None, text=title)

    class Bare(App):
        COMMANDS = {Plain}

    return Bare()


async def measure(app, queries, repeats: int, ready=None) -> dict[str, float]:
    out: dict[str, list[float]] = {q: [] for q, _ in queries}
    async with app.run_test(size=(200, 50)) as pilot:
        if ready is not None:
            await ready(app, pilot)
        for query, title in queries:  # once unmeasured: first-use imports and caches
            await typed(app, pilot, query, title)
        for _ in range(repeats):
            for query, title in queries:
                out[query].append(await typed(app, pilot, query, title))
        if ready is not None:
            out.update(await provider_alone(app, queries, repeats))
    return {k: median(v) for k, v in out.items()}


async def provider_alone(app, queries, repeats: int) -> dict[str, list[float]]:
    """The workbench provider's ``search`` for each query typed key by key, as the palette asks
    it: the slowest key press (a fresh provider per pass: nothing scored by an earlier one)."""
    from tui.screens.commands import WorkbenchCommands

    out: dict[str, list[float]] = {}
    for query, _ in queries:
        worst = []
        for _ in range(repeats):
            provider = WorkbenchCommands(app.screen)
            slowest = 0.0
            for end in range(1, len(query) + 1):
                t0 = time.perf_counter()
                async for _hit in provider.search(query[:end]):
                    pass
                slowest = max(slowest, time.perf_counter() - t0)
            worst.append(slowest)
        out[f"provider: {query}"] = worst
    return out


async def workbench_ready(app, pilot) -> None:
    while app.screen.__class__.__name__ != "MainScreen":
        await asyncio.sleep(0.005)
    deadline = time.perf_counter() + 60
    while any(w.is_running for w in app.workers) and time.perf_counter() < deadline:
        await asyncio.sleep(0.01)
    await pilot.pause()


def build(tmp: Path, users: int):
    from app.workbench import Workbench
    from core.settings import Settings

    db = tmp / "palette.db"
    settings = Settings(db=db, demo_tokens_per_s=0, embed_ahead=False)
    wb = Workbench(settings)
    wb.ensure_sample_data()
    wb.close()
    replicate(db, users)
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000, help="copies of maya to add (default 1,000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes over the queries (median)")
    args = parser.parse_args()
    from app.workbench import Workbench
    from tui.app import make_app

    with tempfile.TemporaryDirectory(prefix="prefscope-bench-palette-") as name:
        settings = build(Path(name), args.users)
        base = asyncio.run(measure(plain_app(), PLAIN_QUERIES, args.repeats))
        app = make_app(
            settings, Workbench(settings), models=["demo:generic"], initial_user="maya", remember_theme=False
        )
        ours = asyncio.run(measure(app, QUERIES, args.repeats, ready=workbench_ready))
    baseline = median(base.values())
    print(f"bench/palette.py — the command palette, {args.users + 4:,} users, median of {args.repeats}")
    for query, took in base.items():
        line(f"baseline: Textual's palette, 20 commands, {query!r} (ms)", f"{took * 1e3:.1f}")
    for query, took in ours.items():
        if query.startswith("provider: "):
            line(f"{query!r}, slowest key (ms)", f"{took * 1e3:.1f}", "the search alone, typed key by key")
        else:
            line(f"workbench palette, {query!r} (ms)", f"{took * 1e3:.1f}", f"{took / baseline:.2f}× baseline")
    worst = max(v for k, v in ours.items() if not k.startswith("provider: "))
    figure(
        f"palette filter, {args.users + 4:,} users (slowest query)",
        "< 100 ms",
        f"{worst * 1e3:.0f} ms ({worst / baseline:.1f}×)",
        f"Textual's palette, 20 commands: {baseline * 1e3:.0f} ms",
    )


if __name__ == "__main__":
    main()
