"""The Relevance tab: for each attribute and retrieved turn, every decider's verdict side by side
(gold, BM25, embedding, LLM, you), whether they agree, and agreement statistics.

Keys (on the table): ``y`` / ``n`` label the target relevant / not (stored as the human decider),
``d`` runs the offline deciders for the run shown (gold + BM25; embeddings with ``D``). Everything
goes through the Workbench and is re-read, so what is on screen is what is stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static
from textual.worker import Worker

from core.model import UserBundle
from tui.safe_text import safe_text
from tui.widgets.worker_errors import flush_or_notify, notify_if_failed, store_or_notify

DECIDERS = ("gold", "bm25", "embedding", "llm", "human")


def _cell(d) -> Text:
    if d is None:
        return Text("")
    if d.relevant is None:
        return Text("?", "bold red")
    score = f" {d.score:.2f}" if d.score is not None and d.decider in ("bm25", "embedding") else ""
    return Text(("yes" if d.relevant else "no") + score, "green" if d.relevant else "")


class RelevanceTable(DataTable):
    @dataclass
    class Labelled(Message):
        target_kind: str
        target_id: str
        relevant: bool

    @dataclass
    class DecideRequested(Message):
        embeddings: bool

    BINDINGS = [
        Binding("y", "label(True)", "Yes", id="relevance.yes", tooltip="You say: relevant (stored)"),
        Binding("n", "label(False)", "No", id="relevance.no", tooltip="You say: not relevant (stored)"),
        Binding("d", "decide(False)", "Decide", id="relevance.decide", tooltip="Run the gold and BM25 deciders"),
        Binding(
            "D",
            "decide(True)",
            "Embed",
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
            self.add_row(  # data cells as Text: a str cell would be parsed as markup
                safe_text(f"{key[0]} {key[1]}"),
                safe_text(text[:60] + ("…" if len(text) > 60 else "")),
                *[_cell(row.get(d)) for d in DECIDERS],
                agree,
            )
        if self.targets and keep is not None:
            self.move_cursor(row=min(keep, len(self.targets) - 1))

    def action_label(self, relevant: bool) -> None:
        if not self.targets or not (0 <= self.cursor_row < len(self.targets)):
            return
        kind, target = self.targets[self.cursor_row]
        self.post_message(self.Labelled(kind, target, relevant))

    def action_decide(self, embeddings: bool) -> None:
        self.post_message(self.DecideRequested(embeddings))


class RelevanceView(Vertical):
    DEFAULT_CSS = """
    RelevanceView > Static { height: auto; padding: 0 1; color: $text-muted; }
    RelevanceView > RelevanceTable { height: 1fr; }
    """

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id)
        self.workbench = workbench
        self.run_id: str | None = None
        self.query_id: str | None = None
        self.bundle: UserBundle | None = None
        self.plan = None

    def compose(self) -> ComposeResult:
        yield Static("Run a case (RAG methods retrieve turns) or re-open one, then press d here.", id="relevance-note")
        yield RelevanceTable(id="relevance-table")

    def show(self, table: dict, texts: dict, note: str) -> None:
        self.query_one("#relevance-note", Static).update(safe_text(note))
        self.query_one(RelevanceTable).show(table, texts)

    def show_run(self, run_id: str | None, query_id: str | None, bundle: UserBundle | None, plan) -> None:
        """The stored decisions of this finished run (None: no finished run on screen)."""
        self.run_id, self.query_id, self.bundle, self.plan = run_id, query_id, bundle, plan
        self.refresh_decisions()

    def refresh_decisions(self) -> None:
        from core.analysis import relevance as rel

        if self.run_id is None:
            self.show({}, {}, "Run a case or re-open one; then d decides relevance here.")
            return
        flush_or_notify(self, self.workbench)
        stored = self.workbench.relevance(self.run_id)
        decisions = [s.decision for s in stored]
        texts: dict = {}
        for s in stored:
            if s.target_text:
                texts.setdefault((s.decision.target_kind, s.decision.target_id), s.target_text)
        table = rel.side_by_side(decisions)
        if not table:
            hint = (
                "d runs the gold and BM25 deciders (D adds embeddings)"
                if self.plan is not None and (self.plan.retrieved or (self.bundle and self.bundle.attributes))
                else "nothing to decide: no attributes and no retrieved turns (use a RAG method or extract attributes)"
            )
            self.show({}, {}, f"run {self.run_id}: {hint} · y / n label a target yourself")
            return
        reference = "human" if any(d.decider == "human" for d in decisions) else "gold"
        parts = []
        for a in rel.agreement(decisions, reference):
            rate = "—" if a.positive_rate is None else f"{a.positive_rate:.0%}"
            kappa = "—" if a.kappa is None else f"{a.kappa:.2f}"
            f1 = "—" if a.f1 is None else f"{a.f1:.2f}"
            parts.append(f"{a.decider}: relevant {rate}, κ {kappa}, F1 {f1} (n={a.n})")
        note = f"vs {reference}: " + " · ".join(parts) if parts else f"reference: {reference}"
        self.show(table, texts, note + " · y / n: your label · d: decide again")

    def on_relevance_table_labelled(self, message: RelevanceTable.Labelled) -> None:
        message.stop()
        if self.run_id is None or self.query_id is None:
            self.notify("Label relevance for a run: run a case or re-open one first.")
            return
        run_id, query_id = self.run_id, self.query_id
        if store_or_notify(
            self,
            lambda: self.workbench.save_human_relevance(
                run_id, query_id, message.target_kind, message.target_id, message.relevant
            ),
        ):
            self.refresh_decisions()

    def on_relevance_table_decide_requested(self, message: RelevanceTable.DecideRequested) -> None:
        message.stop()
        if self.run_id is None or self.bundle is None:
            self.notify("Decide relevance once the run has finished (or re-open a stored run).", severity="warning")
            return
        flush_or_notify(self, self.workbench)
        run = self.workbench.load_run(self.run_id)
        self.show({}, {}, "deciding …")
        self._decide(run, self.bundle, message.embeddings)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        notify_if_failed(self, event)

    @work(thread=True, exclusive=True, group="relevance", exit_on_error=False, description="relevance deciders")
    def _decide(self, run, bundle: UserBundle, embeddings: bool) -> None:
        n = self.workbench.decide_relevance(run, bundle, embeddings=embeddings)
        self.app.call_from_thread(self.refresh_decisions)
        if n == 0:
            self.app.call_from_thread(self.notify, "Nothing to decide: no attributes and no retrieved turns.")
