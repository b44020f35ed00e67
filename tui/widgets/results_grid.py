"""The results grid (the Runs tab's table): one row per stored answer, one column per score.

Keys (on the grid; the cursor is a cell): ``enter`` re-opens the answer's run in the main view,
or on a score cell shows the judge's rationale beside the evidence it rests on; ``o`` re-opens the
run from any cell; ``s`` sorts by the cursor's column (again: the other way; a header click does
the same); ``g`` cycles the grouping (model, batch, batch·model, query, method, context, none);
``space`` marks an answer, ``c`` compares the 2–4 marked answers side by side with a word diff;
``h`` shows the histogram of the cursor's score column over the rows the filter keeps; ``f`` goes to the
filter box; ``e`` exports the marked answers (or the cursor's run) as CSV. What the filter, sort and groups do is in
:mod:`tui.widgets.results_grid_rows`; the rows come from ONE query (:mod:`storage.results_grid`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from app.records import GridData, GridRow
from core.text.short_ids import short_forms
from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text
from tui.widgets.results_grid_rows import (
    GROUPINGS,
    Column,
    GroupHeader,
    columns_for,
    grouped,
    row_filter,
    score_text,
    sorted_rows,
)
from tui.widgets.worker_errors import flush_or_notify

STATUS_STYLE = {"ok": "green", "error": "red", "incomplete": "yellow", "cancelled": "magenta", "interrupted": "magenta"}
MARK_KEY = "mark"
MAX_COMPARE = 4


#: The widest a text column's cells get: longer values (``imported:<long path>``,
#: ``prefeval-travel_restaurant-000``) are cut from the middle, distinct values staying distinct
#: (:func:`core.text.short_ids.short_forms`), so the score columns stay on screen. Filters and
#: sorts use the whole value.
SHORT_CHARS = {"model": 20, "user": 24, "query": 24, "batch": 28}
#: The grid lists at most this many rows; a last row counts the others (filter or sort to reach
#: them). A DataTable measures every cell of every row it holds: 100,000 answers took a minute.
SHOWN_ROWS = 1000


@dataclass(frozen=True)
class MoreRows:
    """The last row when the filtered answers do not all fit: how many are not listed."""

    count: int


class ResultsGrid(DataTable):
    @dataclass
    class Chosen(Message):
        """A stored run was picked to be re-opened in the main view."""

        run_id: str

    @dataclass
    class FilterRequested(Message):
        """The operator wants to type in the filter box above the grid."""

    # The footer shows three keys (80 columns hold no more beside the screen's); the others are in
    # the filter box's hint and the F1 help.
    BINDINGS = [
        Binding(
            "o", "open_run", "Open run", id="grid.open", tooltip="Re-open this answer's run (enter too)", show=False
        ),
        Binding("space", "mark", "Mark", id="grid.mark", tooltip="Mark or unmark the answer (compare / export)"),
        Binding("c", "compare", "Compare", id="grid.compare", tooltip="Compare the 2–4 marked answers (word diff)"),
        Binding(
            "s", "sort", "Sort", id="grid.sort", tooltip="Sort by the cursor's column (again: reverse)", show=False
        ),
        Binding("g", "group", "Group", id="grid.group", tooltip="Group by model, batch, query … (cycles)"),
        Binding(
            "h",
            "histogram",
            "Histogram",
            id="grid.histogram",
            tooltip="Histogram of the cursor's score column",
            show=False,
        ),
        Binding(
            "f",
            "filter",
            "Filter",
            id="grid.filter",
            tooltip="Type a filter (model:oracle alignment:>=4 …)",
            show=False,
        ),
        Binding(
            "e", "export", "Export CSV", id="grid.export", tooltip="Export the marked answers' runs as CSV", show=False
        ),
    ]

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id, cursor_type="cell", zebra_stripes=True)
        self.workbench = workbench
        self.data = GridData([], [])
        self.columns_shown: list[Column] = []
        self.shown: list[GridRow | GroupHeader | MoreRows] = []  # in row order
        #: Every answer the filter keeps, sorted (the grid lists the first :data:`SHOWN_ROWS` rows).
        self.matching: list[GridRow] = []
        self.marked: list[str] = []  # response ids, in marking order
        self.filter_text = ""
        self.sort_column: str | None = None
        self.descending = False
        self.grouping = 0  # index into GROUPINGS
        self._cells_of: dict[str, list] = {}  # response id -> its cells (the mark apart), built once per show
        self._texts: dict[tuple, Text] = {}
        self._short: dict[str, dict[str, str]] = {}  # column key -> value -> the form shown

    # -- filling -------------------------------------------------------------------------
    def show(self, data: GridData, short_run_ids: dict[str, str]) -> None:
        """``short_run_ids``: full run id → the unique short form every command accepts."""
        self.data = data
        self.columns_shown = columns_for(data.columns, short_run_ids)
        known = {r.response_id for r in data.rows}
        self.marked = [m for m in self.marked if m in known]
        self._cells_of, self._texts = {}, {}
        self._short = {
            c.key: short_forms({str(c.value(r)) for r in data.rows}, SHORT_CHARS[c.key])
            for c in self.columns_shown
            if c.key in SHORT_CHARS
        }
        self._fill()

    def filter(self, text: str) -> None:
        self.filter_text = text
        self._fill()

    def _column(self, key: str | None) -> Column | None:
        return next((c for c in self.columns_shown if c.key == key), None)

    def _fill(self) -> None:
        keep = self.current_row()
        keep_column = self.cursor_column
        factors = GROUPINGS[self.grouping]
        sort_by = self._column(self.sort_column)
        keep_row = row_filter(self.filter_text, self.columns_shown)
        self.matching = sorted_rows([r for r in self.data.rows if keep_row(r)], sort_by, self.descending)
        items: list[GridRow | GroupHeader | MoreRows] = [*grouped(self.matching, factors, self.columns_shown, sort_by)]
        if len(items) > SHOWN_ROWS:
            listed = items[: SHOWN_ROWS - 1]
            items = [*listed, MoreRows(len(self.matching) - sum(isinstance(i, GridRow) for i in listed))]
        self.shown = items
        self.clear(columns=True)
        self.add_column(" ", key=MARK_KEY)
        for c in self.columns_shown:
            arrow = (" ▼" if self.descending else " ▲") if c.key == self.sort_column else ""
            self.add_column(safe_text(c.label + arrow, "bold" if arrow else ""), key=c.key)
        marked = set(self.marked)
        for i, item in enumerate(self.shown):
            if isinstance(item, GroupHeader):
                self.add_row(*self._header_cells(item), key=f"group-{i}")
            elif isinstance(item, MoreRows):
                self.add_row(*self._more_cells(item), key="more")
            else:
                self.add_row(*self._cells(item, item.response_id in marked), key=item.response_id)
        if keep is not None and keep.response_id in self.rows:
            self.move_cursor(row=self.get_row_index(keep.response_id), column=keep_column, animate=False)
        else:
            self.move_cursor(column=keep_column, animate=False)

    def _cells(self, row: GridRow, marked: bool) -> list:
        mark = Text("●", "bold cyan") if marked else ""
        cells = self._cells_of.get(row.response_id)
        if cells is None:
            cells = self._cells_of[row.response_id] = self._data_cells(row)
        return [mark, *cells]

    def _data_cells(self, row: GridRow) -> list:
        return [self._cell(c, c.value(row)) for c in self.columns_shown]

    def _cell(self, column: Column, value) -> Text:
        """Data cells as Text (a str cell would be parsed as markup), one object per distinct
        value: thousands of rows repeat a few models, users and scores, and nothing mutates them."""
        kind = "score" if column.score is not None else column.key if column.key in ("status", *SHORT_CHARS) else ""
        key = (kind, value)
        cell = self._texts.get(key)
        if cell is None:
            if kind == "score":
                cell = Text(score_text(value), justify="right")
            elif kind in SHORT_CHARS:
                cell = safe_text(self._short[kind].get(str(value), str(value)))
            else:
                cell = safe_text(value, STATUS_STYLE.get(value, "") if kind == "status" else "")
            self._texts[key] = cell
        return cell

    def _more_cells(self, more: MoreRows) -> list:
        """Short words spread over the first columns: one long cell would widen its column for every row."""
        words = ["…", f"{more.count:,} more", "f: filter", "s: sort"]
        cells = [Text(w, "italic dim") for w in words[: len(self.columns_shown)]]
        return ["", *cells, *([""] * (len(self.columns_shown) - len(cells)))]

    def _header_cells(self, header: GroupHeader) -> list:
        cells: list = [Text("▾", "bold")]
        for c in self.columns_shown:
            if c.key == "run":
                cells.append(Text(f"{header.count} answer{'' if header.count == 1 else 's'}", "bold"))
            elif c.key in header.values:
                value = header.values[c.key]
                cells.append(safe_text(self._short.get(c.key, {}).get(value, value) or "(none)", "bold cyan"))
            elif c.score is not None:
                mean = header.means.get(c.score)
                cells.append(Text("" if mean is None else f"{mean:.2f}", "bold", justify="right"))
            else:
                cells.append("")
        return cells

    # -- where the cursor is -------------------------------------------------------------
    def current_row(self) -> GridRow | None:
        """The answer under the cursor (None on a group header or an empty grid)."""
        if not (0 <= self.cursor_row < len(self.shown)):
            return None
        item = self.shown[self.cursor_row]
        return item if isinstance(item, GridRow) else None

    def current_id(self) -> str | None:
        """The run of the answer under the cursor."""
        row = self.current_row()
        return row.run_id if row else None

    def current_column(self) -> Column | None:
        index = self.cursor_column - 1  # the mark column comes first
        return self.columns_shown[index] if 0 <= index < len(self.columns_shown) else None

    # -- keys ----------------------------------------------------------------------------
    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        column = self.current_column()
        if column is not None and column.score is not None and self.current_row() is not None:
            self.show_rationale(self.current_row(), column)  # type: ignore[arg-type]
        else:
            self.action_open_run()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

    def action_filter(self) -> None:
        self.post_message(self.FilterRequested())

    def action_open_run(self) -> None:
        run_id = self.current_id()
        if run_id:
            self.post_message(self.Chosen(run_id))

    def sort_by(self, key: str) -> None:
        if key == MARK_KEY:
            return
        self.descending = not self.descending if key == self.sort_column else False
        self.sort_column = key
        self._fill()

    def action_sort(self) -> None:
        column = self.current_column()
        if column is not None:
            self.sort_by(column.key)

    def action_group(self) -> None:
        self.grouping = (self.grouping + 1) % len(GROUPINGS)
        factors = GROUPINGS[self.grouping]
        self.notify(f"grouped by {' · '.join(factors)}" if factors else "not grouped", timeout=2)
        self._fill()

    def action_mark(self) -> None:
        row = self.current_row()
        if row is None:
            return
        if row.response_id in self.marked:
            self.marked.remove(row.response_id)
        elif len(self.marked) >= MAX_COMPARE:
            self.notify(f"At most {MAX_COMPARE} answers can be compared; unmark one first.", severity="warning")
            return
        else:
            self.marked.append(row.response_id)
        self.update_cell(row.response_id, MARK_KEY, Text("●", "bold cyan") if row.response_id in self.marked else "")

    def marked_rows(self) -> list[GridRow]:
        by_id = {r.response_id: r for r in self.data.rows}
        return [by_id[m] for m in self.marked if m in by_id]

    def action_compare(self) -> None:
        rows = self.marked_rows()
        if not 2 <= len(rows) <= MAX_COMPARE:
            self.notify(f"Mark 2–{MAX_COMPARE} answers with space, then press c to compare them.")
            return
        from tui.screens.compare import CompareScreen, compared_answers

        flush_or_notify(self, self.workbench)
        self.app.push_screen(CompareScreen(compared_answers(self.workbench, rows, self.columns_shown)))

    def show_rationale(self, row: GridRow, column: Column) -> None:
        from tui.screens.score_evidence import ScoreEvidenceScreen

        flush_or_notify(self, self.workbench)

        def closed(open_run: bool | None) -> None:
            if open_run:
                self.post_message(self.Chosen(row.run_id))

        self.app.push_screen(ScoreEvidenceScreen(self.workbench, row, column), closed)

    def action_histogram(self) -> None:
        column = self.current_column()
        if column is None or column.score is None:
            self.notify("Move the cursor to a score column (alignment, accuracy …) for its histogram.")
            return
        from tui.screens.histogram import HistogramScreen

        values = [column.value(row) for row in self.matching]  # every filtered answer, listed or not
        self.app.push_screen(HistogramScreen(column.label, values, self.filter_text))  # type: ignore[arg-type]

    def action_export(self) -> None:
        """Export the marked answers (or, with none marked, the cursor's run) as CSV, to a path the
        operator confirms."""
        current = self.current_id()
        marked = self.marked_rows()
        answers = [r.response_id for r in marked]
        ids = list(dict.fromkeys(r.run_id for r in marked)) or ([current] if current else [])
        if not ids:
            self.notify("No runs to export yet.")
            return
        from app.outputs import outputs_dir, stamped
        from tui.screens.export import ExportScreen

        # suggested in the outputs folder (`prefscope paths`); the dialog creates it when written
        default = outputs_dir(self.workbench.settings) / stamped("prefscope-runs", ".csv")

        def chosen(path) -> None:
            if path is None:
                return
            try:
                n = self.workbench.export_runs(ids, path, response_ids=answers)
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
