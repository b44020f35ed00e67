"""Input formats: auto-detection and one entry point, :func:`load_path`.

Each module in this package handles one format (see ``base.py`` for the interface) and is one
line in :data:`FORMATS`. Detection tries them in that order; ``--format`` skips detection.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from core.formats.base import ImportResult
from core.formats.errors import FormatError
from core.formats.field_limits import DEFAULT_MAX_FIELD_CHARS, check_field_sizes
from core.formats.reading import DEFAULT_MAX_BYTES, refuse_special
from core.registry import FIRST, LAST, Entry, Registry, merged

#: The generic formats; each benchmark adds its own (:mod:`core.benchmarks`) between them.
_GENERIC = [
    Entry(
        "native", "core.formats.native", "prefscope's own bundle: one JSON file per user, or a filler pool", order=FIRST
    ),
    Entry(
        "chatlog",
        "core.formats.chatlog",
        "OpenAI-style messages or ShareGPT chat logs (JSON / JSON Lines)",
        order=LAST,
    ),
]


def _gather() -> tuple[list[Entry], dict[str, str]]:
    from core import benchmark as benchmarks

    return merged([_GENERIC, *benchmarks.entries("formats")]), {}


#: Most specific first: a generic chat log would also "look like" several others. Detection
#: order: native, the benchmarks' formats (longmemeval, prefeval, cupid, locomo, personamem, then
#: installed ones), chatlog. Filled on first use.
FORMATS: Registry[Entry] = Registry.deferred(_gather)


def format_order() -> list[str]:
    """Format names in detection order."""
    return list(FORMATS)


def __getattr__(name: str) -> list[str]:
    if name == "FORMAT_ORDER":  # computed on use, so importing this package discovers nothing
        return format_order()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def format_module(name: str) -> ModuleType:
    entry = FORMATS.get(name)
    if entry is None:
        raise FormatError(name, f"unknown format; expected one of {FORMATS.names()}")
    return entry.load()


def detect_format(path: str | Path) -> str:
    path = Path(path)
    for name in format_order():
        if format_module(name).detect(path):
            return name
    raise FormatError(path.name, f"cannot tell the format; pass --format ({', '.join(format_order())})")


def load_path(
    path: str | Path,
    format: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_field_chars: int = DEFAULT_MAX_FIELD_CHARS,
    **options,
) -> ImportResult:
    """Read a file or folder into the model. Raises FormatError; never writes anything.

    ``options`` go to the format's loader (e.g. ``user_speaker="b"`` for LoCoMo); an option the
    detected format does not take is an error rather than silently ignored. Any text field longer
    than ``max_field_chars`` refuses the whole import, naming the record and field.
    """
    path = Path(path)
    if not path.exists():
        raise FormatError(str(path), "no such file or folder")
    refuse_special(path)  # before detection opens it: a FIFO blocks, /dev/zero never ends
    name = format or detect_format(path)
    module = format_module(name)
    if options:
        import inspect

        accepted = inspect.signature(module.load).parameters
        unknown = [k for k in options if k not in accepted]
        if unknown:
            raise FormatError(path.name, f"{', '.join(unknown)} does not apply to the {name} format")
    result = module.load(path, max_bytes, **options)
    check_field_sizes(result, path.name, max_field_chars)
    return result


__all__ = [
    "FORMATS",
    "FORMAT_ORDER",
    "FormatError",
    "ImportResult",
    "detect_format",
    "format_module",
    "format_order",
    "load_path",
]
