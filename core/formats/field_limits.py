"""A per-field size limit on imported text, checked once for every format after it loads.

A file under the whole-file limit can still hold one 20 MB turn; a text that size makes every view,
prompt and token count slow and is almost always a broken export (a base64 image pasted as text,
a log dumped into one message). It is refused with the place named, before anything is stored.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel

from core.formats.base import ImportResult
from core.formats.errors import FormatError

#: Characters per text field; a few MB of text. ``--max-field-mb`` / ``max_field_mb`` raise it.
DEFAULT_MAX_FIELD_CHARS = 4 * 1024 * 1024
_MB = 1024 * 1024


def check_field_sizes(result: ImportResult, source: str, max_chars: int = DEFAULT_MAX_FIELD_CHARS) -> None:
    """Raise :class:`FormatError` naming the record and field of the first text over ``max_chars``."""
    for bundle in result.bundles:
        _check(bundle, f"user {bundle.user.id!r}", source, max_chars)
    for pool in result.fillers:
        _check(pool, f"filler pool {pool.id!r}", source, max_chars)


def _check(record: BaseModel, where: str, source: str, max_chars: int) -> None:
    for path, text in _texts(record, where):
        if len(text) > max_chars:
            raise FormatError(
                source,
                f"{path}: {len(text) / _MB:.1f} MB of text, above the per-field limit of "
                f"{max_chars / _MB:g} MB (raise it with --max-field-mb if this is intended)",
            )


def _texts(value: object, path: str) -> Iterator[tuple[str, str]]:
    """Every string inside ``value`` with a readable path: ``user 'u1' › session 's3' › turn 1 › content``."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, BaseModel):
        for name, item in value.__dict__.items():
            if isinstance(item, list):
                for i, element in enumerate(item):
                    yield from _texts(element, f"{path} › {_singular(name)} {_label(element, i)}")
            else:
                yield from _texts(item, f"{path} › {name}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(item, f"{path}[{key!r}]")


def _singular(name: str) -> str:
    return name[:-1] if name.endswith("s") else name


def _label(item: object, index: int) -> str:
    # Records with an id are named by it (the id is what the user can find in the file).
    ident = getattr(item, "id", None)
    return repr(ident) if isinstance(ident, str) else str(index)
