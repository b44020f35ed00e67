"""Can this judge be trusted? Agreement between every rater of the runs listed in the Runs tab
(``J`` there), or of an annotation queue's items: annotators by name, judges by model.

The numbers are :func:`storage.agreement.agreement`'s (:mod:`core.analysis.agreement`): per
dimension Krippendorff's alpha over all raters, and one row per pair of raters with the items both
scored (n), exact and within-one agreement, Cohen's kappa unweighted, linear and quadratic,
Spearman's rho, Kendall's tau and the abstentions on each side. The highlighted row's confusion
matrix (rows: rater A's labels, columns: rater B's) and each side's base rates are shown under the
table. Keys: ``d`` next dimension, ``esc`` closes. Reads happen on a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui.safe_text import safe_text

#: The dimension shown first when the runs have it.
FIRST = "rubric:alignment"
#: The abstentions come right after n: a judge that abstains on exactly the hard items looks good otherwise.
COLUMNS = ("A", "B", "n", "abst", "exact", "±1", "κ", "κ lin", "κ quad", "ρ", "τ")
COUNTING = (
    "A, B: the two raters. n counts the items both scored; an abstention or a reply the judge's parser "
    "could not read is left out of n and counted in abst (A's/B's). κ lin / κ quad weigh a "
    "disagreement by its distance on the scale; ±1, weighted κ, ρ and τ are – on yes/no dimensions."
)
EMPTY = (
    "No two raters scored the same items here, so there is nothing to compare. Get human labels with "
    "`prefscope annotate QUEUE --batch B` (a queue of batch B's answers, labelled blind in the workbench), "
    "or judge the runs with a second judge (`prefscope judge`)."
)


def num(v: float | None, fmt: str = ".2f") -> str:
    return "–" if v is None else format(v, fmt)


def label_text(v: float) -> str:
    return f"{v:g}"


def default_dimension(dimensions: Sequence) -> int:
    """Index of the dimension shown first: rubric:alignment when two raters share items there,
    else the first that has a pair of raters, else the first."""
    with_pairs = [i for i, d in enumerate(dimensions) if d.pairs]
    for i in with_pairs:
        if dimensions[i].dimension == FIRST:
            return i
    return with_pairs[0] if with_pairs else 0


def confusion_table(pair) -> Table:
    """Rows: rater A's labels, columns: rater B's; the diagonal (agreement) in bold."""
    t = Table(box=None, pad_edge=False, padding=(0, 1), show_header=True, header_style="bold")
    t.add_column("A ↓  B →", no_wrap=True)
    for label in pair.labels:
        t.add_column(label_text(label), justify="right")
    t.add_column("total", justify="right", style="dim")
    for i, (label, row) in enumerate(zip(pair.labels, pair.confusion)):
        cells = [Text(str(c), "bold green" if i == j and c else ("" if c else "dim")) for j, c in enumerate(row)]
        t.add_row(label_text(label), *cells, str(sum(row)))
    totals = [str(sum(row[j] for row in pair.confusion)) for j in range(len(pair.labels))]
    t.add_row(Text("total", "dim"), *[Text(x, "dim") for x in totals], Text(str(pair.n), "dim"))
    return t


def base_rates(pair) -> Text:
    """Each side's share of every label among its n scores."""
    text = Text()
    for name, rates in ((pair.rater_a, pair.base_rate_a), (pair.rater_b, pair.base_rate_b)):
        if text:
            text.append("\n")
        text.append("base rates ", "dim").append_text(safe_text(name, "bold")).append(": ")
        text.append(" · ".join(f"{label_text(v)} {r:.0%}" for v, r in zip(pair.labels, rates)))
    if pair.only_a or pair.only_b:
        text.append(f"\nonly one side scored: {pair.only_a} item(s) A only, {pair.only_b} B only (not in n)", "dim")
    return text


