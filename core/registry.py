"""One registry style for providers, judges, methods and formats: name → ``"module:attr"`` + a line.

Entries are strings until asked for, so listing names and descriptions imports nothing; the
target is imported (``importlib``) only when it is used. Adding a judge, method, format or
provider is one line in its package's registry.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

#: Where an entry goes in a merged registry (:mod:`core.benchmarks`): lower first, ties in the
#: order given. Built-in entries set it to keep today's order; a third-party benchmark's entries
#: default to :data:`THIRD_PARTY` (after the built-ins, before the generic fallbacks at :data:`LAST`).
FIRST = 0
THIRD_PARTY = 1000
LAST = 10_000


@dataclass(frozen=True)
class Entry:
    name: str
    #: ``"package.module:attr"``, or ``"package.module"`` for the module itself.
    target: str
    #: One line for listings (``--list-methods``, pickers, error messages).
    description: str
    #: Position when registries are merged from several benchmarks (see :data:`FIRST`).
    order: float = field(default=THIRD_PARTY, kw_only=True, compare=False)

    def load(self) -> Any:
        module, _, attr = self.target.partition(":")
        loaded = importlib.import_module(module)
        return getattr(loaded, attr) if attr else loaded


E = TypeVar("E", bound=Entry)


class Registry(Mapping[str, E], Generic[E]):
    """Entries by name, in the order given (which is the order they are listed and tried in).

    :meth:`deferred` builds one whose entries are gathered on first use (from installed
    benchmarks), so importing the package that holds it stays cheap."""

    def __init__(self, entries: Iterable[E], aliases: Mapping[str, str] | None = None):
        self._entries = {e.name: e for e in entries}
        self._aliases = dict(aliases or {})
        self._build: Callable[[], tuple[Iterable[E], Mapping[str, str]]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def deferred(cls, build: Callable[[], tuple[Iterable[E], Mapping[str, str]]]) -> Registry[E]:
        """A registry whose ``(entries, aliases)`` come from ``build()``, called once, on first use."""
        registry: Registry[E] = cls([])
        registry._build = build
        return registry

    def _ready(self) -> dict[str, E]:
        if self._build is not None:  # first use; a worker thread may get here at the same time
            with self._lock:
                if self._build is not None:
                    entries, aliases = self._build()
                    self._aliases = dict(aliases)
                    self._entries = {e.name: e for e in entries}
                    self._build = None
        return self._entries

    def __getitem__(self, name: str) -> E:
        return self._ready()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ready())

    def __len__(self) -> int:
        return len(self._ready())

    def find(self, name: str) -> E | None:
        """The entry for ``name`` (case and surrounding space ignored, aliases followed), or None."""
        key = name.strip().lower()
        entries = self._ready()
        return entries.get(self._aliases.get(key, key))

    def load(self, name: str) -> Any:
        """The imported target of ``name``; KeyError when there is no such entry."""
        entry = self.find(name)
        if entry is None:
            raise KeyError(name)
        return entry.load()

    def names(self) -> str:
        """ "a, b, c", for error messages."""
        return ", ".join(self._ready())


def merged(groups: Iterable[Iterable[E]]) -> list[E]:
    """The entries of several sources in one list, by :attr:`Entry.order` (stable: ties keep the
    order given); a later entry with an earlier one's name is dropped."""
    seen: dict[str, E] = {}
    for entry in sorted((e for g in groups for e in g), key=lambda e: e.order):
        seen.setdefault(entry.name, entry)
    return list(seen.values())
