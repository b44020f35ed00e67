"""Thousands of users (issue 34, item 10: with 20,004 users `prefscope users` took 28 s and typing
"Switch user" in the palette 14.5 s). The work per user stays small and fixed: `users` is one
listing query with the counts grouped in SQL and one formatted line per user (no Rich table
measuring every cell); the palette searches an index of the user list, scoring a few users per search, without a
query; start-up reads each user's id, name and source, not every session.

No clock: the tests count SQL statements (sqlite3's trace), SQLite's virtual-machine steps (its
progress handler), the rows handed to Rich and the fuzzy matcher's calls, for 100 and 1,000 users
(copies of the sample user maya, made in SQL as ``bench/users_scale.py`` makes 20,000).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import rich.table
from click.testing import CliRunner
from rich.cells import cell_len
from textual.command import CommandInput, CommandList, CommandPalette
from textual.fuzzy import FuzzySearch

from core.formats.base import ImportResult
from core.model import Attribute, Preference, Query, Session, Turn, User, UserBundle
from core.text.terminal_safe import one_line
from storage.users import load_user, save_import
from tests.tui.conftest import app_for, choose_in_palette, settle, workbench
from tests.waiting import await_until
from tui.cli import main
from tui.screens.commands import WorkbenchCommands

UNIQUE = "zq-7"  # the one user the palette must find among the copies
UNIQUE_NAME = "Zoë Quartermaine"


def copies_of_maya(conn: sqlite3.Connection, n: int) -> None:
    """``n`` copies of maya (``maya-00001`` …): her users, sessions, preferences, queries and
    attributes rows, with new ids, in one transaction (not her turns, which the listing never reads: her copies open without turns)."""
    with conn:
        conn.execute("DROP TABLE IF EXISTS temp.n")
        conn.execute(
            "CREATE TEMP TABLE n AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
            " SELECT i FROM n",
            (n,),
        )
        for table, owner in (
            ("users", "id"),
            ("sessions", "user_id"),
            ("preferences", "user_id"),
            ("queries", "user_id"),
        ):
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})") if c[1] != "pk"]
            values = ["printf('maya-%05d', n.i)" if c == owner else f"t.{c}" for c in columns]
            if table == "users":
                values[columns.index("name")] = "t.name || printf(' %05d', n.i)"
            if table == "sessions":  # no turns copied: a copy opens as sessions without turns
                values[columns.index("n_turns")] = "0"
            conn.execute(
                f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(values)}"
                f" FROM {table} t, temp.n n WHERE t.{owner} = 'maya' ORDER BY n.i"
            )


def unique_user() -> UserBundle:
    return UserBundle(
        user=User(id=UNIQUE, name=UNIQUE_NAME, source="handmade"),
        sessions=[Session(id="s1", kind="filler", turns=[Turn(role="user", content="Tea, please.")])],
        preferences=[Preference(id="p1", text="Likes tea")],
        queries=[Query(id="q1", kind="open", text="Drink?", preference_id="p1")],
        attributes=[Attribute(id="a1", text="Drinks tea")],
    )


def many_users(path: Path, copies: int):
    """A workbench on the sample users, the unique user and ``copies`` copies of maya."""
    wb = workbench(path)
    save_import(wb.db, ImportResult(format="native", bundles=[unique_user()]))
    copies_of_maya(wb.db.conn, copies)
    return wb


class Traced:
    """Every SQL statement the connections opened meanwhile run (sqlite3's trace callback)."""

    def __init__(self, monkeypatch):
        self.statements: list[str] = []
        real = sqlite3.connect

        def connect(*args, **kwargs):
            conn = real(*args, **kwargs)
            conn.set_trace_callback(self.statements.append)
            return conn

        monkeypatch.setattr(sqlite3, "connect", connect)


def cli(db: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner(env=env).invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_users_runs_the_same_statements_and_no_rich_table_for_100_or_1000_users(tmp_path, monkeypatch):
    laid_out: list[int] = []
    real_add_row = rich.table.Table.add_row

    def add_row(self, *cells, **kwargs):
        laid_out.append(1)
        return real_add_row(self, *cells, **kwargs)

    monkeypatch.setattr(rich.table.Table, "add_row", add_row)
    statements = {}
    for copies in (100, 1000):
        db = tmp_path / f"{copies}.db"
        many_users(db, copies).close()
        with monkeypatch.context() as patch:
            traced = Traced(patch)
            # no token-count cache file: its lookups depend on what this process counted before
            output = cli(db, "users", env={"PREFSCOPE_TOKEN_CACHE": "off"})
        statements[copies] = list(traced.statements)
        expected = sorted(["dana", "maya", "priya", "tomasz", UNIQUE, *(f"maya-{i:05d}" for i in range(1, copies + 1))])
        lines = output.splitlines()
        assert lines[0].strip() == f"{len(expected)} users"
        assert [line.split()[0] for line in lines[2 : 2 + len(expected)]] == expected
    assert len(statements[1000]) == len(statements[100]), (statements[100], statements[1000])
    assert not laid_out, "Rich laid out a table row per user (it measures every cell)"


def odd_user(uid: str, name: str, source: str, sessions: int) -> UserBundle:
    turns = [Turn(role="user", content="x" * 37)]
    return UserBundle(
        user=User(id=uid, name=name, source=source),
        sessions=[Session(id=f"s{i}", kind="filler", turns=turns) for i in range(sessions)],
    )


@pytest.mark.parametrize("columns,color", [("80", False), ("200", False), ("44", False), ("120", True)])
def test_users_counts_each_users_own_rows_one_line_each(tmp_path, columns, color):
    wb = workbench(tmp_path / "p.db")
    odd = [
        odd_user("a-rather-long-user-id-from-some-benchmark-0017", "名前の長い利用者 😀 " * 3, "personamem-128k", 3),
        odd_user("empty", "", "x", 0),
        odd_user("hostile", "Mal\x1b[2J\u202eexe.txt\nnext", "src\tx", 1),
    ]
    save_import(wb.db, ImportResult(format="native", bundles=[unique_user(), *odd]))
    ids = [r[0] for r in wb.db.execute("SELECT id FROM users ORDER BY id").fetchall()]
    bundles = {uid: load_user(wb.db, uid) for uid in ids}
    wb.close()
    env = {"COLUMNS": columns, "FORCE_COLOR": "1" if color else "", "NO_COLOR": ""}

    doc = json.loads(cli(tmp_path / "p.db", "users", "--json"))
    listed = doc["users"]
    assert [u["id"] for u in listed] == ids
    for u in listed:
        b = bundles[u["id"]]
        counts = (u["sessions"], u["preferences"], u["queries"], u["attributes"])
        assert counts == (len(b.sessions), len(b.preferences), len(b.queries), len(b.attributes)), u["id"]
        assert u["chars"] == sum(len(t.content) for s in b.sessions for t in s.turns), u["id"]

    printed = cli(tmp_path / "p.db", "users", env=env)
    lines = printed.splitlines()
    assert f"{len(listed)} users" in lines[0]
    for u, row in zip(listed, lines[2 : 2 + len(listed)]):
        assert cell_len(row) <= int(columns), row  # one terminal line per user, never wrapped
        assert row.startswith(one_line(u["id"])[: int(columns) - 1]), (u["id"], row)
    assert "\u202e" not in printed and "\x1b[2J" not in printed, "a hostile name reached the terminal"
    assert "tokens as `prefscope show USER` counts them" in printed
    if int(columns) >= 120:
        for u, row in zip(listed, lines[2 : 2 + len(listed)]):
            counts = [u[k] for k in ("sessions", "preferences", "queries", "attributes", "tokens")]
            assert row.split()[1:6] == [f"{c:,}" for c in counts], row


class FuzzyCalls:
    """How often the palette's fuzzy matcher is asked to score a title."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = FuzzySearch.match

        def match(search, query, candidate):
            self.count += 1
            return real(search, query, candidate)

        monkeypatch.setattr(FuzzySearch, "match", match)


async def test_a_palette_search_scores_the_same_few_titles_and_runs_no_query_for_100_or_1000_users(
    tmp_path, monkeypatch
):
    scored, users_hit = {}, {}
    for copies in (100, 1000):
        wb = many_users(tmp_path / f"{copies}.db", copies)
        app = app_for(wb)
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot, app)
            statements: list[str] = []
            wb.db.conn.set_trace_callback(statements.append)
            with monkeypatch.context() as patch:
                calls = FuzzyCalls(patch)
                hits = [hit async for hit in WorkbenchCommands(app.screen).search("Switch user")]
            found = [hit async for hit in WorkbenchCommands(app.screen).search("Quartermaine")]
            wb.db.conn.set_trace_callback(None)
            assert statements == [], statements
            scored[copies] = calls.count
            users_hit[copies] = sum(str(hit.text).startswith("Switch user: ") for hit in hits)
            assert [str(hit.text) for hit in found] == [f"Switch user: {UNIQUE_NAME} ({UNIQUE}, handmade)"]
        wb.close()
    assert scored[1000] == scored[100], scored
    assert users_hit[1000] == users_hit[100] < 100, users_hit


async def searched(pilot, query: str) -> CommandList:
    """Type ``query`` into the open palette; the hit list once its search for it has finished."""
    app = pilot.app
    await pilot.press(*query)

    def done() -> bool:
        palette = app.screen
        if not isinstance(palette, CommandPalette) or palette.query_one(CommandInput).value != query:
            return False
        gathering = CommandPalette._GATHER_COMMANDS_GROUP
        return not any(
            w.node is palette and w.group == gathering and not w.is_cancelled for w in app.workers if not w.is_finished
        )

    await await_until(done, timeout=120, what=f"the palette's search for {query!r}")
    await pilot.pause()
    await await_until(done, timeout=120, what=f"the palette's search for {query!r}, settled")
    return app.screen.query_one(CommandList)


async def test_the_palette_lists_a_few_of_2000_users_and_switches_to_the_one_typed(tmp_path):
    wb = many_users(tmp_path / "p.db", 2000)
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        await await_until(lambda: isinstance(app.screen, CommandPalette), what="the command palette")
        listed = await searched(pilot, "Switch user")
        assert 0 < listed.option_count < 100, listed.option_count
        await pilot.press("escape")
        await await_until(lambda: not isinstance(app.screen, CommandPalette), what="the palette closed")
        await choose_in_palette(pilot, "Quartermaine", f"Switch user: {UNIQUE_NAME}")
        await settle(pilot, app)
        assert app.screen.bundle.user.id == UNIQUE
    wb.close()


async def test_start_up_reads_no_session_of_1000_users(tmp_path):
    """SQLite's virtual-machine steps during start-up (sample data check, user list, first user,
    runs tab): ten times the users may add a few steps per user, not a pass over their sessions."""
    steps = {}
    for copies in (100, 1000):
        wb = many_users(tmp_path / f"{copies}.db", copies)
        counted = [0]

        def step(counted=counted) -> int:
            counted[0] += 1
            return 0

        wb.db.conn.set_progress_handler(step, 100)
        wb.ensure_sample_data()  # what opening the workbench does first
        app = app_for(wb)
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot, app)
            wb.db.conn.set_progress_handler(None, 0)
        steps[copies] = counted[0] * 100
        wb.close()
    per_user = (steps[1000] - steps[100]) / 900
    # maya's copies have 36 sessions, 8 preferences and 32 queries each: a pass over them costs
    # hundreds of steps per user; reading a user's id, name and source, a few dozen.
    assert per_user < 100, steps
