"""What every CLI command shares: the console, failing with one red line, opening the workbench."""

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


def open_workbench(obj: dict | None, *, sample_data: bool = True, must_exist: bool = False, db_path=None):
    """The Workbench on the chosen database (sample data imported into an empty one, runs a killed
    process left running marked interrupted), or one red line saying why it cannot be opened.
    ``must_exist``: reading commands do not create a database just to say it is empty."""
    import sqlite3
    from pathlib import Path

    from storage.migrations import MigrationError
    from tui.workbench import Workbench

    settings = settings_of(obj)
    path = db_path or Path(settings.db).expanduser()
    if must_exist and not Path(path).exists():
        fail(f"no database at {path} yet; import data first: prefscope import PATH")
    try:
        return Workbench.open(settings, path, sample_data=sample_data)
    except (MigrationError, sqlite3.DatabaseError, OSError) as exc:
        fail(f"cannot open the database {path}: {exc}")
