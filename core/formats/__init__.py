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
from core.formats.reading import DEFAULT_MAX_BYTES
from core.registry import Entry, Registry

#: Most specific first: a generic chat log would also "look like" several others.
FORMATS: Registry[Entry] = Registry(
    [
        Entry("native", "core.formats.native", "prefscope's own bundle: one JSON file per user, or a filler pool"),
        Entry("longmemeval", "core.formats.longmemeval", "LongMemEval questions, each with its dated haystack"),
        Entry("prefeval", "core.formats.prefeval", "PrefEval's benchmark_dataset folder, or one file from it"),
        Entry("cupid", "core.formats.cupid", "CUPID instances (JSON, JSON Lines or a folder)"),
        Entry("locomo", "core.formats.locomo", "LoCoMo long two-person conversations with QA"),
        Entry(
            "personamem",
            "core.formats.personamem",
            "PersonaMem questions_<size>.csv with its shared_contexts_<size>.jsonl (or a folder of them)",
        ),
        Entry("chatlog", "core.formats.chatlog", "OpenAI-style messages or ShareGPT chat logs (JSON / JSON Lines)"),
    ]
)
FORMAT_ORDER = list(FORMATS)


def format_module(name: str) -> ModuleType:
    entry = FORMATS.get(name)
    if entry is None:
        raise FormatError(name, f"unknown format; expected one of {FORMATS.names()}")
    return entry.load()


def detect_format(path: str | Path) -> str:
    path = Path(path)
    for name in FORMAT_ORDER:
        if format_module(name).detect(path):
            return name
    raise FormatError(path.name, f"cannot tell the format; pass --format ({', '.join(FORMAT_ORDER)})")


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


__all__ = ["FORMATS", "FORMAT_ORDER", "FormatError", "ImportResult", "detect_format", "format_module", "load_path"]
