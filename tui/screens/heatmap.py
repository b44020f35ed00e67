"""A metric over two factors as a coloured grid, for the runs the Runs tab lists (``m`` there).

The cells are :func:`storage.report.heatmap_panels`' (the numbers ``prefscope report --heatmap``
prints), drawn by :func:`tui.heatmap_render.heatmap_table`: each cell its mean and n on a red →
green colour, one panel per judge. Defaults: the first of the runs' default metrics, evidence depth
down the rows and context across when the runs moved the evidence, else context × model.

Keys: ``m`` next metric, ``r`` / ``c`` next row / column factor, ``x`` swaps them, ``esc`` closes.
The factors cycled are those with more than one value in the runs (the others are named once
above the grid, as every answer shares them). Reads happen on a worker thread (the workbench's
thread-safe methods), so a large selection does not freeze the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.safe_text import safe_text

#: What rows and columns can be, in cycling order.
FACTORS = ["evidence_depth", "context", "turns", "model", "method", "expression_type", "repeat", "temperature"]
SHORT = {"evidence_depth": "depth", "expression_type": "E"}


def value_text(v) -> str:
    if v is None:
        return "none"
    return f"{v:g}" if isinstance(v, float) else str(v)


def default_axes(values: dict[str, list]) -> tuple[str, str]:
    """(rows, columns): evidence depth × context when the runs moved the evidence, else context × model."""
    if any(v is not None for v in values.get("evidence_depth", [])):
        return "evidence_depth", "context"
    return "context", "model"


def cycled_factors(values: dict[str, list], axes: Sequence[str]) -> list[str]:
    """The factors worth a row or column: more than one value in the runs, plus the default axes."""
    return [f for f in FACTORS if len(values.get(f, [])) > 1 or f in axes]


def next_factor(factors: list[str], current: str, other: str) -> str:
    """The factor after ``current`` in ``factors`` that is not ``other`` (``current`` when none is)."""
    i = factors.index(current) if current in factors else -1
    for step in range(1, len(factors) + 1):
        candidate = factors[(i + step) % len(factors)]
        if candidate != other:
            return candidate
    return current


class HeatmapScreen(Screen[None]):
    DEFAULT_CSS = """
    HeatmapScreen > Vertical { height: 1fr; }
    HeatmapScreen #heatmap-title { height: auto; padding: 0 1; }
    HeatmapScreen #heatmap-panels { height: 1fr; overflow-x: auto; }
    HeatmapScreen .heatmap-panel { width: auto; padding: 1 1 0 1; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="heatmap.close", tooltip="Back to the Runs tab"),
        Binding("m", "next_metric", "Metric", id="heatmap.metric", tooltip="Show the next metric"),
        Binding("r", "next_rows", "Rows", id="heatmap.rows", tooltip="Next factor down the rows"),
        Binding("c", "next_cols", "Columns", id="heatmap.cols", tooltip="Next factor across the columns"),
        Binding("x", "swap", "Swap", id="heatmap.swap", tooltip="Swap rows and columns"),
    ]

    def __init__(
        self,
        workbench,
        run_ids: Sequence[str],
        filter_text: str = "",
        *,
        models: Sequence[str] | None = None,
        metrics: Sequence[str] = (),
        note: str = "",
    ):
        """``models``: only these models' answers (None: every answer of the runs). ``metrics``:
        further metrics to cycle through after the runs' default ones (``kind:dimension``).
        ``note``: a caveat for the title (what the selection could not narrow)."""
        super().__init__()
        self.workbench = workbench
        self.run_ids = list(dict.fromkeys(run_ids))
        self.models = list(models) if models else None
        self.filter_text = filter_text
        self.note = note
        self.extra_metrics = list(metrics)
        self.metrics: list[str] = []  # once read: the defaults first
        self.metric = ""
        self.values: dict[str, list] = {}  # factor -> its values in the runs
        self.factors: list[str] = []  # what r / c cycle through
        self.rows, self.cols = "", ""
        self.panels: list = []  # core.analysis.heatmap.Heatmap, as shown
        self.message = ""  # why nothing is shown, when nothing is

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title(loading=True), id="heatmap-title")
            yield VerticalScroll(id="heatmap-panels")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#heatmap-panels").focus()
        self._load(first=True)

    # -- reading -------------------------------------------------------------------------
    def _load(self, *, first: bool = False, new_metric: bool = False) -> None:
        from tui.widgets.worker_errors import flush_or_notify

        flush_or_notify(self, self.workbench)
        self.query_one("#heatmap-title", Static).update(self._title(loading=True))
        self.run_worker(
            self._read(first, new_metric),
            group="heatmap",
            exclusive=True,
            exit_on_error=False,
            description="the heatmap",
        )

    async def _read(self, first: bool, new_metric: bool) -> None:
        from app.reports import ReportError

        wb = self.workbench
        try:
            if first:
                self.metrics, self.values = await asyncio.to_thread(
                    wb.heatmap_choices, self.run_ids, FACTORS, self.models
                )
                self.metrics += [m for m in self.extra_metrics if m not in self.metrics]
                self.metric = self.metrics[0]
                self.rows, self.cols = default_axes(self.values)
            elif new_metric:  # its judgments may cover other factor values (MCQ and open queries)
                _, self.values = await asyncio.to_thread(
                    wb.heatmap_choices, self.run_ids, FACTORS, self.models, self.metric
                )
            self.factors = cycled_factors(self.values, (self.rows, self.cols))
            panels = await asyncio.to_thread(wb.heatmap, self.run_ids, self.metric, self.rows, self.cols, self.models)
        except ReportError as exc:
            self.panels, self.message = [], str(exc)
        else:
            self.panels = panels
            self.message = (
                "" if panels else f"no {self.metric} scores in these runs (judge them first: `prefscope judge`)"
            )
        await self._show()

    async def _show(self) -> None:
        from tui.heatmap_render import heatmap_table

        self.query_one("#heatmap-title", Static).update(self._title())
        box = self.query_one("#heatmap-panels", VerticalScroll)
        await box.remove_children()
        if self.message:
            await box.mount(Static(safe_text(self.message, "yellow"), classes="heatmap-panel"))
            return
        await box.mount_all(Static(heatmap_table(h), classes="heatmap-panel") for h in self.panels)

    def _title(self, *, loading: bool = False) -> Text:
        text = Text("Heatmap", "bold")
        if self.metric:
            text.append_text(safe_text(f" · {self.metric}", "bold"))
            text.append(f" · rows {SHORT.get(self.rows, self.rows)} × columns {SHORT.get(self.cols, self.cols)}")
        text.append(f" · {len(self.run_ids)} run(s) listed in the Runs tab")
        if self.filter_text.strip():
            text.append_text(safe_text(f" (filter: {self.filter_text.strip()})", "dim"))
        if loading:
            text.append(" · reading …", "bold cyan")
        common = {
            f: v[0]
            for f, v in self.values.items()
            if len(v) == 1 and v[0] is not None and f not in (self.rows, self.cols)
        }
        if common:
            shown = " · ".join(f"{SHORT.get(f, f)} {value_text(v)}" for f, v in common.items())
            text.append_text(safe_text(f"\nevery answer: {shown}", "dim"))
        if self.note:
            text.append_text(safe_text(f"\n{self.note}", "yellow"))
        if len(self.metrics) > 1:
            text.append_text(safe_text(f"\nmetrics (m): {' · '.join(self.metrics)}", "dim"))
        return text

    # -- keys ----------------------------------------------------------------------------
    def _ready(self) -> bool:
        return bool(self.metric)

    def action_next_metric(self) -> None:
        if not self._ready():
            return
        if len(self.metrics) < 2:
            self.notify("No other metric was judged on these runs.", timeout=3)
            return
        self.metric = self.metrics[(self.metrics.index(self.metric) + 1) % len(self.metrics)]
        self._load(new_metric=True)

    def action_next_rows(self) -> None:
        if self._ready():
            self._move_axis("rows", "cols")

    def action_next_cols(self) -> None:
        if self._ready():
            self._move_axis("cols", "rows")

    def _move_axis(self, axis: str, other: str) -> None:
        factor = next_factor(self.factors, getattr(self, axis), getattr(self, other))
        if factor == getattr(self, axis):
            self.notify("No other factor varies in these runs (x swaps rows and columns).", timeout=4)
            return
        setattr(self, axis, factor)
        self._load()

    def action_swap(self) -> None:
        if self._ready():
            self.rows, self.cols = self.cols, self.rows
            self._load()

    def on_worker_state_changed(self, event) -> None:
        from tui.widgets.worker_errors import notify_if_failed

        notify_if_failed(self, event)

    def action_close(self) -> None:
        self.dismiss(None)
