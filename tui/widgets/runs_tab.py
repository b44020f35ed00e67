"""The Runs tab: stored runs from SQLite, filtered; re-open, compare two, export the marked ones.

Keys (on the table): ``enter`` re-opens a run exactly as it was, ``space`` marks a run, ``c``
compares the two marked runs, ``e`` exports the marked runs (or the selected one) as CSV. Typing
in the filter box keeps runs whose user, query, method, context, models, status or label contain
every word typed.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Input

from tui.messages import RunChosen, RunsCompareRequested, RunsExportRequested

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
    BINDINGS = [
        Binding("space", "mark", "Mark", id="runs.mark", tooltip="Mark or unmark the run (for compare / export)"),
        Binding("c", "compare", "Compare", id="runs.compare", tooltip="Compare the two marked runs"),
        Binding("e", "export", "Export CSV", id="runs.export", tooltip="Export the marked runs (or this one) as CSV"),
    ]

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
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
        self._render()

    def filter(self, text: str) -> None:
        self._words = text.lower().split()
        self._render()

    def _render(self) -> None:
        self.clear()
        self.shown = [s for s in self.summaries if matches(s, self._words)]
        for s in self.shown:
            mark = Text("●", "bold cyan") if s.id in self.marked else ""
            self.add_row(
                mark,
                s.created_at[:16].replace("T", " "),
                s.user_id,
                s.query_id,
                f"E{s.expression_type}" if s.expression_type else "",
                s.context,
                s.method,
                ", ".join(s.models),
                Text(s.status, STATUS_STYLE.get(s.status, "")),
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
            self.post_message(RunChosen(run_id))

    def action_mark(self) -> None:
        run_id = self.current_id()
        if run_id is None:
            return
        if run_id in self.marked:
            self.marked.remove(run_id)
        else:
            self.marked.append(run_id)
        row = self.cursor_row
        self._render()
        self.move_cursor(row=row)

    def action_compare(self) -> None:
        self.post_message(RunsCompareRequested(list(self.marked[-2:])))

    def action_export(self) -> None:
        ids = list(self.marked) or ([self.current_id()] if self.current_id() else [])
        self.post_message(RunsExportRequested(ids))


class RunsView(Vertical):
    DEFAULT_CSS = """
    RunsView > Input { height: 1; border: none; padding: 0 1; background: $boost; }
    RunsView > RunsTable { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="filter runs: user, query, method, context, model, status… (space: mark, c: compare, e: export)",
            id="runs-filter",
        )
        yield RunsTable(id="runs-table")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.query_one(RunsTable).filter(event.value)

    def show(self, summaries: list) -> None:
        self.query_one(RunsTable).show(summaries)
