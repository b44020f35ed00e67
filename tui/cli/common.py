"""What the CLI commands share: the console, failing with one red line, resolving ids and model
names, opening the workbench."""

from __future__ import annotations

import sys
from typing import NoReturn

from rich.console import Console
from rich.text import Text

from core.text.terminal_safe import terminal_safe

# The commands import the exit codes from here; their table is tui.cli.exit_codes.
from tui.cli.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_PARTIAL  # noqa: F401
from tui.cli.manifest import DECLARED

console = Console(highlight=False)


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """One red line on stderr and exit ``code``. Messages name files, ids and values from the data:
    they reach the terminal through ``terminal_safe``."""
    Console(stderr=True, highlight=False, soft_wrap=True).print(Text(terminal_safe(message), style="bold red"))
    sys.exit(code)


def exit_for_failures(what: str, errors: list[str], total: int) -> None:
    """Exit 1 when every one of ``total`` items (model answers, judgments) failed, 3 when some did,
    naming the first errors; return when none failed."""
    if not errors:
        return
    distinct = list(dict.fromkeys(errors))  # ten judgments refused for one missing key: one cause
    first = "; ".join(distinct[:3]) + (f"; … {len(distinct) - 3} more" if len(distinct) > 3 else "")
    if len(errors) >= total:
        fail(f"every {what} failed: {first}")
    fail(f"{len(errors)} of {total} {what}s failed (the rest are stored): {first}", EXIT_PARTIAL)


def run_id_of(wb, given: str) -> str:
    """The full run id for a full id or a unique prefix (one red line otherwise)."""
    try:
        return wb.resolve_run_id(given)
    except LookupError as exc:
        fail(terminal_safe(str(exc)))


def resolve_filter(wb, f):
    """A ``app.reports.RunFilter`` with its run and user ids resolved to full ids (unknown or
    ambiguous: one red line), so `export`/`report` never answer an empty table for a typo. A user
    may be a pattern (``prefeval-*``): every user it matches."""
    from dataclasses import replace

    return replace(f, run_ids=[run_id_of(wb, r) for r in f.run_ids], users=user_ids_of(wb, f.users))


#: Characters that make a `--user` (or a grid's ``users`` entry) a shell-style pattern.
PATTERN_CHARS = frozenset("*?[")


def user_ids_of(wb, given) -> list[str]:
    """Full user ids for ids, unique prefixes and patterns (``prefeval-*``, ``locomo-conv-?0``:
    :mod:`fnmatch`, case-sensitive), in the order given, each once. A pattern that matches no
    user, or an unknown or ambiguous id, is one red line."""
    ids: list[str] = []
    every: list[str] | None = None
    for name in given:
        if PATTERN_CHARS.isdisjoint(name):
            ids.append(user_of(wb, name).user.id)
            continue
        if every is None:
            every = wb.user_ids()
        matched = _matching(name, every)
        if not matched:
            fail(f"no user matches {name!r} (`prefscope users` lists them; patterns use * ? [...])")
        ids += matched
    return list(dict.fromkeys(ids))


def _matching(pattern: str, user_ids: list[str]) -> list[str]:
    """The ids ``pattern`` matches; an id that is the pattern itself (a ``*`` in a real id) alone."""
    from fnmatch import fnmatchcase

    if pattern in user_ids:
        return [pattern]
    return [u for u in user_ids if fnmatchcase(u, pattern)]


def user_of(wb, given: str):
    """The stored user's bundle for a full id or a unique prefix (one red line otherwise)."""
    try:
        return wb.user(wb.resolve_user_id(given))
    except LookupError as exc:
        fail(terminal_safe(str(exc)))


def query_of(bundle, given: str):
    """The user's query for a full id or a unique prefix (one red line otherwise)."""
    from app.data import resolve_query_id

    try:
        return bundle.query(resolve_query_id(bundle.user.id, [q.id for q in bundle.queries], given))
    except LookupError as exc:
        fail(terminal_safe(str(exc)))


def check_models(settings, model_ids: list[str]) -> None:
    """One red line naming the known providers for a model id no provider serves (before any work)."""
    from core.providers import check_model_name

    for model_id in model_ids:
        problem = check_model_name(model_id.removeprefix("replay:"), settings)
        if problem:
            fail(terminal_safe(problem))


