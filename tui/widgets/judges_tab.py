"""The Judges tab: every score with its rationale and raw output; the operator's own scores.

Keys (on the table): ``enter`` shows a judgment in full, ``h`` scores the row's answer yourself on
the same scales, ``p`` picks the better of two answers. Scoring needs the run's answers, so those
two keys post requests for the screen to hand to the run view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from tui.safe_text import safe_text


def _short(text: str | None, n: int) -> str:
    s = " ".join((text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def source_label(j) -> str:
    from core.judges.aggregate import source_of

    return {"llm": "LLM"}.get(source_of(j), source_of(j))


class JudgesTable(DataTable):
    @dataclass
    class ScoreRequested(Message):
        """The operator wants to score this answer on the judges' scales."""

        response_id: str | None

    @dataclass
    class PairwiseRequested(Message):
        """The operator wants to pick the better of two answers."""

    BINDINGS = [
        Binding("h", "human_score", "Score it", id="judges.human", tooltip="Score the selected answer yourself"),
        Binding("p", "pairwise", "Pick better", id="judges.pairwise", tooltip="Choose the better of two answers"),
    ]

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        #: (model id, response id, judgment) per row, in row order.
        self.items: list[tuple[str, str | None, Any]] = []

    def on_mount(self) -> None:
        self.add_columns("model", "source", "judge", "kind", "dimension", "score", "parsed", "rationale", "raw output")

    def clear_items(self) -> None:
        self.items = []
        self.clear()

    def set_items(self, items: list[tuple[str, str | None, Any]]) -> None:
        self.clear_items()
        for item in items:
            self.add_item(*item)

    def add_item(self, model: str, response_id: str | None, j) -> None:
        self.items.append((model, response_id, j))
        score = "" if j.score is None else f"{j.score:.3g}" + (f"/{j.scale_max:g}" if j.scale_max is not None else "")
        parsed = Text("yes", "green") if j.parse_ok else Text("NO", "bold red")
        self.add_row(  # data cells as Text: a str cell would be parsed as markup ("[/INST]" crashes it)
            safe_text(model),
            safe_text(source_label(j)),
            safe_text(j.judge_model),
            safe_text(j.kind),
            safe_text(j.dimension),
            score,
            parsed,
            safe_text(_short(j.rationale or j.error, 70)),
            safe_text(_short(j.raw, 40)),
        )

    def current(self) -> tuple[str, str | None, Any] | None:
        if not self.items or self.cursor_row is None or not (0 <= self.cursor_row < len(self.items)):
            return None
        return self.items[self.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        item = self.current()
        if item is not None:
            from tui.screens.text_view import TextView, judgment_markdown

            model, _, j = item
            self.app.push_screen(TextView(f"{j.kind} / {j.dimension}", judgment_markdown(model, j)))

    def action_human_score(self) -> None:
        item = self.current()
        self.post_message(self.ScoreRequested(item[1] if item else None))

    def action_pairwise(self) -> None:
        self.post_message(self.PairwiseRequested())
