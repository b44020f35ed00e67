"""The record types and errors the views display or catch, re-exported so ``tui`` never imports
``storage``. Light on purpose (the TUI's first paint imports it); the annotation records are
:mod:`app.labels`, the report ones :mod:`app.reports`."""

from storage.results_grid import GridData, GridRow, ScoreColumn
from storage.runs import UnknownRun
from storage.writer import WriterError

__all__ = ["GridData", "GridRow", "ScoreColumn", "UnknownRun", "WriterError"]
