"""The Runs tab: stored runs from SQLite, filtered; re-open, compare two, export the marked ones.

Keys (on the table): ``enter`` re-opens a run exactly as it was, ``space`` marks a run, ``c``
compares the two marked runs, ``e`` exports the marked runs (or the selected one) as CSV. Typing
in the filter box keeps runs whose user, query, method, context, models, status or label contain
every word typed. Compare and export are done here through the Workbench; re-opening is the
screen's (it resets the run bar, the panes and the tabs), so it is a message.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Input

from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text
from tui.widgets.worker_errors import flush_or_notify

STATUS_STYLE = {
    "ok": "green",
    "partial": "yellow",
    "error": "red",
    "cancelled": "magenta",
    "interrupted": "magenta",
    "running": "yellow",
}


def matches(summary, words: list[str]) -> bool:
    hay = " ".join(
        [
            summary.id,
            summary.user_id,
            summary.query_id,
            summary.method,
            summary.context,
            " ".join(summary.models),
            summary.status,
            summary.label or "",
            f"e{summary.expression_type}" if summary.expression_type else "",
        ]
    ).lower()
    return all(w in hay for w in words)


class RunsTable(DataTable):
    @dataclass
    class Chosen(Message):
        """A stored run was picked to be re-opened."""

        run_id: str

    BINDINGS = [
        Binding("space", "mark", "Mark", id="runs.mark", tooltip="Mark or unmark the run (for compare / export)"),
        Binding("c", "compare", "Compare", id="runs.compare", tooltip="Compare the two marked runs"),
        Binding("e", "export", "Export CSV", id="runs.export", tooltip="Export the marked runs (or this one) as CSV"),
    ]

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.workbench = workbench
        self.summaries: list = []
        self.shown: list = []
        self.marked: list[str] = []
        self._words: list[str] = []

    def on_mount(self) -> None:
        self.add_columns(" ", "created", "user", "query", "E", "context", "method", "models", "status", "run")

    def show(self, summaries: list) -> None:
        self.summaries = list(summaries)
        known = {s.id for s in self.summaries}
        self.marked = [m for m in self.marked if m in known]
        self._fill()

    def filter(self, text: str) -> None:
        self._words = text.lower().split()
        self._fill()

    def _fill(self) -> None:
        self.clear()
        self.shown = [s for s in self.summaries if matches(s, self._words)]
        for s in self.shown:
            mark = Text("●", "bold cyan") if s.id in self.marked else ""
            self.add_row(  # data cells as Text: a str cell would be parsed as markup
                mark,
                s.created_at[:16].replace("T", " "),
                safe_text(s.user_id),
                safe_text(s.query_id),
                f"E{s.expression_type}" if s.expression_type else "",
                safe_text(s.context),
                safe_text(s.method),
                safe_text(", ".join(s.models)),
                safe_text(s.status, STATUS_STYLE.get(s.status, "")),
                s.id,
                key=s.id,
            )

    def current_id(self) -> str | None:
        if not self.shown or not (0 <= self.cursor_row < len(self.shown)):
            return None
        return self.shown[self.cursor_row].id

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        run_id = self.current_id()
        if run_id:
            self.post_message(self.Chosen(run_id))

    def action_mark(self) -> None:
        run_id = self.current_id()
        if run_id is None:
            return
        if run_id in self.marked:
            self.marked.remove(run_id)
        else:
            self.marked.append(run_id)
        row = self.cursor_row
        self._fill()
        self.move_cursor(row=row)

    def action_compare(self) -> None:
        run_ids = self.marked[-2:]
        if len(run_ids) != 2:
            self.notify("Mark two runs with space, then press c to compare them.")
            return
        from tui.screens.compare import compare_markdown
        from tui.screens.text_view import TextView

        flush_or_notify(self, self.workbench)
        a, b = (self.workbench.load_run(r) for r in run_ids)
        self.app.push_screen(TextView(f"compare {a.id} ↔ {b.id}", compare_markdown(a, b)))

    def action_export(self) -> None:
        """Export the marked runs (or the selected one) as CSV, to a path the operator confirms."""
        current = self.current_id()
        ids = list(self.marked) or ([current] if current else [])
        if not ids:
            self.notify("No runs to export yet.")
            return
        from core.settings import data_dir
        from tui.screens.export import ExportScreen

        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        default = data_dir() / "exports" / f"prefscope-runs-{stamp}.csv"

        def chosen(path) -> None:
            if path is None:
                return
            try:
                n = self.workbench.export_runs(ids, path)
            except (OSError, ValueError) as exc:
                self.notify(terminal_safe(f"could not write {path}: {exc}"), severity="error", timeout=8, markup=False)
                return
            self.notify(
                terminal_safe(f"wrote {n} row(s) from {len(ids)} run(s) to {path}"),
                title="Exported",
                timeout=8,
                markup=False,
            )

        self.app.push_screen(ExportScreen(len(ids), default), chosen)


class RunsView(Vertical):
    DEFAULT_CSS = """
    RunsView > Input { height: 1; border: none; padding: 0 1; background: $boost; }
    RunsView > RunsTable { height: 1fr; }
    """

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id)
        self.workbench = workbench

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="filter runs: user, query, method, context, model, status… (space: mark, c: compare, e: export)",
            id="runs-filter",
        )
        yield RunsTable(self.workbench, id="runs-table")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.query_one(RunsTable).filter(event.value)

    def show(self, summaries: list) -> None:
        self.query_one(RunsTable).show(summaries)

    def load_stored(self, run_id: str):
        """The stored run (``storage.runs.StoredRun``) to re-open, or None (the operator is told
        why) when it is unknown or its user or query is no longer in the database."""
        from storage.runs import UnknownRun

        flush_or_notify(self, self.workbench)
        try:
            run = self.workbench.load_run(run_id)
        except UnknownRun as exc:
            self.notify(terminal_safe(str(exc)), severity="error", markup=False)
            return None
        try:
            self.workbench.user(run.spec.user_id).query(run.spec.query_id)
        except (KeyError, LookupError):
            self.notify(
                terminal_safe(
                    f"run {run_id}: user {run.spec.user_id!r} or query {run.spec.query_id!r} is no longer "
                    "in the database (re-import the user to re-open it)"
                ),
                markup=False,
                severity="error",
                timeout=8,
            )
            return None
        return run

    def refresh_runs(self) -> None:
        """Every stored run, newest first (the recorder's pending writes included)."""
        flush_or_notify(self, self.workbench)
        self.show(self.workbench.list_runs())
