"""A database that passes the open checks (header, schema, stamp, migrations) but has damaged pages
further in: the first query that reads one fails with "database disk image is malformed". Every
command, and the TUI, then ends in one line naming the file and exit 1, never a traceback."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from click.testing import CliRunner

from tests.cli_runner import unpaced_demo_models  # noqa: F401
from tests.conftest import REPO
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")

MAYA = REPO / "sample_data" / "users" / "maya.json"
#: Tables whose root pages are overwritten: the history, the answers and their scores.
DAMAGED = ("turns", "responses", "judgments")


def invoke(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), *args])


@pytest.fixture
def damaged(tmp_path):
    path = tmp_path / "p.db"
    return path, damaged_db(path)


def damaged_db(path):
    """A real database with a user and a run, then the first bytes of some tables' root pages
    (their b-tree headers) overwritten: the open checks still pass."""
    run_id = healthy_db(path)
    damage(path)
    return run_id


def healthy_db(path):
    assert invoke(path, "import", str(MAYA)).exit_code == 0
    ran = invoke(path, "run", "maya", "p1-open", "--plain", "--model", "demo:oracle")
    assert "stored as run" in ran.output, ran.output
    return sqlite3.connect(path).execute("SELECT id FROM runs").fetchone()[0]


def damage(path):
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'").fetchall())
    conn.close()
    with path.open("r+b") as fh:
        for table in DAMAGED:
            fh.seek((roots[table] - 1) * page)
            fh.write(b"\x00" * 16)
    # `runs` reads none of the damaged tables (`users` counts the turns' tokens: it meets the damage)
    assert invoke(path, "runs").exit_code == 0, "the open checks must pass for this test to mean anything"


COMMANDS = [
    ["users"],
    ["show", "maya"],
    ["export"],
    ["report"],
    ["judge", "RUN", "--judge", "demo:heuristic"],
    ["run", "maya", "p1-open", "--plain", "--model", "demo:generic"],
    ["batch", "--user", "maya", "--query", "p1-open", "--model", "demo:generic", "--name", "b", "-y"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_damaged_page_met_mid_command_gives_one_line_naming_the_file(damaged, args):
    path, run_id = damaged
    result = invoke(path, *[run_id if a == "RUN" else a for a in args])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, sqlite3.Error) and "Traceback" not in result.output
    assert str(path) in result.output and "is damaged" in result.output, result.output


async def test_the_tui_stops_with_one_line_instead_of_a_traceback(tmp_path):
    """Damage that appears while the app is open (the open itself refuses a damaged file)."""
    from tui.cli.errors import report_damage
    from tui.cli.open_app import _build

    path = tmp_path / "p.db"
    await asyncio.to_thread(healthy_db, path)  # the CLI runs its own event loop
    app = _build({"db": str(path)}, demo=True)  # opens on maya: her history is on a damaged page
    damage(path)
    # The app must stop by itself: run it headless until it exits (a hang fails the test).
    await asyncio.wait_for(app.run_async(headless=True, size=(100, 30)), timeout=60)
    assert app.damaged is not None
    assert app.return_code == 1
    with pytest.raises(SystemExit) as stopped:
        report_damage(app, path)
    assert stopped.value.code == 1


WRITERS = [
    *COMMANDS,
    ["import", str(REPO / "sample_data" / "users" / "dana.json")],
    ["attributes", "maya", "--model", "demo:oracle"],
]


@pytest.mark.parametrize("args", WRITERS, ids=lambda a: a[0])
def test_a_damaged_database_is_refused_before_any_write(damaged, args):
    """Damage is found at open, by a check of every page, not when a query first reads the damaged
    page, after other tables were already written: the file's bytes and its folder stay as they were."""
    path, run_id = damaged
    before = _snapshot(path)
    result = invoke(path, *[run_id if a == "RUN" else a for a in args])
    assert result.exit_code == 1, result.output
    assert "is damaged" in result.output, result.output
    assert _snapshot(path) == before, "the damaged database was written to"


def _snapshot(path):
    """The database's bytes and every file next to it (a -wal holding new rows counts as a write)."""
    import hashlib

    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.parent.iterdir()) if p.is_file()}


async def test_a_large_damaged_database_opens_the_screen_then_stops_before_any_write(tmp_path, monkeypatch):
    """The TUI does not wait for a large file's page check before its first screen (it runs on a
    thread); damage it finds stops the app with one line, and nothing was written meanwhile."""
    import storage.page_check
    from tui.cli.errors import report_damage
    from tui.cli.open_app import _build

    monkeypatch.setattr(storage.page_check, "INLINE_BYTES", 0)  # every file is "large"
    path = tmp_path / "p.db"
    await asyncio.to_thread(healthy_db, path)  # the CLI runs its own event loop
    damage(path)
    before = _snapshot(path)
    app = _build({"db": str(path)}, demo=True)
    assert app.workbench.page_check is not None, "the check must run behind the first screen here"
    await asyncio.wait_for(app.run_async(headless=True, size=(100, 30)), timeout=60)
    assert app.return_code == 1 and app.damaged is not None  # the check's refusal, or a read meeting it first
    with pytest.raises(SystemExit) as stopped:
        report_damage(app, path)
    assert stopped.value.code == 1
    assert _snapshot(path) == before, "the damaged database was written to"


async def test_a_large_healthy_database_becomes_writable_once_its_pages_passed(tmp_path, monkeypatch):
    """Until the check has passed the workbench's connection refuses writes; then the runs a killed
    process left are marked interrupted and the operator is told."""
    import storage.page_check
    from tests.tui.conftest import settle
    from tui.cli.open_app import _build

    monkeypatch.setattr(storage.page_check, "INLINE_BYTES", 0)
    path = tmp_path / "p.db"
    run_id = await asyncio.to_thread(healthy_db, path)
    with sqlite3.connect(path) as conn:  # as a process killed mid-run leaves it
        conn.execute("UPDATE runs SET status = 'running', pid = 999999999 WHERE id = ?", (run_id,))
    app = _build({"db": str(path)}, demo=True)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        app.workbench.db.execute("UPDATE runs SET label = 'x'")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.workbench.page_check is None
        app.workbench.db.execute("UPDATE runs SET label = label")  # writable now
    status = sqlite3.connect(path).execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
    assert status == "interrupted"