def unpaced_demo_models(workbench) -> None:
    """Demo pacing is for watching answers stream in the workbench: commands that run many cells
    (`batch`, `diagnose --probe`) run the demo models at full speed unless ``demo_tokens_per_s``
    was set (config file or PREFSCOPE_DEMO_TOKENS_PER_S). Before the first provider is made."""
    if "demo_tokens_per_s" not in workbench.settings.model_fields_set:
        workbench.settings = workbench.settings.model_copy(update={"demo_tokens_per_s": 0})


def ensure_writable(workbench, answers: int = 1) -> None:
    """Before a command's first model call: one red line (exit 1) naming the database and why it
    cannot store the ``answers`` answers (read-only, disk full or nearly, locked), instead of
    paying for them and losing them."""
    problem = workbench.write_problem(answers)
    if problem:
        fail(f"{terminal_safe(problem)}; no model was called")


def user_bundle(workbench, user: str, query: str):
    """The stored user (full id or unique prefix), checked to have the query (one red line otherwise)."""
    bundle = user_of(workbench, user)
    try:
        bundle.query(query)
    except KeyError as exc:
        fail(terminal_safe(str(exc).strip("'\"")))
    return bundle


def root_obj(ctx) -> dict:
    """The root command's options (``--db``, ``--config``, ``--user``) from any command's context."""
    return ctx.find_root().obj or {}


def open_data(ctx, *, must_exist: bool = False):
    """The workbench without sample data, for the commands that manage the data themselves
    (``import``, ``users``, ``show``); reading commands do not create a database just to say it is
    empty."""
    return open_workbench(root_obj(ctx), sample_data=False, must_exist=must_exist)


def settings_of(obj: dict | None):
    """Settings for this invocation: --config / --db from the root command win over the file."""
    from core.settings import SettingsError, load_settings
    from tui.cli.themes import theme_problem

    obj = obj or {}
    try:
        settings = load_settings(obj.get("config"), db=obj.get("db"))
    except SettingsError as exc:
        fail(str(exc))
    problem = theme_problem(settings.theme)
    if problem:
        fail(problem)
    return settings


#: Commands that only read the database (declared ``writes=False``): they open it read-only and
#: never create it. (`prompt` writes caches into a database that exists; without one it uses the
#: sample data in memory.)
READ_ONLY_COMMANDS = frozenset(name for name, info in DECLARED.items() if not info.writes)


def no_database(path) -> str:
    return f"no database at {path}; run `prefscope import PATH` or `prefscope demo` first"


def open_workbench(
    obj: dict | None,
    *,
    sample_data: bool = True,
    must_exist: bool = False,
    db_path=None,
    readonly: bool | None = None,
    check_later: bool = False,
):
    """The Workbench on the chosen database (sample data imported into an empty one, runs a killed
    process left running marked interrupted), or one red line saying why it cannot be opened.

    ``readonly`` (default: whether the running command is in :data:`READ_ONLY_COMMANDS`): open
    read-only and create nothing. ``must_exist``: reading commands do not create a database just
    to say it is empty. ``check_later``: the TUI's first screen does not wait for a large file's
    page check (``app.base.Base``)."""
    import sqlite3
    from pathlib import Path

    from app.errors import DatabaseRefused, MigrationError
    from app.workbench import Workbench

    settings = settings_of(obj)
    command = _command_name()
    if readonly is None:
        readonly = command in READ_ONLY_COMMANDS
    path = Path(db_path or settings.db).expanduser()
    if command == "prompt" and db_path is None and not path.exists():
        path = Path(":memory:")  # nothing created; the sample users answer `prompt maya p1-open`
        if not _param("as_json"):
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                Text(f"{no_database(settings.db)}; showing the sample data from memory", style="yellow")
            )
    if (must_exist or readonly) and str(path) != ":memory:" and not path.exists():
        fail(no_database(path))
    try:
        return Workbench.open(settings, path, sample_data=sample_data, readonly=readonly, check_later=check_later)
    except DatabaseRefused as exc:
        fail(str(exc))
    except (MigrationError, sqlite3.DatabaseError, OSError) as exc:
        fail(f"cannot open the database {path}: {exc}")


def _command_name() -> str | None:
    import click

    ctx = click.get_current_context(silent=True)
    return ctx.info_name if ctx is not None else None


def _param(name: str):
    import click

    ctx = click.get_current_context(silent=True)
    return ctx.params.get(name) if ctx is not None else None


async def stoppable(run, stop):
    """Await ``run()`` with Ctrl+C calling ``stop()`` (a clean stop, not a KeyboardInterrupt)."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, stop)
    except (NotImplementedError, RuntimeError):  # not on the main thread / platform without it
        pass
    try:
        return await run()
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass
