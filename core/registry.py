"""One registry style for providers, judges, methods and formats: name → ``"module:attr"`` + a line.

Entries are strings until asked for, so listing names and descriptions imports nothing; the
target is imported (``importlib``) only when it is used. Adding a judge, method, format or
provider is one line in its package's registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar


@dataclass(frozen=True)
class Entry:
    name: str
    #: ``"package.module:attr"``, or ``"package.module"`` for the module itself.
    target: str
    #: One line for listings (``--list-methods``, pickers, error messages).
    description: str

    def load(self) -> Any:
        module, _, attr = self.target.partition(":")
        loaded = importlib.import_module(module)
        return getattr(loaded, attr) if attr else loaded


E = TypeVar("E", bound=Entry)


class Registry(Mapping[str, E], Generic[E]):
    """Entries by name, in the order given (which is the order they are listed and tried in)."""

    def __init__(self, entries: Iterable[E], aliases: Mapping[str, str] | None = None):
        self._entries = {e.name: e for e in entries}
        self._aliases = dict(aliases or {})

    def __getitem__(self, name: str) -> E:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, name: str) -> E | None:
        """The entry for ``name`` (case and surrounding space ignored, aliases followed), or None."""
        key = name.strip().lower()
        return self._entries.get(self._aliases.get(key, key))

    def load(self, name: str) -> Any:
        """The imported target of ``name``; KeyError when there is no such entry."""
        entry = self.find(name)
        if entry is None:
            raise KeyError(name)
        return entry.load()

    def names(self) -> str:
        """ "a, b, c", for error messages."""
        return ", ".join(self._entries)
