"""The last line of defence of every command (tui.cli.LazyGroup.invoke): failures a command cannot
foresee end in one red line naming the file or the cause and exit 1, never a traceback."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path
from typing import NoReturn

import click

from core.text.terminal_safe import terminal_safe
from tui.cli.common import EXIT_INTERRUPTED, fail


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
    from app.records import WriterError

    if isinstance(exc, WriterError):  # the recorder's: why, how many answers, the file they were saved to
        fail(terminal_safe(str(exc)))


_OS_HINTS = {
    errno.ENOSPC: "the disk is full; free some space and try again",
    errno.EDQUOT: "the disk quota is used up; free some space and try again",
    errno.EFBIG: "the file would pass the file size limit of this system or account",
    errno.EACCES: "check the file's and its folder's permissions",
    errno.EPERM: "check the file's and its folder's permissions",
    errno.EROFS: "the file system is read-only",
    errno.EIO: "the disk failed to read or write (I/O error)",
}


def os_failure(group: click.Group, ctx: click.Context, args: list[str], exc: OSError) -> None:
    """One red line naming the file for an OSError (disk full, file too large, permission, a special
    file); return (re-raise) for a closed stdout, which click handles quietly."""
    if exc.errno == errno.EPIPE:
        return
    what = exc.strerror or str(exc) or type(exc).__name__
    hint = _OS_HINTS.get(exc.errno or 0)
    files = [str(f) for f in (exc.filename, exc.filename2) if f is not None]
    where = " → ".join(files) if files else " or ".join(_path_params(group, ctx, args))
    message = f"{where}: {what}" if where else f"{ctx.invoked_subcommand or 'prefscope'}: {what}"
    if hint and hint.lower() not in what.lower():
        message += f" ({hint})"
    fail(message)


def _path_params(group: click.Group, ctx: click.Context, args: list[str]) -> list[str]:
    """The file options the failed command was given (``--out``, ``--png``, ``--csv`` …): a write
    that fails mid-way raises an OSError without a file name."""
    try:
        name, command, rest = group.resolve_command(ctx, list(args))
        if command is None or name is None:
            return []
        sub = command.make_context(name, rest, parent=ctx, resilient_parsing=True)
    except (click.ClickException, click.exceptions.Exit, ValueError):
        return []
    found = []
    for param in command.params:
        value = sub.params.get(param.name or "")
        if isinstance(param.type, click.Path) and isinstance(value, (str, Path)) and not param.multiple:
            found.append(str(value))
    return found


def decode_failure(exc: UnicodeDecodeError) -> NoReturn:
    fail(
        f"a file is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}: {exc.reason}); "
        "save it as UTF-8"
    )


def terminal_safe_click_error(exc: click.ClickException) -> None:
    """Make click print ``exc`` through ``terminal_safe``: its message (a ``BadParameter``'s,
    a ``FileError``'s file name, a refusal's path or id) may name hostile files or ids, and click
    prints it as is. The whole formatted line is wrapped, so every subclass is covered."""
    formatted = exc.format_message
    exc.format_message = lambda: terminal_safe(formatted())  # type: ignore[method-assign]


def out_of_memory(ctx: click.Context) -> NoReturn:
    """MemoryError: one line saying so (a memory limit, or a selection too large for this machine)."""
    command = ctx.invoked_subcommand or "the command"
    fail(
        f"{command} ran out of memory (a memory limit such as `ulimit -v`, or too little free memory "
        "for this selection); narrow it with --batch, --model or --since, or raise the limit"
    )


def interrupted() -> NoReturn:
    """Ctrl+C: a short line and exit 130 (the README's exit codes), not click's "Aborted!" and 1."""
    fail("interrupted (Ctrl+C)", code=EXIT_INTERRUPTED)


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
            stop_on_damage(app, error)
            return
        handle(error)

    app._handle_exception = _handle_exception


def stop_on_damage(app, error: sqlite3.DatabaseError) -> None:
    """Stop the app quietly; :func:`report_damage` says why after ``app.run()`` returns."""
    if getattr(app, "damaged", None) is None:
        app.damaged = error
        app.exit(return_code=1)


def report_damage(app, db_path: Path) -> None:
    """After ``app.run()``: one red line and exit 1 if the app stopped on a damaged database."""
    from app.errors import DatabaseRefused, refusal_message

    damaged = getattr(app, "damaged", None)
    if isinstance(damaged, DatabaseRefused):  # a page check's refusal says it all
        fail(str(damaged))
    if damaged is not None:
        fail(refusal_message(db_path, damaged))
