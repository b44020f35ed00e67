"""The Evidence tab: gold sessions vs retrieved ones vs what each model's answer mentions.

Rows are ``core.analysis.mentions.SessionMentions``, computed in a worker thread (it reads every
session of the user) from a run's plan and final answers, plus the sessions an answer quotes
(``core.analysis.quotes``); this widget lays them out.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.widgets import DataTable
from textual.worker import Worker

from core.model import UserBundle
from core.run.spec import RunSpec
from tui.safe_text import safe_text
from tui.widgets.worker_errors import notify_if_failed

EMPTY_NOTE = "no gold evidence or retrieved turns for this case"


class EvidenceTable(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.show([], [])

    @work(thread=True, exclusive=True, group="evidence", exit_on_error=False, description="evidence mentions")
    def show_run(self, bundle: UserBundle, spec: RunSpec, plan, answers: dict[str, str]) -> None:
        """Gold, retrieved and mentioned sessions of a run (``answers``: model id -> final answer)."""
        from core.analysis.mentions import evidence_mentions
        from core.analysis.quotes import tokens_after, with_quotes
        from core.history.evidence_depth import evidence_depth

        sessions = {s.id: "\n".join(t.content for t in s.turns) for s in bundle.sessions}
        rows = evidence_mentions(
            sessions,
            question=bundle.query(spec.query_id).text,
            gold=[e.session_id for e in plan.evidence],
            retrieved=[(r.session_id, r.rank, r.similarity) for r in plan.retrieved],
            tokens_to_query={e.session_id: e.tokens_to_query for e in plan.evidence},
            answers=answers,
        )
        # sessions an answer quotes verbatim, gold or not (only those the model was shown)
        shown = {c.session_id for c in plan.context}
        distance = tokens_after([(c.session_id, c.tokens) for c in plan.context])
        rows = with_quotes(rows, {k: v for k, v in sessions.items() if k in shown}, answers, distance)
        depth = evidence_depth(bundle.query(spec.query_id))
        self.app.call_from_thread(self.show, rows, [m.id for m in spec.models], depth)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        notify_if_failed(self, event)

    def show(self, rows: list, models: list[str], depth: dict | None = None) -> None:
        """``depth``: the dataset's own figures for how far the reference is (PersonaMem), shown first."""
        self.clear(columns=True)
        self.add_columns(
            "session",
            "gold",
            "retrieved",
            "tokens to query",
            "distinctive words",
            *[safe_text(f"in {m}") for m in models],
        )
        if depth:  # no session to star: the dataset gives a distance, not the evidence turns
            from core.history.evidence_depth import depth_detail

            tokens = depth.get("tokens")
            head = (
                Text("reference (no turn labels)", "dim"),
                Text("▶ dataset", "bold yellow"),
                "",
                f"{tokens:,}" if isinstance(tokens, (int, float)) else "?",
                safe_text(depth_detail(depth) + " before the question, as the dataset gives it"),
            )
            self.add_row(*head, *[""] * len(models), key="evidence-depth")
        for r in rows:
            cells = [  # data cells as Text: a str cell would be parsed as markup
                safe_text(r.session_id),
                Text("★ gold", "bold yellow") if r.gold else "",
                f"#{r.retrieved_rank} ({r.similarity:.2f})" if r.retrieved_rank is not None else "",
                f"{r.tokens_to_query:,}" if r.tokens_to_query is not None else "",
                safe_text(", ".join(r.distinctive[:6]) or "—"),
            ]
            for m in models:
                found = r.mentioned.get(m, ())
                cells.append(safe_text("✓ " + ", ".join(found[:4]), "green") if found else Text("—", "dim"))
            self.add_row(*cells, key=r.session_id)
        if not rows and not depth:
            self.add_row(EMPTY_NOTE, *[""] * (4 + len(models)))
