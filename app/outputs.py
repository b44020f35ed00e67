"""Files the commands write (exports, reports, figures): never onto the database or another SQLite
file, nor over an existing file unless forced, and written whole or not at all
(``storage.output_files``); CSV cells through ``formula_safe``, so a spreadsheet runs none of them.

Files written without a path of their own (a screenshot, an export's suggested name) go to the
``outputs_dir`` setting (:func:`output_path`), never the current directory."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from storage.output_files import OutputRefused, check_target, formula_safe, replace_atomically

if TYPE_CHECKING:
    from core.settings import Settings

__all__ = [
    "OutputRefused",
    "check_target",
    "formula_safe",
    "output_path",
    "outputs_dir",
    "replace_atomically",
    "stamped",
]


def outputs_dir(settings: Settings) -> Path:
    """The ``outputs_dir`` setting as an absolute path, ``~`` expanded (not created): what a
    notification names must be findable from any directory."""
    return Path(settings.outputs_dir).expanduser().absolute()


def stamped(prefix: str, suffix: str, now: dt.datetime | None = None) -> str:
    """``prefix_20261128-093000-123.suffix``: a name that sorts by time, to the millisecond (two
    screenshots a second apart are two files)."""
    when = now or dt.datetime.now()
    return f"{prefix}_{when.strftime('%Y%m%d-%H%M%S')}-{when.microsecond // 1000:03d}{suffix}"


def output_path(settings: Settings, name: str) -> Path:
    """``name`` in the outputs folder, which is created if missing (an OSError says why it cannot be)."""
    folder = outputs_dir(settings)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name
