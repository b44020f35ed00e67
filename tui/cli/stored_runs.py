"""What the commands reading stored runs share (`export`, `report`, `compare`, `agreement`,
`audit-judge`): the filter options, ``--force``, and the database opened read-only for their reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from tui.cli.common import open_workbench, settings_of

FILTERS = [
    click.option("--runs", "run_ids", multiple=True, help="Run id (repeatable)."),
    click.option("--user", "users", multiple=True, help="User id (repeatable)."),
    click.option("--model", "models", multiple=True, help="Model id (repeatable), e.g. demo:oracle."),
    click.option("--method", "methods", multiple=True, help="Method (repeatable)."),
    click.option("--context", "contexts", multiple=True, help="Context configuration (repeatable)."),
    click.option("--batch", "labels", multiple=True, help="Batch name (repeatable)."),
    click.option(
        "--since",
        default=None,
        callback=lambda ctx, param, value: since_value(value),
        help="Runs created at or after this ISO date or date-time (UTC unless it has an offset), "
        "e.g. 2026-05-01 or 2026-05-01T14:30.",
    ),
]


def since_value(value: str | None) -> str | None:
    """``--since`` as stored times compare: a date as ``YYYY-MM-DD``, a date-time in UTC (naive =
    UTC). Anything else is a usage error naming the value and the expected form."""
    import datetime as dt

    if value is None:
        return None
    text = value.strip()
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        pass
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO date or date-time (expected e.g. 2026-05-01 or 2026-05-01T14:30)",
            param_hint="'--since'",
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).isoformat()


def filters(func):
    for option in reversed(FILTERS):
        func = option(func)
    return func


def run_filter(run_ids, users, models, methods, contexts, labels, since):
    from app.reports import RunFilter
    from core.history.configs import ContextError, config_named
    from core.methods import UnknownMethod, method_info

    try:
        methods = [method_info(m).name for m in methods]
        contexts = [config_named(c).name for c in contexts]
    except (UnknownMethod, ContextError) as exc:
        raise click.ClickException(str(exc)) from None
    return RunFilter(list(run_ids), list(users), list(models), methods, contexts, since, list(labels))


FORCE = click.option("--force", is_flag=True, help="Replace an existing output file (never a database).")


def read_only_workbench(ctx: click.Context, outputs: list[str | None], force: bool):
    """The database, read-only, once every output file is known to be writable: a refused target
    fails the command before any work (the writes check again)."""
    from app.outputs import OutputRefused, check_target

    obj = ctx.obj or {}
    db = Path(settings_of(obj).db).expanduser()
    try:
        for out in filter(None, outputs):
            check_target(out, protect=[db], force=force)
    except OutputRefused as exc:
        raise click.ClickException(str(exc)) from None
    return open_workbench(obj, sample_data=False, readonly=True)


def _corrupt(wb, exc: Exception) -> click.ClickException:
    """A database damaged past its first pages fails mid-query: one line, not a traceback."""
    from app.errors import refusal_message

    return click.ClickException(refusal_message(wb.db_path, exc))


@contextmanager
def reading(wb) -> Iterator:
    """The workbench's database for one command's reads, closed after; damage met mid-query is
    one line naming the file (:func:`_corrupt`)."""
    import sqlite3

    from app.errors import is_corruption

    try:
        yield wb.db
    except sqlite3.DatabaseError as exc:
        if not is_corruption(exc):
            raise
        raise _corrupt(wb, exc) from None
    finally:
        wb.close()
