"""The Evidence tab: gold sessions vs retrieved ones vs what each model's answer mentions.

Rows are ``core.analysis.mentions.SessionMentions``; this widget only lays them out.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

EMPTY_NOTE = "no gold evidence or retrieved turns for this case"


class EvidenceTable(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.show([], [])

    def show(self, rows: list, models: list[str]) -> None:
        self.clear(columns=True)
        self.add_columns(
            "session", "gold", "retrieved", "tokens to query", "distinctive words", *[f"in {m}" for m in models]
        )
        for r in rows:
            cells = [
                r.session_id,
                Text("★ gold", "bold yellow") if r.gold else "",
                f"#{r.retrieved_rank} ({r.similarity:.2f})" if r.retrieved_rank is not None else "",
                f"{r.tokens_to_query:,}" if r.tokens_to_query is not None else "",
                ", ".join(r.distinctive[:6]) or "—",
            ]
            for m in models:
                found = r.mentioned.get(m, ())
                cells.append(Text("✓ " + ", ".join(found[:4]), "green") if found else Text("—", "dim"))
            self.add_row(*cells, key=r.session_id)
        if not rows:
            self.add_row(EMPTY_NOTE, *[""] * (4 + len(models)))