class JudgeQualityScreen(Screen[None]):
    DEFAULT_CSS = """
    JudgeQualityScreen > Vertical { height: 1fr; }
    JudgeQualityScreen #jq-title { height: auto; padding: 0 1; background: $boost; }
    JudgeQualityScreen #jq-pairs { height: auto; max-height: 40%; }
    JudgeQualityScreen #jq-detail { height: 1fr; padding: 0 1; }
    JudgeQualityScreen #jq-note { height: auto; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="judge_quality.close", tooltip="Back to the Runs tab"),
        Binding(
            "d",
            "next_dimension",
            "Dimension",
            id="judge_quality.dimension",
            tooltip="Show the next score dimension (rubric:alignment, rubric:awareness …)",
        ),
    ]

    def __init__(
        self, workbench, run_ids: Sequence[str] | None = None, filter_text: str = "", *, queue: str | None = None
    ):
        """``run_ids``: the runs whose answers are compared (None: every run). ``queue``: only that
        annotation queue's items."""
        super().__init__()
        self.workbench = workbench
        self.run_ids = list(dict.fromkeys(run_ids)) if run_ids else None
        self.filter_text = filter_text
        self.queue = queue
        self.dimensions: list = []  # storage.agreement.DimensionAgreement, once read
        self.index = 0
        self.reading = True

    @property
    def current(self):
        return self.dimensions[self.index] if self.dimensions else None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title(), id="jq-title")
            yield DataTable(id="jq-pairs", cursor_type="row", zebra_stripes=True)
            yield VerticalScroll(Static(id="jq-detail-text"), id="jq-detail", can_focus=False)
            yield Static(COUNTING, id="jq-note")
        yield Footer()

    def on_mount(self) -> None:
        from tui.widgets.worker_errors import flush_or_notify

        table = self.query_one("#jq-pairs", DataTable)
        for name in COLUMNS:
            table.add_column(Text(name, justify="left" if name in ("A", "B") else "right"), key=name)
        table.focus()
        flush_or_notify(self, self.workbench)
        self.run_worker(
            self._read(), group="judge-quality", exclusive=True, exit_on_error=False, description="agreement"
        )

    async def _read(self) -> None:
        self.dimensions = await asyncio.to_thread(self.workbench.agreement, self.run_ids, queue=self.queue)
        self.index = default_dimension(self.dimensions)
        self.reading = False
        self._show()

    # -- drawing ---------------------------------------------------------------------------
    def _show(self) -> None:
        self.query_one("#jq-title", Static).update(self._title())
        table = self.query_one("#jq-pairs", DataTable)
        table.clear()
        d = self.current
        pairs = d.pairs if d is not None else ()
        table.display = bool(pairs)
        self.query_one("#jq-note").display = bool(pairs)
        for n, p in enumerate(pairs):
            numbers = [
                str(p.n),
                f"{p.abstained_a}/{p.abstained_b}",
                num(p.exact),
                num(p.within1),
                num(p.cohen_kappa),
                num(p.weighted_kappa_linear),
                num(p.weighted_kappa_quadratic),
                num(p.spearman),
                num(p.kendall),
            ]
            right = [Text(x, justify="right") for x in numbers]
            table.add_row(safe_text(p.rater_a), safe_text(p.rater_b), *right, key=str(n))
        if pairs:
            table.move_cursor(row=0)
        self._show_pair(0)

    def _show_pair(self, row: int) -> None:
        d = self.current
        detail = self.query_one("#jq-detail-text", Static)
        if d is None or not d.pairs:
            detail.update(self._empty())
            return
        pair = d.pairs[max(0, min(row, len(d.pairs) - 1))]
        head = Text("confusion matrix · ", "bold").append_text(safe_text(pair.rater_a, "bold"))
        head.append(" (rows) × ").append_text(safe_text(pair.rater_b, "bold")).append(f" (columns) · n = {pair.n}")
        detail.update(Group(head, confusion_table(pair), Text(), base_rates(pair)))

    def _empty(self) -> Text:
        if self.reading:
            return Text("reading …", "bold cyan")
        d = self.current
        text = Text()
        if d is not None:
            raters = ", ".join(d.raters) or "none"
            text.append_text(safe_text(f"{d.dimension}: only {len(d.raters)} rater(s) ({raters})\n\n", "yellow"))
        return text.append(EMPTY)

    def _title(self) -> Text:
        text = Text("Judge quality", "bold")
        d = self.current
        if d is not None:
            text.append_text(safe_text(f" · {d.dimension}", "bold")).append(f" ({d.level})")
            text.append(" · Krippendorff's α ")
            text.append(num(d.alpha, ".3f"), "bold")
            text.append(f" over {len(d.raters)} raters, {d.items} items")
        if self.queue is not None:
            text.append_text(safe_text(f" · queue {self.queue}"))
        elif self.run_ids is not None:
            text.append(f" · {len(self.run_ids)} run(s) listed in the Runs tab")
        if self.filter_text.strip():
            text.append_text(safe_text(f" (filter: {self.filter_text.strip()})", "dim"))
        if self.reading:
            text.append(" · reading …", "bold cyan")
        if len(self.dimensions) > 1:
            names = [x.dimension for x in self.dimensions]
            text.append_text(safe_text(f"\ndimensions (d): {' · '.join(names)}", "dim"))
        return text

    # -- keys ------------------------------------------------------------------------------
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_pair(event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._show_pair(event.cursor_row)

    def action_next_dimension(self) -> None:
        if self.reading:
            return
        if len(self.dimensions) < 2:
            self.notify("No other dimension was rated in these runs.", timeout=3)
            return
        self.index = (self.index + 1) % len(self.dimensions)
        self._show()

    def on_worker_state_changed(self, event) -> None:
        from textual.worker import WorkerState

        from tui.widgets.worker_errors import notify_if_failed

        notify_if_failed(self, event)
        if event.state == WorkerState.ERROR:  # said in the notification; nothing to show
            self.reading = False
            self._show()

    def action_close(self) -> None:
        self.dismiss(None)
