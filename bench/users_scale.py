"""Benchmark: 20,004 users — `prefscope users`, the workbench's start-up and its "Switch user" palette.

    .venv/bin/python bench/users_scale.py [--users N]

1. Builds the database quickly: `prefscope import sample_data/users` (4 users), then N copies of
   maya (default 20,000) made in SQL (``INSERT … SELECT`` with new ids: her users, sessions,
   preferences, queries and attributes rows; not her turns, which the listing never reads: the
   copies open as sessions without turns).
2. `prefscope users` (tables) and `prefscope users --json`, fresh processes, stdout to a pipe;
   median of 3. Baseline measured in the same run: `sqlite3 DB "select count(*) from sessions"`
   plus a bare interpreter start (`python -c pass`). Goal (issue 34): under 2× that baseline.
   Also against `prefscope users` on the 4 users (prefscope's own start, a database opened): the
   imports of the app layer alone take several times a bare interpreter start.
3. The workbench, headless 200x50, fresh process: start-up to interactive, then in the command
   palette typing "Switch user" until its search is done, and typing a copy's id (``maya-12345``)
   until that user is the highlighted hit. Baseline measured in the same run: the same on the
   4 sample users (finding ``tomasz``). Also shown: the page check opening the database for
   writing does (``PRAGMA quick_check``), which grows with the file, not with the users.

Runs in a temporary directory; never touches the configured database.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from _common import REPO, figure, line, offline_env, run_prefscope

SAMPLE_USERS = REPO / "sample_data" / "users"
TEMPLATE = "maya"
#: Tables copied per user, and the column naming the owner.
OWNED = (("users", "id"), ("sessions", "user_id"), ("preferences", "user_id"), ("queries", "user_id"))
OWNED += (("attributes", "user_id"),)
WANTED = "maya-12345"
SMALL_WANTED = "tomasz"

TUI = r"""
import time
t0 = time.perf_counter()
import asyncio, json, sys
from textual.command import Command, CommandInput, CommandList, CommandPalette
from tui.cli.open_app import _build

def search_done(app, query, title):
    palette = app.screen
    if not isinstance(palette, CommandPalette) or palette.query_one(CommandInput).value != query:
        return False
    searching = any(
        w.node is palette and w.group == CommandPalette._GATHER_COMMANDS_GROUP and not w.is_cancelled
        for w in app.workers if not w.is_finished
    )
    option = palette.query_one(CommandList).highlighted_option
    return not searching and (title is None or (isinstance(option, Command) and title in str(option.hit.text)))

async def typed(app, pilot, query, title):
    await pilot.press("ctrl+p")
    while not isinstance(app.screen, CommandPalette):
        await asyncio.sleep(0.002)
    start = time.perf_counter()
    await pilot.press(*query)
    while True:
        while not search_done(app, query, title):
            await asyncio.sleep(0.002)
        await pilot.pause()
        if search_done(app, query, title):
            break
    took = time.perf_counter() - start
    await pilot.press("escape")
    while isinstance(app.screen, CommandPalette):
        await asyncio.sleep(0.002)
    return took

async def main():
    app = _build({"db": sys.argv[1]}, demo=False)
    marks = {}
    async with app.run_test(size=(200, 50)) as pilot:
        while app.screen.__class__.__name__ != "MainScreen":
            await asyncio.sleep(0.002)
        timeline = app.screen.query_one("#timeline")
        await pilot.press("down")
        marks["interactive"] = time.perf_counter() - t0
        if len(sys.argv) > 2:
            marks["switch_user"] = await typed(app, pilot, "Switch user", None)
            marks["find_user"] = await typed(app, pilot, sys.argv[2], sys.argv[2])
    print(json.dumps(marks))

asyncio.run(main())
"""


def env(tmp: Path) -> dict[str, str]:
    return offline_env(tmp)


def prefscope(tmp: Path, db: Path, *args: str) -> subprocess.CompletedProcess:
    return run_prefscope(env(tmp), db, *args)


def replicate(db: Path, copies: int) -> None:
    """``copies`` more users, each a copy of TEMPLATE under the id ``maya-00001`` …, made in SQL."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.execute(
            "CREATE TEMP TABLE n AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
            " SELECT i FROM n",
            (copies,),
        )
        new_id = f"printf('{TEMPLATE}-%05d', n.i)"
        for table, owner in OWNED:
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})") if c[1] != "pk"]
            values = [new_id if c == owner else f"t.{c}" for c in columns]
            if table == "users":
                values[columns.index("name")] = "t.name || printf(' %05d', n.i)"
            if table == "sessions":  # no turns copied: a copy opens as sessions without turns
                values[columns.index("n_turns")] = "0"
            conn.execute(
                f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(values)}"
                f" FROM {table} t, temp.n n WHERE t.{owner} = ? ORDER BY n.i",
                (TEMPLATE,),
            )
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
    finally:
        conn.close()


def build(tmp: Path, copies: int) -> tuple[Path, Path]:
    """The 4 sample users alone, and with ``copies`` copies of maya."""
    small = tmp / "small.db"
    prefscope(tmp, small, "import", str(SAMPLE_USERS))
    big = tmp / "big.db"
    shutil.copy(small, big)
    replicate(big, copies)
    return small, big


