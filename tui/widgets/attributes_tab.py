"""The Attributes tab: attributes about the user (extracted by a model, or the dataset's gold ones),
with confidence, the verifier's verdict, evidence turns, and the operator's own verdict.

Keys (on the table): ``a`` accept, ``u`` uncertain, ``x`` reject (stored with the extraction
through the Workbench, then re-read), ``enter`` opens the first evidence session. Gold attributes
are shown but not judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from core.model import UserBundle
from tui.safe_text import safe_text
from tui.widgets.timeline import SessionChosen
from tui.widgets.worker_errors import store_or_notify

VERDICT_STYLE = {"accept": "green", "uncertain": "yellow", "reject": "red"}


@dataclass(frozen=True)
class AttributeRow:
    extraction_id: str | None  # None for the dataset's gold attributes
    id: str
    text: str
    confidence: float
    evidence: tuple[str, ...]  # turn refs "session#index"
    verifier: str | None
    verifier_note: str
    operator: str | None
    source: str


def rows_from(extraction, gold_attributes) -> list[AttributeRow]:
    """From a ``storage.analyses.StoredExtraction`` (or None) and the bundle's gold attributes."""
    rows = []
    if extraction is not None:
        for x in extraction.extraction.attributes:
            a = x.attribute
            op = extraction.operator.get(a.id, (None, ""))[0]
            rows.append(
                AttributeRow(
                    extraction.id,
                    a.id,
                    a.text,
                    a.confidence,
                    tuple(a.evidence_turns),
                    x.verifier_verdict,
                    x.verifier_reason or (x.verifier_error or ""),
                    op,
                    a.source,
                )
            )
    for a in gold_attributes:
        rows.append(AttributeRow(None, a.id, a.text, a.confidence, tuple(a.evidence_turns), None, "", None, "gold"))
    return rows


def _verdict(v: str | None) -> Text:
    return Text(v or "—", VERDICT_STYLE.get(v or "", "dim"))


def evidence_sessions(extraction, gold_attributes) -> set[str]:
    """Sessions some attribute (extracted or gold) cites a turn of: ◆ on the timeline."""
    refs = [r for a in gold_attributes for r in a.evidence_turns]
    if extraction is not None:
        refs += [r for x in extraction.extraction.attributes for r in x.attribute.evidence_turns]
    return {r.split("#")[0] for r in refs}


class AttributesTable(DataTable):
    @dataclass
    class VerdictChosen(Message):
        extraction_id: str
        attribute_id: str
        verdict: str

    BINDINGS = [
        Binding("a", "verdict('accept')", "Accept", id="attributes.accept", tooltip="Accept the attribute (stored)"),
        Binding(
            "u", "verdict('uncertain')", "Uncertain", id="attributes.uncertain", tooltip="Mark it uncertain (stored)"
        ),
        Binding("x", "verdict('reject')", "Reject", id="attributes.reject", tooltip="Reject the attribute (stored)"),
    ]

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.attrs: list[AttributeRow] = []

    def on_mount(self) -> None:
        self.add_columns("id", "attribute", "conf", "verifier", "evidence", "you", "source")

    def show(self, rows: list[AttributeRow]) -> None:
        keep = self.cursor_row
        self.attrs = list(rows)
        self.clear()
        for r in rows:
            ev = ", ".join(r.evidence[:3]) + (f" +{len(r.evidence) - 3}" if len(r.evidence) > 3 else "")
            text = r.text if len(r.text) <= 70 else r.text[:69] + "…"
            self.add_row(  # data cells as Text: a str cell would be parsed as markup
                safe_text(r.id),
                safe_text(text),
                f"{r.confidence:.2f}",
                _verdict(r.verifier),
                safe_text(ev or "—"),
                _verdict(r.operator) if r.extraction_id else Text("gold", "dim"),
                safe_text(r.source),
                key=f"{r.extraction_id}|{r.id}",
            )
        if rows and keep is not None:
            self.move_cursor(row=min(keep, len(rows) - 1))

    def current(self) -> AttributeRow | None:
        if not self.attrs or not (0 <= self.cursor_row < len(self.attrs)):
            return None
        return self.attrs[self.cursor_row]

    def action_verdict(self, verdict: str) -> None:
        row = self.current()
        if row is None:
            return
        if row.extraction_id is None:
            self.notify("Gold attributes come from the dataset; only extracted ones take a verdict.")
            return
        self.post_message(self.VerdictChosen(row.extraction_id, row.id, verdict))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = self.current()
        if row is not None and row.evidence:
            self.post_message(SessionChosen(row.evidence[0].split("#")[0]))


class AttributesView(Vertical):
    DEFAULT_CSS = """
    AttributesView > Static { height: auto; padding: 0 1; color: $text-muted; }
    AttributesView > AttributesTable { height: 1fr; }
    """

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id)
        self.workbench = workbench
        self.bundle: UserBundle | None = None
        #: sessions the shown attributes cite (◆ on the timeline)
        self.evidence_sessions: set[str] = set()

    def compose(self) -> ComposeResult:
        yield Static("", id="attributes-note")
        yield AttributesTable(id="attributes-table")

    def show(self, rows: list[AttributeRow], note: str) -> None:
        self.query_one("#attributes-note", Static).update(safe_text(note))
        self.query_one(AttributesTable).show(rows)

    def show_user(self, bundle: UserBundle) -> None:
        """The user's latest extraction (with the verdicts given) and the dataset's gold attributes."""
        self.bundle = bundle
        stored = self.workbench.latest_extraction(bundle.user.id)
        self.evidence_sessions = evidence_sessions(stored, bundle.attributes)
        rows = rows_from(stored, bundle.attributes)
        name = bundle.user.name or bundle.user.id
        if stored is not None:
            ex = stored.extraction
            note = (
                f"latest extraction by {ex.model} ({ex.prompt_version}); verifier "
                f"{ex.verifier_model or 'not run'} · a accept · u uncertain · x reject · enter opens evidence"
            )
        elif rows:
            note = f"{name}: the dataset's gold attributes (read-only) · enter opens evidence"
        else:
            note = (
                f"No attributes for {name} yet. Extract them with a model: "
                f"`prefscope attributes {bundle.user.id} --model PROVIDER:MODEL` (Re-Centering stage 1; "
                "offline: `--model demo:extractor`)."
            )
        self.show(rows, note)

    def on_attributes_table_verdict_chosen(self, message: AttributesTable.VerdictChosen) -> None:
        message.stop()
        stored = store_or_notify(
            self,
            lambda: self.workbench.set_attribute_verdict(message.extraction_id, message.attribute_id, message.verdict),
        )
        if stored and self.bundle is not None:
            self.show_user(self.bundle)
