"""The session timeline: one line per session, gold evidence starred, filler runs collapsed.

Rows are plain data (:class:`TimelineRow`) built from a user's history or from a built
context, so the same rows can be rendered here and checked in tests. The widget is a ScrollView
that renders only the rows on screen (style.md: long lists line by line): an OptionList measured
~400 ms to show a 2,000-session user because it builds and measures every option.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

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


def rows_for_user(
    bundle: UserBundle,
    *,
    expression_type: int | None,
    evidence: set[str],
    tokens: dict[str, int],
    retrieved: dict[str, str] | None = None,
    attribute_sessions: set[str] | None = None,
    order: list[str] | None = None,
    estimated: bool = False,
) -> list[TimelineRow]:
    """Rows for a history. ``order`` (session ids of a built context, fillers included) replaces
    the user's own order; sessions of other expression types are left out when a type is chosen."""
    retrieved = retrieved or {}
    attribute_sessions = attribute_sessions or set()
    by_id = {s.id: s for s in bundle.sessions}
    if order is None:
        order = [
            s.id
            for s in bundle.sessions
            if expression_type is None or s.kind != "preference" or s.expression_type in (None, expression_type)
        ]
    rows: list[TimelineRow] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            total = sum(tokens.get(sid, 0) for sid in run)
            rows.append(
                TimelineRow(
                    None, "", "filler", f"filler ×{len(run)}", total, filler_count=len(run), estimated=estimated
                )
            )
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
        rows.append(
            TimelineRow(
                sid,
                session.date.isoformat() if session.date else "",
                session.kind,
                label,
                tokens.get(sid, 0),
                evidence=sid in evidence,
                retrieved=retrieved.get(sid, ""),
                attribute_evidence=sid in attribute_sessions,
                estimated=estimated,
            )
        )
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


class Timeline(ScrollView, can_focus=True):
    """A cursor over the rows; Enter or a click on a session posts SessionChosen. Collapsed
    filler rows can be passed over but not opened."""

    DEFAULT_CSS = """
    Timeline { width: 44; height: 1fr; border: round $panel; scrollbar-gutter: stable; overflow-x: hidden; }
    Timeline:focus { border: round $accent; }
    Timeline > .timeline--cursor { background: $accent 40%; }
    Timeline:blur > .timeline--cursor { background: $panel; }
    """
    COMPONENT_CLASSES = {"timeline--cursor"}
    BINDINGS = [
        Binding("down,j", "cursor_down", "Down", show=False, id="timeline.down", tooltip="Next session"),
        Binding("up,k", "cursor_up", "Up", show=False, id="timeline.up", tooltip="Previous session"),
        Binding("home,g", "first", "Top", show=False, id="timeline.top", tooltip="First session"),
        Binding("end,G", "last", "Bottom", show=False, id="timeline.bottom", tooltip="Last session"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="timeline.page_down", tooltip="A page down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="timeline.page_up", tooltip="A page up"),
        Binding("enter", "select", "Open", show=False, id="timeline.open", tooltip="Open the session's turns"),
    ]

    highlighted: reactive[int | None] = reactive(None, always_update=True)

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self.rows: list[TimelineRow] = []
        self._lines: dict[tuple[int, int, bool], Strip] = {}
        self.border_title = "Timeline"

    # -- content -------------------------------------------------------------------------
    def show(self, rows: list[TimelineRow], subtitle: str = "") -> None:
        self.rows = rows
        self._lines.clear()
        self.virtual_size = Size(self._width(), len(rows))
        self.border_subtitle = subtitle
        if not rows:
            self.highlighted = None
        elif self.highlighted is None or self.highlighted >= len(rows):
            self.highlighted = 0
        self.refresh()

    def _width(self) -> int:
        return max(20, self.scrollable_content_region.width) if self.size.width else 40

    def on_resize(self) -> None:
        self._lines.clear()
        self.virtual_size = Size(self._width(), len(self.rows))

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self._width()
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        cursor = index == self.highlighted
        key = (index, width, cursor)
        strip = self._lines.get(key)
        if strip is None:
            text = render_row(self.rows[index], width)
            style = self.rich_style + (self.get_component_rich_style("timeline--cursor") if cursor else Style())
            strip = Strip(text.render(self.app.console)).apply_style(style).crop_extend(0, width, style)
            self._lines[key] = strip
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()

    def on_focus(self) -> None:
        self._lines.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._lines.clear()
        self.refresh()

    # -- cursor --------------------------------------------------------------------------
    def watch_highlighted(self, old: int | None, new: int | None) -> None:
        for index in (old, new):
            if index is not None:
                for key in [k for k in self._lines if k[0] == index]:
                    del self._lines[key]
                self.refresh(Region(0, index - self.scroll_offset.y, self.size.width, 1))
        if new is not None:
            self.scroll_to_region(Region(0, new, 1, 1), animate=False, immediate=True)

    def _move(self, delta: int) -> None:
        if self.rows:
            current = self.highlighted if self.highlighted is not None else 0
            self.highlighted = max(0, min(len(self.rows) - 1, current + delta))

    def action_cursor_down(self) -> None:
        self._move(1)

    def action_cursor_up(self) -> None:
        self._move(-1)

    def action_first(self) -> None:
        self._move(-len(self.rows))

    def action_last(self) -> None:
        self._move(len(self.rows))

    def action_page(self, direction: int) -> None:
        self._move(direction * max(1, self.scrollable_content_region.height - 1))

    def action_select(self) -> None:
        if self.highlighted is not None and self.highlighted < len(self.rows):
            session_id = self.rows[self.highlighted].session_id
            if session_id is not None:
                self.post_message(SessionChosen(session_id))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.rows):
            self.highlighted = index
            self.action_select()