def timed(args: list[str], repeat: int = 3, **kw) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, **kw)
        times.append(time.perf_counter() - t0)
    return median(times)


def count_sessions(db: Path) -> list[str]:
    """The baseline query as the issue states it: the sqlite3 shell if there is one."""
    query = "select count(*) from sessions"
    if shutil.which("sqlite3"):
        return ["sqlite3", str(db), query]
    code = f"import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute({query!r}).fetchone()[0])"
    return [sys.executable, "-c", code, str(db)]


def bench_cli(tmp: Path, small: Path, big: Path, users: int) -> None:
    print(f"`prefscope users` (fresh process, stdout to a pipe, median of 3), {users:,} users")
    count = count_sessions(big)
    sql_s = timed(count)
    bare_s = timed([sys.executable, "-c", "pass"])
    base = sql_s + bare_s
    cli = [sys.executable, "-m", "tui.cli", "--db"]
    kw = {"cwd": REPO, "env": env(tmp)}
    help_s = timed([sys.executable, "-m", "tui.cli", "--help"], **kw)
    small_s = timed([*cli, str(small), "users"], **kw)
    table_s = timed([*cli, str(big), "users"], **kw)
    json_s = timed([*cli, str(big), "users", "--json"], **kw)
    line(f"baseline: {count[0]} count(*) from sessions (s)", f"{sql_s:.3f}")
    line("baseline: bare python start (s)", f"{bare_s:.3f}")
    line("prefscope --help (s)", f"{help_s:.3f}", "the CLI's own start")
    line("prefscope users, 4 users (s)", f"{small_s:.3f}", "prefscope's start with a database open")
    line(f"prefscope users, {users:,} users (s)", f"{table_s:.3f}", f"{table_s / base:.1f}× baseline; goal < 2×")
    line("  the same against sqlite3 count + `users` on 4 users", f"{table_s / (sql_s + small_s):.2f}×")
    line(f"prefscope users --json, {users:,} users (s)", f"{json_s:.3f}", f"{json_s / base:.1f}× baseline")
    baseline = f"sqlite3 count {sql_s:.2f} s + python {bare_s:.2f} s"
    figure(f"`users`, {users:,} users", "< 2× baseline", f"{table_s:.2f} s ({table_s / base:.1f}×)", baseline)
    figure(f"`users --json`, {users:,} users", "< 2× baseline", f"{json_s:.2f} s ({json_s / base:.1f}×)", baseline)
    figure(
        f"`users`, {users:,} users, against prefscope's start",
        "< 2×",
        f"{table_s / (sql_s + small_s):.2f}×",
        f"sqlite3 count {sql_s:.2f} s + `users` on 4 users {small_s:.2f} s",
    )


def probe(tmp: Path, *args: object) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", TUI, *map(str, args)], cwd=REPO, env=env(tmp), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"the workbench probe failed: {done.stderr[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def quick_check(db: Path) -> float:
    """What opening the database for writing adds in proportion to its size (``PRAGMA quick_check``)."""
    conn = sqlite3.connect(db)
    try:
        t0 = time.perf_counter()
        conn.execute("PRAGMA quick_check(3)").fetchall()
        return time.perf_counter() - t0
    finally:
        conn.close()


def bench_tui(tmp: Path, small: Path, big: Path, users: int) -> None:
    print(f"the workbench (fresh process, headless 200x50, best of 2), {users:,} users")
    probe(tmp, small)  # compiles what the bytecode cache lacks, unmeasured
    base = [probe(tmp, small, SMALL_WANTED) for _ in range(2)]
    marks = [probe(tmp, big, WANTED) for _ in range(2)]
    best = {k: (min(m[k] for m in base), min(m[k] for m in marks)) for k in marks[0]}
    checked = quick_check(big)
    size_mb = big.stat().st_size / 1e6
    for key, what in (
        ("interactive", "start-up to interactive"),
        ("switch_user", 'palette: type "Switch user" until searched'),
        ("find_user", f"palette: type {WANTED!r} until highlighted"),
    ):
        small_s, big_s = best[key]
        line(f"{what} (s)", f"{big_s:.3f}", f"4 users {small_s:.3f} s ({big_s / small_s:.1f}×)")
    line(f"  of start-up: the open's page check, {size_mb:,.0f} MB (s)", f"{checked:.3f}", "linear in the file size")
    for key, name in (
        ("interactive", f"TUI start-up to interactive, {users:,} users"),
        ("switch_user", f'TUI palette "Switch user", {users:,} users'),
        ("find_user", f"TUI palette finds one of {users:,} users"),
    ):
        small_s, big_s = best[key]
        figure(name, "≈ 4 users", f"{big_s:.2f} s ({big_s / small_s:.1f}×)", f"4 users {small_s:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20_000, help="copies of maya to add (default 20,000)")
    parser.add_argument("--no-tui", action="store_true", help="only `prefscope users`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prefscope-bench-users-") as name:
        tmp = Path(name)
        t0 = time.perf_counter()
        small, big = build(tmp, args.users)
        users = args.users + len(list(SAMPLE_USERS.glob("*.json")))
        print(f"bench/users_scale.py — {users:,} users built in {time.perf_counter() - t0:.1f} s")
        bench_cli(tmp, small, big, users)
        if not args.no_tui:
            bench_tui(tmp, small, big, users)


if __name__ == "__main__":
    main()
