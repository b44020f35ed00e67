"""The workbench: the one composition root. The TUI, every CLI command, batch and the benches ask
core and storage through it, so provider lookup, prepare, judges, the recorder and the caches
exist once.

It owns the main-thread database connection (reads), the storage recorder (the single writer
for runs), the providers (one per provider name) and the loaded users (:mod:`app.base`), and is
assembled from one service per use case: :mod:`app.data` (users, filler pools, search),
:mod:`app.runs` (plans, estimates, stored runs, export, probes), :mod:`app.analyses` (diagnosis,
heatmaps, operator scores, attributes, relevance) and :mod:`app.annotation` (queues, labels,
agreement) and :mod:`app.judge_audit` (a judge's biases). Views call it; it never touches widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.analyses import Analyses
from app.annotation import Annotation
from app.data import SAMPLE_DATA, Data
from app.judge_audit import JudgeAudit
from app.runs import Runs
from core.providers.base import ModelSpec, Provider
from core.settings import Settings

__all__ = ["SAMPLE_DATA", "Workbench"]


class Workbench(Data, Runs, Analyses, Annotation, JudgeAudit):
    @classmethod
    def open(
        cls,
        settings: Settings,
        db_path: Path | str | None = None,
        *,
        sample_data: bool = True,
        provider_for: Callable[[ModelSpec], Provider] | None = None,
        readonly: bool = False,
        check_later: bool = False,
    ) -> Workbench:
        """A workbench ready for work: the sample users imported into an empty database
        (``sample_data``) and runs a killed process left 'running' marked interrupted (both
        skipped when ``readonly``). ``check_later`` (the TUI): a large file's pages are checked on
        a thread; the runs are marked by :meth:`pages_checked` once it passed."""
        wb = cls(settings, db_path, provider_for=provider_for, readonly=readonly, check_later=check_later)
        if wb.page_check is None:  # a new or small file: checked, writable now
            imported = wb.ensure_sample_data() if sample_data and not readonly else []
            if imported:
                wb.startup_notes.append(f"first run: imported the sample data ({', '.join(imported)})")
            if not readonly:
                wb._mark_interrupted()
        return wb

    def pages_checked(self) -> bool:
        if not super().pages_checked():
            return False
        self._mark_interrupted()
        return True

    def _mark_interrupted(self) -> None:
        from storage.runs import mark_interrupted

        interrupted = mark_interrupted(self.db)
        if interrupted:
            self.startup_notes.append(
                f"{len(interrupted)} run(s) cut off last time were marked interrupted; partial text kept"
            )
