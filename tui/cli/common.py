"""What every CLI command shares: the console, failing with one red line, opening services."""

from __future__ import annotations

import sys
from typing import NoReturn

from rich.console import Console
from rich.text import Text

console = Console(highlight=False)


def fail(message: str) -> NoReturn:
    Console(stderr=True, highlight=False, soft_wrap=True).print(Text(message, style="bold red"))
    sys.exit(1)


def settings_of(obj: dict | None):
    """Settings for this invocation: --config / --db from the root command win over the file."""
    from core.settings import SettingsError, load_settings

    obj = obj or {}
    try:
        return load_settings(obj.get("config"), db=obj.get("db"))
    except SettingsError as exc:
        fail(str(exc))


def open_services(obj: dict | None, *, sample_data: bool = True):
    """Settings and a Workbench on the chosen database (sample data imported into an empty one)."""
    import sqlite3

    from storage.migrations import MigrationError
    from storage.runs import mark_interrupted
    from tui.workbench import Workbench

    settings = settings_of(obj)
    try:
        workbench = Workbench(settings)
    except (MigrationError, sqlite3.DatabaseError, OSError) as exc:
        fail(f"cannot open the database {settings.db}: {exc}")
    if sample_data:
        workbench.ensure_sample_data()
    mark_interrupted(workbench.db)
    return settings, workbench
