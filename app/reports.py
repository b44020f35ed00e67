"""Reports and exports of stored runs (``prefscope report`` / ``export``, the TUI's heatmap): which
tables a request asks for, built over one database connection (:mod:`storage.report`,
:mod:`storage.export`), and the records the views display (:class:`RunFilter`, :class:`ReportError`).

The benchmarks' own tables come from the registry (:func:`core.benchmark.report_sections`): a
section is shown when the runs have its judgments, or when asked for by its flag (``--cupid``) or
its name (``--section``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from core.analysis.heatmap import Heatmap
from core.analysis.report import ReportTable
from core.benchmark import ReportSection, report_section, report_sections
from storage import export as stored_export
from storage import report as stored_report
from storage.export import RunFilter
from storage.report import ReportError

__all__ = [
    "ReportError",
    "ReportRequest",
    "RunFilter",
    "export_runs",
    "heatmap_tables",
    "report_tables",
    "retest_table",
    "section_flags",
    "with_patterns_expanded",
]


@dataclass(frozen=True)
class ReportRequest:
    """What ``prefscope report`` asks for (its tables by ``factors``, never the figures)."""

    f: RunFilter
    factors: list[str]
    metric: str | None = None
    #: Only these judge sources (llm, heuristic, parser, human); empty: all.
    sources: tuple[str, ...] = ()
    #: The per-model summary instead of the tables by factors.
    summary: bool = False
    #: Section flags asked for (``--cupid``) -> the factors to group by (None: the section's own).
    flags: Mapping[str, list[str] | None] = field(default_factory=dict)
    #: Sections asked for by name (``--section``), printed even when empty.
    sections: tuple[str, ...] = ()
    repeats: bool = False
    judge_retest: bool = False


def section_flags() -> dict[str, list[ReportSection]]:
    """Each section flag (``cupid``, ``interpref``, a third-party benchmark's) with its sections."""
    out: dict[str, list[ReportSection]] = {}
    for _, section in report_sections():
        if section.flag is not None:
            out.setdefault(section.flag, []).append(section)
    return out


def report_tables(db: Any, req: ReportRequest) -> list[ReportTable]:
    """The tables of one report, in print order. Raises :class:`ReportError` (unknown metric,
    factor or section)."""
    if req.summary:
        return [stored_report.summary_table(db, req.f, [req.metric] if req.metric else None)]
    tables = []
    for m in [req.metric] if req.metric else stored_report.default_metrics(db, req.f):
        tables.append(stored_report.score_table(db, m, req.factors, req.f, sources=req.sources or None))
        agreement = stored_report.agreement_table(db, m, req.factors, req.f)
        if agreement.rows:  # only where human scores exist
            tables.append(agreement)
        if req.repeats or stored_report.has_repeats(db, req.f):
            tables.append(stored_report.repeats_table(db, m, req.factors, req.f))
        if req.judge_retest:
            tables.append(stored_report.retest_table(db, m, req.f))
    return tables + _section_tables(db, req)


def _section_tables(db: Any, req: ReportRequest) -> list[ReportTable]:
    """The registered sections that apply (shown when they have rows) and those asked for by flag
    or name (shown always)."""
    try:
        named = [report_section(name) for name in req.sections]
    except KeyError as exc:
        raise ReportError(exc.args[0]) from None
    chosen = [(s, False) for s in stored_report.applicable_sections(db, req.f, req.flags) if s not in named]
    tables = []
    for section, asked in sorted([*chosen, *((s, True) for s in named)], key=lambda pair: pair[0].order):
        by = req.flags.get(section.flag or "") if section.flag else None
        if by is None:
            by = req.factors if section.factors is None else list(section.factors)
        table = stored_report.section_table(db, section, by, req.f)
        if table.rows or asked or section.flag is not None:
            tables.append(table)
    return tables


def heatmap_tables(
    db: Any, f: RunFilter, metric: str | None, factors: list[str], *, with_tables: bool
) -> tuple[list[str], list[Heatmap], list[ReportTable]]:
    """``report --heatmap``: the metrics drawn, their panels over the first two factors, and (when
    ``with_tables``) their score tables for JSON or CSV."""
    metrics = [metric] if metric else stored_report.default_metrics(db, f)
    panels = [p for m in metrics for p in stored_report.heatmap_panels(db, m, factors, f)]
    tables = [stored_report.score_table(db, m, factors, f) for m in metrics] if with_tables else []
    return metrics, panels, tables


def with_patterns_expanded(db: Any, f: RunFilter) -> RunFilter:
    """``f`` with its ``*`` batch and model patterns replaced by the stored names they match
    (:func:`storage.report.with_patterns_expanded`; none matching: :class:`ReportError`)."""
    return stored_report.with_patterns_expanded(db, f)


def export_runs(db: Any, out: IO[str], f: RunFilter, fmt: str, layout: str) -> int:
    """Write the selected runs as CSV or JSON Lines (:func:`storage.export.export`); rows written."""
    return stored_export.export(db, out, f=f, fmt=fmt, layout=layout)


def export_eee(db: Any, out: str, f: RunFilter, *, protect: list, force: bool = False) -> list:
    """Write the selected judged answers as Every Eval Ever 0.3.0 records
    (:func:`storage.export_eee.export_eee`): one aggregate + samples file per model, under the folder
    ``out`` (or ``out`` itself, a ``.json``, for one model); ValueError when nothing judged is selected."""
    from storage.export_eee import export_eee as write

    return write(db, out, f, protect=protect, force=force)


def export_inspect(db: Any, out: str, f: RunFilter, *, protect: list, force: bool = False) -> list[tuple[str, int]]:
    """Write the selected runs as Inspect logs (:mod:`storage.export_inspect`), ``.eval`` or
    ``.json`` by ``out``'s suffix: one log per batch label × model, ``out`` itself when the selection
    makes one log, else ``<stem>_<label>_<model><suffix>`` beside it; each file whole or not at all.
    Returns (path, samples) per file written."""
    from pathlib import Path

    from storage.export_inspect import inspect_logs, safe_name, write_eval, write_json
    from storage.output_files import replace_atomically

    target = Path(out)
    suffix = target.suffix.lower()
    if suffix not in (".eval", ".json"):
        raise ValueError(f"an Inspect log is written as .eval or .json, not {target.name!r}")
    logs = inspect_logs(db, f)
    written = []
    for log in logs:
        path = (
            target
            if len(logs) == 1
            else target.with_name(f"{target.stem}_{safe_name(log.label)}_{safe_name(log.model)}{suffix}")
        )
        with replace_atomically(path, binary=suffix == ".eval", protect=protect, force=force) as fh:
            (write_eval if suffix == ".eval" else write_json)(log, fh)
        written.append((str(path), len(log.samples)))
    return written


def retest_table(db: Any, metric: str, f: RunFilter) -> ReportTable:
    """Each judge's agreement with itself on the answers it judged more than once."""
    return stored_report.retest_table(db, metric, f)
