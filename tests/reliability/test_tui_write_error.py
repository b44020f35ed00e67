"""A write the recorder could not store reaches the operator as an error, not as a crash."""

from __future__ import annotations

from storage.writer import WriterError
from tests.tui.conftest import app_for, settle, workbench


async def test_a_lost_write_is_shown_and_the_app_keeps_running(tmp_path):
    wb = workbench(tmp_path / "p.db")
    app = app_for(wb, ["demo:generic"])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        real_flush = wb.flush

        def locked_flush() -> None:
            raise WriterError([RuntimeError("database is locked")])

        wb.flush = locked_flush  # the state a locked or full database leaves the recorder in
        await pilot.press("ctrl+r")  # a finished run refreshes the Runs tab, which flushes first
        await pilot.pause()
        await settle(pilot, app)
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("not stored" in m and "database is locked" in m for m in messages), messages
        assert app.is_running
        wb.flush = real_flush


async def test_a_label_refused_by_a_locked_database_is_shown_not_a_crash(tmp_path):
    import sqlite3

    from tests.tui.conftest import run_and_wait

    wb = workbench(tmp_path / "p.db", write_deadline_s=1)  # the recorder's pending writes give up quickly too
    app = app_for(wb, ["demo:generic", "demo:oracle"])
    async with app.run_test(size=(160, 48)) as pilot:
        await run_and_wait(pilot, app)
        wb.db.execute("PRAGMA busy_timeout = 200")  # give up on the lock quickly in a test
        holder = sqlite3.connect(tmp_path / "p.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        app.screen.run_view.pick_better()
        await pilot.pause()
        await pilot.click("#a")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("not stored" in m and "locked" in m for m in messages), messages
        assert app.is_running
        holder.execute("ROLLBACK")
        human = "SELECT count(*) FROM judgments WHERE human = 1"
        assert wb.db.execute(human).fetchone() == (0,)
        app.screen.run_view.pick_better()  # the lock is gone: the same label is stored
        await pilot.pause()
        await pilot.click("#a")
        await pilot.pause()
        assert wb.db.execute(human).fetchone() == (1,)
    wb.close()
