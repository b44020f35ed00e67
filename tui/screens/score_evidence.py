"""One score from the results grid: the judge's rationale next to what it rests on.

Shows the judgment (judge, score on its scale, parsed or not, rationale), the preference the
answer was judged against, the answer, and the gold evidence of the case: each evidence session
with where it sits in the prompt (tokens before the question, or "not in this prompt") and its
user turns (only the gold turns when the query names them). Words the rationale quotes
('body clock', "you mentioned") are highlighted wherever they occur in the answer and the
evidence, which is the span the verdict points at. ``v`` scrolls to the evidence; ``o`` closes the
panel and re-opens the run.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from app.records import GridRow
from core.model import split_turn_ref
from tui.safe_text import safe_text
from tui.widgets.results_grid_rows import Column

QUOTED = re.compile(r"(?<!\w)'([^'\n]{2,80}?)'(?!\w)|\"([^\"\n]{2,80}?)\"|“([^”\n]{2,80}?)”")
HIGHLIGHT = "bold black on yellow"
TURN_CHARS = 1200  # per evidence turn shown


def quoted_phrases(rationale: str) -> list[str]:
    """Phrases the rationale quotes, longest first (so a phrase wins over a word inside it)."""
    found = {next(g for g in m.groups() if g) for m in QUOTED.finditer(rationale or "")}
    return sorted(found, key=len, reverse=True)


def highlighted(text: str, phrases: list[str], limit: int | None = None) -> Text:
    shown = text if limit is None or len(text) <= limit else text[:limit] + "…"
    out = safe_text(shown)
    if phrases:
        out.highlight_regex(re.compile("|".join(re.escape(p) for p in phrases), re.I), HIGHLIGHT)
    return out


class ScoreEvidenceScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ScoreEvidenceScreen { align: center middle; }
    ScoreEvidenceScreen > VerticalScroll { width: 95%; max-width: 140; height: 90%; border: round $accent;
                                           background: $surface; padding: 0 1; }
    ScoreEvidenceScreen .section { text-style: bold; margin-top: 1; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="close_score", tooltip="Close"),
        Binding("o", "open_run", "Open run", id="score.open", tooltip="Close and re-open the run in the main view"),
        Binding("v", "evidence", "Evidence", id="score.evidence", tooltip="Scroll to the gold evidence"),
    ]

    def __init__(self, workbench, row: GridRow, column: Column):
        super().__init__()
        self.row = row
        self.column = column
        run = workbench.load_run(row.run_id)
        c = column.score
        assert c is not None
        mine = [
            j
            for j in run.judgments
            if j.response_id == row.response_id
            and (j.kind, j.dimension, j.judge_model, j.heuristic, j.human)
            == (c.kind, c.dimension, c.judge_model, c.heuristic, c.human)
        ]
        self.judgment = mine[-1] if mine else None  # the latest, as the grid shows
        self.answer = next((r.text for r in run.responses if r.id == row.response_id), "")
        self.phrases = quoted_phrases(self.judgment.rationale) if self.judgment else []
        self.plan = run.plan
        self.spec = run.spec
        try:
            self.bundle = workbench.user(run.spec.user_id)
            self.case_query = self.bundle.query(run.spec.query_id)
        except (KeyError, LookupError):
            self.bundle = self.case_query = None
        preference = self._preference() if self.bundle is not None else ""
        self.preference_text = highlighted(preference, self.phrases) if preference else None
        self.answer_text = highlighted(self.answer, self.phrases)
        self.evidence_text = self._evidence()

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = safe_text(f"{self.column.label} · {self.row.model} · {self.row.run_id}")
            box.border_subtitle = "v evidence · o open the run · esc close"
            yield Static(self._verdict(), id="score-verdict")
            if self.preference_text is not None:
                yield Static("preference judged against", classes="section")
                yield Static(self.preference_text, id="score-preference")
            yield Static("answer", classes="section")
            yield Static(self.answer_text, id="score-answer")
            yield Static("evidence", classes="section", id="score-evidence-head")
            yield Static(self.evidence_text, id="score-evidence")

    def _verdict(self) -> Text:
        j = self.judgment
        if j is None:
            return Text("no judgment stored for this cell")
        score = "—" if j.score is None else f"{j.score:g}"
        scale = f" on {j.scale_min:g}–{j.scale_max:g}" if j.scale_min is not None and j.scale_max is not None else ""
        source = "human" if j.human else "heuristic (not an LLM)" if j.heuristic else "LLM judge"
        out = Text()
        out.append_text(safe_text(f"{j.kind} / {j.dimension}: {score}{scale}", "bold"))
        out.append_text(safe_text(f"  ·  judge {j.judge_model}, {source}  ·  parsed {'yes' if j.parse_ok else 'NO'}\n"))
        if j.error:
            out.append_text(safe_text(f"error: {j.error}\n", "red"))
        out.append_text(highlighted(j.rationale or "(no rationale)", self.phrases))
        return out

    def _preference(self) -> str:
        assert self.bundle is not None and self.case_query is not None
        if self.case_query.gold_preference:
            return self.case_query.gold_preference
        if self.case_query.preference_id:
            try:
                return self.bundle.preference(self.case_query.preference_id).text
            except KeyError:
                return ""
        return ""

    def _evidence(self) -> Text:
        if self.bundle is None or self.case_query is None:
            return safe_text(f"user {self.spec.user_id!r} or query {self.spec.query_id!r} is no longer in the database")
        gold = self.bundle.gold_evidence(self.case_query, self.spec.expression_type)
        if not gold:
            return Text("no gold evidence for this case")
        where = {e.session_id: e.tokens_to_query for e in self.plan.evidence}
        turns: dict[str, list[int]] = {}
        for ref in self.case_query.evidence_turns:
            session_id, index = split_turn_ref(ref)
            turns.setdefault(session_id, []).append(index)
        out = Text()
        for session_id in gold:
            place = f"{where[session_id]:,} tokens before the question" if session_id in where else "not in this prompt"
            out.append_text(safe_text(f"★ {session_id} · {place}\n", "bold"))
            try:
                session = self.bundle.session(session_id)
            except KeyError:
                out.append_text(Text("  (session not in the database)\n", "dim"))
                continue
            indexes = turns.get(session_id) or [i for i, t in enumerate(session.turns) if t.role == "user"]
            for i in indexes:
                if 0 <= i < len(session.turns):
                    t = session.turns[i]
                    out.append_text(safe_text(f"  #{i} {t.role}: ", "dim"))
                    out.append_text(highlighted(" ".join(t.content.split()), self.phrases, TURN_CHARS))
                    out.append("\n")
        return out

    def action_evidence(self) -> None:
        self.query_one("#score-evidence-head").scroll_visible(top=True, animate=False)

    def action_close(self) -> None:
        self.dismiss(False)

    def action_open_run(self) -> None:
        self.dismiss(True)
