"""What every importer returns, and the interface a format module implements.

A format module exposes ``NAME``, ``detect(path) -> bool`` (cheap: looks at names and the first
bytes/records only) and ``load(path, max_bytes) -> ImportResult``. Loading is pure: nothing is
written anywhere; storage persists the result in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.model import FillerPool, UserBundle


@dataclass
class ImportResult:
    format: str
    bundles: list[UserBundle] = field(default_factory=list)
    fillers: list[FillerPool] = field(default_factory=list)
    #: Non-fatal notes for the operator (e.g. "12 QA items without evidence were kept without gold").
    notes: list[str] = field(default_factory=list)

    def extend(self, other: ImportResult) -> None:
        self.bundles += other.bundles
        self.fillers += other.fillers
        self.notes += other.notes
