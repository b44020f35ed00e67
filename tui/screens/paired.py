"""A paired comparison of B against A (``prefscope compare A B --tui``): the statistics on top, the
items that regressed and then those that improved below, largest change first.

The statistics are :mod:`core.analysis.paired`'s, the pairing :mod:`storage.compare`'s; this screen
only shows a :class:`storage.compare.PairedResult`. The list names the key factors whose value
differs between items (the others are named once above it). ``enter`` on an item opens its two
answers side by side, B's words marked against A's (:class:`tui.screens.compare.CompareScreen`).
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui.paired_view import IMPROVED, REGRESSED, SHORT, statistics, value_text, varying
from tui.safe_text import safe_text


class PairedScreen(Screen[None]):
    DEFAULT_CSS = """
    PairedScreen > Vertical { height: 1fr; }
    PairedScreen #paired-stats { height: auto; max-height: 50%; overflow-y: auto; padding: 0 1; }
    PairedScreen #paired-list-title { height: auto; padding: 0 1; background: $boost; }
    PairedScreen #paired-items { height: 1fr; min-height: 4; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="paired.close", tooltip="Close the comparison"),
    ]

    def __init__(self, workbench, result):
        """``result``: a :class:`storage.compare.PairedResult`."""
        super().__init__()
        self.workbench = workbench
        self.result = result
        c = result.comparison
        #: What the list shows, in row order: ("regressed" | "improved", Pair).
        self.items = [("regressed", p) for p in c.regressed] + [("improved", p) for p in c.improved]
        self.shown = varying(result)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._heading(), id="paired-stats")
            yield Static(self._list_title(), id="paired-list-title")
            yield DataTable(id="paired-items", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def _heading(self) -> Text | Table:
        r = self.result
        grid = Table.grid()
        grid.add_row(safe_text(f"Paired comparison · {r.metric} · B − A", "bold"))
        grid.add_row(statistics(r))
        for note in r.notes:
            grid.add_row(safe_text(f"note: {note}", "dim"))
        return grid

    def _list_title(self) -> Text:
        r, c = self.result, self.result.comparison
        if not self.items:
            return Text("no item changed between A and B", "yellow")
        text = Text(f"{len(c.regressed)} regressed, then {len(c.improved)} improved", "bold")
        text.append(" · enter: the two answers side by side", "dim")
        pairs = [p for _, p in self.items]
        same = [
            f"{SHORT.get(f, f)} {value_text(pairs[0].key[i])}"
            for i, f in enumerate(r.key_factors)
            if i not in self.shown and pairs[0].key[i] is not None
        ]
        if same:
            text.append_text(safe_text("\nevery item: " + " · ".join(same), "dim"))
        return text

    def on_mount(self) -> None:
        table = self.query_one("#paired-items", DataTable)
        table.add_column("", key="change")
        for i in self.shown:
            name = self.result.key_factors[i]
            table.add_column(safe_text(SHORT.get(name, name)), key=name)
        for label in ("A", "B", "B − A"):
            table.add_column(Text(label, justify="right"), key=label)
        for n, (which, p) in enumerate(self.items):
            colour = REGRESSED if which == "regressed" else IMPROVED
            mark = Text("▼ regressed" if which == "regressed" else "▲ improved", colour)
            values = [safe_text(value_text(p.key[i])) for i in self.shown]
            scores = [Text(f"{p.a:g}", justify="right"), Text(f"{p.b:g}", justify="right")]
            table.add_row(mark, *values, *scores, Text(f"{p.diff:+g}", f"bold {colour}", justify="right"), key=str(n))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.items):
            self.open_item(event.cursor_row)

    def open_item(self, index: int) -> None:
        """The item's two answers side by side (A the base of the word diff)."""
        from tui.screens.compare import CompareScreen, compared_refs
        from tui.widgets.worker_errors import flush_or_notify

        which, pair = self.items[index]
        flush_or_notify(self, self.workbench)
        answers = compared_refs(self.workbench, [tuple(pair.a_ref), tuple(pair.b_ref)])
        if len(answers) < 2:
            self.notify("One of the two answers is no longer stored.", severity="warning")
            return
        r = self.result
        title = f"{which}: {r.metric} {pair.a:g} → {pair.b:g} ({pair.diff:+g})"
        self.app.push_screen(CompareScreen(answers, sides=[r.a.label, r.b.label], title=title))

    def action_close(self) -> None:
        self.dismiss(None)
