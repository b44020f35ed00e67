"""The last line of defence of every command (tui.cli.LazyGroup.invoke): failures a command cannot
foresee end in one red line naming the file or the cause and exit 1, never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import NoReturn

import click

from core.text.terminal_safe import terminal_safe
from tui.cli.common import fail


def database_failure(ctx: click.Context, exc: sqlite3.DatabaseError) -> NoReturn:
    """A query failed mid-command: SQLITE_CORRUPT / NOTADB (the file is damaged further in than the
    open checks read), or another SQLite error (locked past the timeout, disk full, I/O)."""
    from app.errors import DatabaseRefused, is_corruption, refusal_message

    if isinstance(exc, DatabaseRefused):  # its message names the file and what to do
        fail(str(exc))
    path = _db_path(ctx)
    if is_corruption(exc):
        fail(refusal_message(path, exc))
    fail(
        f"the database {path} failed: {exc}. If another process is writing to it, try again when it is done; "
        "else check the disk space and the file's permissions"
    )


def known_failure(ctx: click.Context, exc: Exception) -> None:
    """One red line for the errors whose message already says what to do; return for any other."""
    from app.errors import CorruptHistory
    from core.providers import UnknownProvider

    if isinstance(exc, UnknownProvider):
        fail(terminal_safe(str(exc)))
    if isinstance(exc, CorruptHistory):
        from app.errors import damaged_message

        fail(damaged_message(_db_path(ctx), exc))


def _db_path(ctx: click.Context) -> Path:
    obj = ctx.find_root().obj or {}
    if obj.get("db"):
        return Path(obj["db"]).expanduser()
    from core.settings import SettingsError, load_settings

    try:
        return Path(load_settings(obj.get("config")).db).expanduser()
    except SettingsError:
        return Path("the database")


def exit_quietly_on_damage(app) -> None:
    """Make the Textual ``app`` stop without its traceback screen when a query meets a damaged page,
    keeping the error in ``app.damaged`` for :func:`report_damage` after ``app.run()`` returns.
    (Textual routes every unhandled exception, workers' included, through ``_handle_exception``.)"""
    from app.errors import is_corruption

    app.damaged = None
    handle = app._handle_exception

    def _handle_exception(error: Exception) -> None:
        if isinstance(error, sqlite3.DatabaseError) and is_corruption(error) and app.damaged is None:
            app.damaged = error
            app.exit(return_code=1)
            return
        handle(error)

    app._handle_exception = _handle_exception


def report_damage(app, db_path: Path) -> None:
    """After ``app.run()``: one red line and exit 1 if the app stopped on a damaged database."""
    from app.errors import refusal_message

    if getattr(app, "damaged", None) is not None:
        fail(refusal_message(db_path, app.damaged))
