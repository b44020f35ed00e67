"""The diagnosis funnel of the runs the Runs tab lists (``d`` there): where answers lose the
preference, per model × expression type × context × method (× the preference's origin).

Top: one row per group (:func:`core.analysis.diagnosis_funnel.funnel_table`): n, the count of each
label in funnel order, the applied rate and the "known, not applied" rate with their Wilson 95%
intervals. ``enter`` on a group lists its answers below (run, model, label, the evidence that
decided it); ``enter`` on an answer closes the screen and re-opens its run on the main screen.

The answers are diagnosed from stored rows on the main thread (the Workbench's connection), a few
runs at a time between screen refreshes, so hundreds of runs do not freeze the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from core.analysis.diagnosis import (
    APPLIED,
    KNOWN_NOT_APPLIED,
    LABELS,
    MISAPPLIED,
    NOT_IN_CONTEXT,
    NOT_KNOWN,
    NOT_RETRIEVED,
    UNDETERMINED,
)
from tui.safe_text import safe_text

CHUNK = 10  # runs diagnosed between two refreshes
SHORT = {"expression_type": "E"}
#: Count columns headed short (in the label's colour) so the rates fit 120 columns.
LABEL_HEAD = {
    NOT_IN_CONTEXT: "not ctx",
    NOT_RETRIEVED: "not retr",
    NOT_KNOWN: "not known",
    KNOWN_NOT_APPLIED: "known¬appl",
    MISAPPLIED: "misappl",
    APPLIED: "applied",
    UNDETERMINED: "undet",
}


def _rate(value: float | None, lo: float | None, hi: float | None) -> Text:
    if value is None:
        return Text("—", "dim")
    text = Text(f"{value:.0%}")
    if lo is not None and hi is not None:
        text.append(f" [{lo * 100:.0f}–{hi * 100:.0f}]", "dim")
    return text


def group_key(case, extra: dict, factors: Sequence[str]) -> tuple:
    from core.analysis.diagnosis_funnel import factor_value

    return tuple(factor_value(case, extra, f) for f in factors)


class FunnelScreen(Screen[str | None]):
    """Dismissed with the run id to re-open, or None."""

    DEFAULT_CSS = """
    FunnelScreen > Vertical { height: 1fr; }
    FunnelScreen #funnel-title { height: auto; padding: 0 1; }
    FunnelScreen #funnel-table { height: 1fr; min-height: 5; }
    FunnelScreen #funnel-cases-title { height: 1; padding: 0 1; background: $boost; }
    FunnelScreen #funnel-cases { height: 1fr; min-height: 4; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="funnel.close", tooltip="Back to the Runs tab"),
    ]

    def __init__(
        self,
        workbench,
        run_ids: Sequence[str],
        filter_text: str = "",
        *,
        response_ids: Collection[str] | None = None,
    ):
        """``response_ids``: only these answers of the runs (those the filtered grid lists)."""
        super().__init__()
        self.workbench = workbench
        self.run_ids = list(dict.fromkeys(run_ids))
        self.response_ids = set(response_ids) if response_ids is not None else None
        self.filter_text = filter_text
        self.items: list[tuple[Any, Any, dict]] = []  # (case, diagnosis, factors)
        self.table = None  # core.analysis.report.ReportTable, once diagnosed
        self.factors: list[str] = []  # the group columns of the table
        self.common: dict[str, Any] = {}  # group columns with one value in every row (named in the title)
        self.cases: list[tuple[Any, Any, dict]] = []  # the chosen group's answers, in row order

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title(), id="funnel-title")
            yield DataTable(id="funnel-table", cursor_type="row", zebra_stripes=True)
            yield Static("enter on a group lists its answers here", id="funnel-cases-title")
            yield DataTable(id="funnel-cases", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def _title(self, done: int | None = None) -> Text:
        text = Text("Diagnosis funnel", "bold")
        answers = f", {len(self.items)} answers" if self.table is not None else ""
        text.append(f" · {len(self.run_ids)} run(s){answers} listed in the Runs tab")
        if self.filter_text.strip():
            text.append_text(safe_text(f" (filter: {self.filter_text.strip()})", "dim"))
        if done is not None:
            text.append(f" · diagnosing … {done} of {len(self.run_ids)}", "bold cyan")
        if self.common:
            shown = " · ".join(f"{SHORT.get(k, k)} {v}" for k, v in self.common.items())
            text.append_text(safe_text(f"\nevery answer: {shown}"))
        if self.table is not None and self.table.notes:
            text.append_text(safe_text("\n" + " · ".join(self.table.notes), "dim"))
        return text

    def on_mount(self) -> None:
        self.query_one("#funnel-table", DataTable).focus()
        self.run_worker(self._diagnose(), group="funnel", exclusive=True, exit_on_error=False, description="the funnel")

    async def _diagnose(self) -> None:
        from core.analysis.diagnosis_funnel import funnel_table
        from tui.widgets.worker_errors import flush_or_notify

        flush_or_notify(self, self.workbench)
        title = self.query_one("#funnel-title", Static)
        items = []
        for start in range(0, len(self.run_ids), CHUNK):
            title.update(self._title(start))
            await asyncio.sleep(0)  # let the screen paint and keys through between chunks
            found = self.workbench.diagnoses(self.run_ids[start : start + CHUNK])
            items += [i for i in found if self.response_ids is None or i[0].response_id in self.response_ids]
        self.items = items
        self.table = table = funnel_table(items)
        self.factors = table.columns[: table.columns.index("n")]
        self.common = {
            f: table.rows[0][i]
            for i, f in enumerate(self.factors)
            if len(table.rows) > 1 and f != "model" and len({r[i] for r in table.rows}) == 1
        }
        title.update(self._title())
        self._fill()

    def _fill(self) -> None:
        from tui.diagnosis_style import COLOURS

        table = self.table
        grid = self.query_one("#funnel-table", DataTable)
        grid.clear(columns=True)
        shown = [f for f in self.factors if f not in self.common]
        for name in shown:
            grid.add_column(SHORT.get(name, name), key=name)
        grid.add_column(Text("n"), key="n")
        for label in LABELS:
            grid.add_column(Text(LABEL_HEAD[label], f"bold {COLOURS[label]}"), key=label)
        grid.add_column(Text("applied [95% CI]"), key="applied_rate")
        grid.add_column(Text("known n"), key="known_n")
        grid.add_column(Text("known¬appl [95% CI]"), key="known_not_applied_rate")
        if not table.rows:
            self.query_one("#funnel-cases-title", Static).update(Text("no final answers in these runs", "yellow"))
            return
        for i, row in enumerate(table.rows):
            value = dict(zip(table.columns, row))
            cells: list = [safe_text("" if value[f] is None else value[f]) for f in shown]
            cells.append(Text(str(value["n"])))
            for label in LABELS:
                count = value[label]
                cells.append(Text(str(count), COLOURS[label] if count else "dim"))
            cells.append(_rate(value["applied_rate"], value["ci_low"], value["ci_high"]))
            cells.append(Text(str(value["known_n"])))
            cells.append(_rate(value["known_not_applied_rate"], value["kna_ci_low"], value["kna_ci_high"]))
            grid.add_row(*cells, key=str(i))

    # -- a group's answers ---------------------------------------------------------------
    def show_group(self, row_index: int) -> None:
        from tui.diagnosis_style import label_text

        if self.table is None or not (0 <= row_index < len(self.table.rows)):
            return
        key = tuple(self.table.rows[row_index][: len(self.factors)])
        self.cases = [item for item in self.items if group_key(item[0], item[2], self.factors) == key]
        shown = " · ".join(str(v) for v in key if v is not None)
        title = safe_text(f"{len(self.cases)} answer(s) in {shown}", "bold")
        title.append("  ·  enter re-opens the answer's run", "dim")
        self.query_one("#funnel-cases-title", Static).update(title)
        cases = self.query_one("#funnel-cases", DataTable)
        cases.clear(columns=True)
        cases.add_columns("run", "model", "query", "label", "why")
        for case, diagnosis, _ in self.cases:
            cases.add_row(
                safe_text(case.run_id),
                safe_text(case.model),
                safe_text(case.query_id),
                label_text(diagnosis),
                safe_text(diagnosis.reason()),
            )
        cases.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "funnel-table":
            self.show_group(event.cursor_row)
        elif 0 <= event.cursor_row < len(self.cases):
            self.dismiss(self.cases[event.cursor_row][0].run_id)

    def on_worker_state_changed(self, event) -> None:
        from tui.widgets.worker_errors import notify_if_failed

        notify_if_failed(self, event)

    def action_close(self) -> None:
        if self.focused is not None and self.focused.id == "funnel-cases":
            self.query_one("#funnel-table", DataTable).focus()  # back to the groups first
            return
        self.dismiss(None)
