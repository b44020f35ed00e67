"""The session timeline: one line per session, gold evidence starred, filler runs collapsed.

Rows are plain data (:class:`TimelineRow`) built from a user's history or from a built
context, so the same rows can be rendered here and checked in tests. ``OptionList`` renders
only the visible lines, which keeps a 2,000-session user fast.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from core.model import UserBundle
from tui.messages import SessionChosen

KIND_LABEL = {"life_event": "life", "preference": "pref", "filler": "filler", "task": "task"}


@dataclass(frozen=True, slots=True)
class TimelineRow:
    session_id: str | None  # None for a collapsed run of filler
    date: str
    kind: str
    label: str
    tokens: int
    evidence: bool = False
    filler_count: int = 0
    retrieved: str = ""  # e.g. "#2 (0.61)"
    attribute_evidence: bool = False
    #: Tokens are a quick estimate (characters / 4) until the real count is ready.
    estimated: bool = False


def rows_for_user(bundle: UserBundle, *, expression_type: int | None, evidence: set[str],
                  tokens: dict[str, int], retrieved: dict[str, str] | None = None,
                  attribute_sessions: set[str] | None = None, order: list[str] | None = None,
                  estimated: bool = False) -> list[TimelineRow]:
    """Rows for a history. ``order`` (session ids of a built context, fillers included) replaces
    the user's own order; sessions of other expression types are left out when a type is chosen."""
    retrieved = retrieved or {}
    attribute_sessions = attribute_sessions or set()
    by_id = {s.id: s for s in bundle.sessions}
    if order is None:
        order = [s.id for s in bundle.sessions
                 if expression_type is None or s.kind != "preference" or s.expression_type in (None, expression_type)]
    rows: list[TimelineRow] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            total = sum(tokens.get(sid, 0) for sid in run)
            rows.append(TimelineRow(None, "", "filler", f"filler ×{len(run)}", total, filler_count=len(run),
                                    estimated=estimated))
            run.clear()

    for sid in order:
        session = by_id.get(sid)
        if session is None:  # a filler session from a pool
            run.append(sid)
            continue
        if session.kind == "filler":
            run.append(sid)
            continue
        close_run()
        label = KIND_LABEL.get(session.kind, session.kind)
        if session.preference_ids:
            label += " " + ",".join(session.preference_ids)
        if session.expression_type:
            label += f" E{session.expression_type}"
        if session.context_factor:
            label += f" [{session.context_factor}]"
        rows.append(TimelineRow(
            sid, session.date.isoformat() if session.date else "", session.kind, label,
            tokens.get(sid, 0), evidence=sid in evidence, retrieved=retrieved.get(sid, ""),
            attribute_evidence=sid in attribute_sessions, estimated=estimated,
        ))
    close_run()
    return rows


def render_row(row: TimelineRow, width: int = 40) -> Text:
    """One line, never wrapped: the label is shortened to leave room for the marks."""
    tokens = ("~" if row.estimated else "") + _tok(row.tokens)
    marks = ""
    if row.retrieved:
        marks += f" ▸{row.retrieved}"
    if row.attribute_evidence:
        marks += " ◆"
    text = Text(no_wrap=True, overflow="ellipsis")
    if row.session_id is None:
        text.append(f"{'':{11 if width >= 34 else 8}}······ {row.label} {tokens}", "dim")
        return text
    date_w = 10 if width >= 34 else 7  # 2015-11-06, or 2015-11 on narrow terminals
    room = max(6, width - date_w - 2 - len(tokens) - 1 - len(marks))
    label = row.label if len(row.label) <= room else row.label[: room - 1] + "…"
    text.append(f"{row.date[:date_w]:{date_w}} ", "dim")
    text.append("★" if row.evidence else " ", "bold yellow")
    style = {"preference": "cyan", "life_event": "", "task": "green"}.get(row.kind, "")
    text.append(label.ljust(room), style)
    text.append(f" {tokens}", "dim")
    if row.retrieved:
        text.append(f" ▸{row.retrieved}", "magenta")
    if row.attribute_evidence:
        text.append(" ◆", "blue")
    return text


def _tok(n: int) -> str:
    return f"{n / 1000:.1f}Kt" if n >= 10_000 else f"{n}t"


class Timeline(OptionList):
    """Enter (or click) on a session posts SessionChosen; collapsed filler rows are inert."""

    DEFAULT_CSS = """
    Timeline { width: 44; height: 1fr; border: round $panel; }
    Timeline:focus { border: round $accent; }
    """
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="timeline.down", tooltip="Next session"),
        Binding("k", "cursor_up", "Up", show=False, id="timeline.up", tooltip="Previous session"),
        Binding("g", "first", "Top", show=False, id="timeline.top", tooltip="First session"),
        Binding("G", "last", "Bottom", show=False, id="timeline.bottom", tooltip="Last session"),
    ]

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self.rows: list[TimelineRow] = []
        self._rendered_width = 0
        self.border_title = "Timeline"

    def on_resize(self) -> None:
        if self.rows and self.size.width != self._rendered_width:
            self.show(self.rows, self.border_subtitle or "")

    def show(self, rows: list[TimelineRow], subtitle: str = "") -> None:
        self.rows = rows
        highlighted = self.highlighted
        self.clear_options()
        self._rendered_width = self.size.width
        scrollbar = 2 if len(rows) > self.scrollable_content_region.height else 0
        width = max(20, self.scrollable_content_region.width - 1 - scrollbar) if self.size.width else 40
        self.add_options(
            Option(render_row(r, width), id=r.session_id or f"filler-{i}", disabled=r.session_id is None)
            for i, r in enumerate(rows)
        )
        self.border_subtitle = subtitle
        if highlighted is not None and highlighted < len(rows):
            self.highlighted = highlighted

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id and not event.option.id.startswith("filler-"):
            self.post_message(SessionChosen(event.option.id))
