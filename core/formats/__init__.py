"""Input formats: auto-detection and one entry point, :func:`load_path`.

Each module in this package handles one format (see ``base.py`` for the interface). Detection
tries them in ``FORMAT_ORDER``; ``--format`` skips detection.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from core.formats.base import ImportResult
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES

#: Most specific first: a generic chat log would also "look like" several others.
FORMAT_ORDER = ["native", "prefeval", "cupid", "locomo", "chatlog"]


def format_module(name: str):
    if name not in FORMAT_ORDER:
        raise FormatError(name, f"unknown format; expected one of {', '.join(FORMAT_ORDER)}")
    return importlib.import_module(f"core.formats.{name}")


def detect_format(path: Path) -> str:
    for name in FORMAT_ORDER:
        try:
            module = format_module(name)
        except ModuleNotFoundError:
            continue
        if module.detect(path):
            return name
    raise FormatError(path.name, f"cannot tell the format; pass --format ({', '.join(FORMAT_ORDER)})")


def load_path(
    path: str | Path, format: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES, **options
) -> ImportResult:
    """Read a file or folder into the model. Raises FormatError; never writes anything.

    ``options`` go to the format's loader (e.g. ``user_speaker="b"`` for LoCoMo); an option the
    detected format does not take is an error rather than silently ignored.
    """
    path = Path(path)
    if not path.exists():
        raise FormatError(str(path), "no such file or folder")
    name = format or detect_format(path)
    module = format_module(name)
    if options:
        import inspect

        accepted = inspect.signature(module.load).parameters
        unknown = [k for k in options if k not in accepted]
        if unknown:
            raise FormatError(path.name, f"{', '.join(unknown)} does not apply to the {name} format")
    return module.load(path, max_bytes, **options)


__all__ = ["FORMAT_ORDER", "FormatError", "ImportResult", "detect_format", "format_module", "load_path"]
