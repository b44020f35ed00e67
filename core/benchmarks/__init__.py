"""The installed benchmarks: every :class:`core.benchmark.Benchmark` registered under the
entry-point group ``prefscope.benchmarks``.

The built-in ones (``core/benchmarks/<name>/__init__.py``, one ``BENCHMARK`` each) are registered
the same way as a third-party package, by a line in ``pyproject.toml``::

    [project.entry-points."prefscope.benchmarks"]
    cupid = "core.benchmarks.cupid:BENCHMARK"

Discovery runs once per process, the first time a registry is used (never on import, so
``prefscope --help`` and the TUI's start do not pay for it). Registries merge the entries of
:func:`installed` with their generic ones by :attr:`core.registry.Entry.order`.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from collections.abc import Iterable
from importlib import metadata

from core.benchmark import Benchmark, ReportSection

GROUP = "prefscope.benchmarks"
#: The built-in benchmarks, each a package ``core.benchmarks.<name>`` with its ``BENCHMARK``.
BUILTIN = ("realpref", "interpref", "cupid", "prefeval", "locomo", "longmemeval", "personamem", "recentering")

_installed: list[Benchmark] | None = None
_lock = threading.Lock()


def _entry_points() -> list[metadata.EntryPoint]:
    """The group's entry points, one per name (the first distribution on the path wins)."""
    found: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=GROUP):
        found.setdefault(ep.name, ep)
    return list(found.values())


def _load(ep_name: str, value: str) -> Benchmark | None:
    module, _, attr = value.partition(":")
    try:
        loaded = getattr(importlib.import_module(module.strip()), attr.strip() or "BENCHMARK")
    except Exception as exc:  # a broken third-party package must not take prefscope down
        warnings.warn(f"benchmark {ep_name!r} ({value}) could not be loaded: {exc}", stacklevel=3)
        return None
    if not isinstance(loaded, Benchmark):
        warnings.warn(f"benchmark {ep_name!r} ({value}) is not a core.benchmark.Benchmark; skipped", stacklevel=3)
        return None
    return loaded


def installed() -> list[Benchmark]:
    """Every registered benchmark, built-ins first (in :data:`BUILTIN` order), then the others by name.

    A built-in whose entry point is missing (prefscope run from a checkout whose metadata is
    stale) is still loaded from its package, so the registries never lose it."""
    global _installed
    with _lock:
        if _installed is None:
            points = {ep.name: ep.value for ep in _entry_points()}
            for name in BUILTIN:
                points.setdefault(name, f"core.benchmarks.{name}:BENCHMARK")
            order = {name: i for i, name in enumerate(BUILTIN)}
            names = sorted(points, key=lambda n: (order.get(n, len(order)), n))
            loaded = [_load(name, points[name]) for name in names]
            _installed = [b for b in loaded if b is not None]
        return _installed


def find(name: str) -> Benchmark | None:
    key = name.strip().lower()
    return next((b for b in installed() if b.name == key), None)


def entries(attr: str) -> list[Iterable]:
    """``[benchmark.<attr> for each installed benchmark]``, for the registries to merge."""
    return [getattr(b, attr) for b in installed()]


def aliases(attr: str) -> dict[str, str]:
    """The benchmarks' ``<attr>`` alias pairs as one dict (an earlier benchmark's alias wins)."""
    out: dict[str, str] = {}
    for b in installed():
        for alias, name in getattr(b, attr):
            out.setdefault(alias, name)
    return out


def report_sections() -> list[tuple[Benchmark, ReportSection]]:
    """Every benchmark's report sections, by :attr:`ReportSection.order` (ties: benchmark order)."""
    pairs = [(b, s) for b in installed() for s in b.report_sections]
    return sorted(pairs, key=lambda pair: pair[1].order)


__all__ = [
    "BUILTIN",
    "GROUP",
    "Benchmark",
    "aliases",
    "entries",
    "find",
    "installed",
    "report_sections",
]
