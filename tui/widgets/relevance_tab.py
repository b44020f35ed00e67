"""The Relevance tab: for each attribute and retrieved turn, every decider's verdict side by side
(gold, BM25, embedding, LLM, you), whether they agree, and agreement statistics.

Keys (on the table): ``y`` / ``n`` label the target relevant / not (stored as the human decider),
``d`` runs the offline deciders for the run shown (gold + BM25; embeddings with ``D``).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tui.messages import RelevanceDecideRequested, RelevanceLabelled

DECIDERS = ("gold", "bm25", "embedding", "llm", "human")


def _cell(d) -> Text:
    if d is None:
        return Text("")
    if d.relevant is None:
        return Text("?", "bold red")
    score = f" {d.score:.2f}" if d.score is not None and d.decider in ("bm25", "embedding") else ""
    return Text(("yes" if d.relevant else "no") + score, "green" if d.relevant else "")


class RelevanceTable(DataTable):
    BINDINGS = [
        Binding("y", "label(True)", "Relevant", id="relevance.yes", tooltip="You say: relevant (stored)"),
        Binding("n", "label(False)", "Not relevant", id="relevance.no", tooltip="You say: not relevant (stored)"),
        Binding("d", "decide(False)", "Decide", id="relevance.decide", tooltip="Run the gold and BM25 deciders"),
        Binding(
            "D",
            "decide(True)",
            "Decide+emb",
            id="relevance.decide_embeddings",
            tooltip="Also run the embedding decider (loads the embedding model)",
        ),
    ]

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.targets: list[tuple[str, str]] = []

    def on_mount(self) -> None:
        self.show({}, {})

    def show(self, table: dict, texts: dict) -> None:
        """``table``: (kind, id) -> decider -> Decision (core.analysis.relevance.side_by_side)."""
        keep = self.cursor_row
        self.clear(columns=True)
        self.add_columns("target", "text", *DECIDERS, "agree")
        self.targets = list(table)
        for key, row in table.items():
            verdicts = {d.relevant for d in row.values() if d.relevant is not None}
            agree = Text("✓", "green") if len(verdicts) == 1 else Text("✗ split", "bold yellow") if verdicts else ""
            text = " ".join((texts.get(key) or "").split())
            self.add_row(
                f"{key[0]} {key[1]}",
                text[:60] + ("…" if len(text) > 60 else ""),
                *[_cell(row.get(d)) for d in DECIDERS],
                agree,
            )
        if self.targets and keep is not None:
            self.move_cursor(row=min(keep, len(self.targets) - 1))

    def action_label(self, relevant: bool) -> None:
        if not self.targets or not (0 <= self.cursor_row < len(self.targets)):
            return
        kind, target = self.targets[self.cursor_row]
        self.post_message(RelevanceLabelled(kind, target, relevant))

    def action_decide(self, embeddings: bool) -> None:
        self.post_message(RelevanceDecideRequested(embeddings))


class RelevanceView(Vertical):
    DEFAULT_CSS = """
    RelevanceView > Static { height: auto; padding: 0 1; color: $text-muted; }
    RelevanceView > RelevanceTable { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Run a case (RAG methods retrieve turns) or re-open one, then press d here.", id="relevance-note")
        yield RelevanceTable(id="relevance-table")

    def show(self, table: dict, texts: dict, note: str) -> None:
        self.query_one("#relevance-note", Static).update(note)
        self.query_one(RelevanceTable).show(table, texts)
