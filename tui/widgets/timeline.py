"""The session timeline: one line per session, gold evidence starred, filler runs collapsed.

The rows are :func:`core.history.timeline.timeline_rows` (the same rows ``prefscope show``
prints); this widget only lays them out. It owns the real token count of the user's sessions:
loading the tokenizer takes ~0.25 s, so the first paint shows characters / 4 estimates (marked ~)
and :meth:`Timeline.count_tokens` counts in a worker once start-up has settled.

The widget is a ScrollView that renders only the rows on screen (style.md: long lists line by
line): an OptionList measured ~400 ms to show a 2,000-session user because it builds and measures
every option.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from core.history.timeline import TimelineRow, estimated_tokens, timeline_rows, tokens_by_session
from core.model import UserBundle
from core.plan import PromptPlan
from core.text.terminal_safe import terminal_safe

KIND_LABEL = {"life_event": "life", "preference": "pref", "filler": "filler", "task": "task"}


@dataclass
class SessionChosen(Message):
    """Open this session's turns (from the timeline or an attribute's evidence)."""

    session_id: str


def row_label(row: TimelineRow) -> str:
    if row.kind == "filler":
        return f"filler ×{row.count}"
    label = KIND_LABEL.get(row.kind, row.kind)
    if row.kind == "task" and row.title and not row.context_factor:
        label += f" {row.title}"  # task sessions say what they are (CUPID's say it by their factor)
    if row.preference_ids:
        label += " " + ",".join(row.preference_ids)
    if row.expression_type:
        label += f" E{row.expression_type}"
    if row.context_factor:
        label += f" [{row.context_factor}]"
    return label


def retrieved_mark(row: TimelineRow) -> str:
    """``#2 (0.61)``: the rank and similarity of the session's best retrieved turn."""
    if row.retrieved_rank is None:
        return ""
    return f"#{row.retrieved_rank} ({row.retrieved_similarity or 0:.2f})"


def render_row(row: TimelineRow, width: int = 40) -> Text:
    """One line, never wrapped: the label is shortened to leave room for the marks."""
    tokens = ("~" if row.estimated else "") + _tok(row.tokens)
    retrieved = retrieved_mark(row)
    marks = ""
    if retrieved:
        marks += f" ▸{retrieved}"
    if row.attribute_evidence:
        marks += " ◆"
    text = Text(no_wrap=True, overflow="ellipsis")
    if row.session_id is None:
        text.append(f"{'':{11 if width >= 34 else 8}}······ {terminal_safe(row_label(row))} {tokens}", "dim")
        return text
    date_w = 10 if width >= 34 else 7  # 2015-11-06, or 2015-11 on narrow terminals
    room = max(6, width - date_w - 2 - len(tokens) - 1 - len(marks))
    label = terminal_safe(row_label(row))  # ids are data: escape sequences made visible
    label = label if len(label) <= room else label[: room - 1] + "…"
    date = row.date.isoformat() if row.date else ""
    text.append(f"{date[:date_w]:{date_w}} ", "dim")
    text.append("★" if row.evidence else " ", "bold yellow")
    style = {"preference": "cyan", "life_event": "", "task": "green"}.get(row.kind, "")
    text.append(label.ljust(room), style)
    text.append(f" {tokens}", "dim")
    if retrieved:
        text.append(f" ▸{retrieved}", "magenta")
    if row.attribute_evidence:
        text.append(" ◆", "blue")
    return text


def _tok(n: int) -> str:
    return f"{n / 1000:.1f}Kt" if n >= 10_000 else f"{n}t"


@dataclass(frozen=True)
class Case:
    """What the timeline shows rows for."""

    bundle: UserBundle
    query_id: str | None
    expression_type: int | None
    plan: PromptPlan | None
    attribute_sessions: frozenset[str]


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
        self._case: Case | None = None
        self._shown_key: tuple | None = None
        #: user id -> (tokens per session, estimated), once counted
        self._counted: dict[str, tuple[dict[str, int], bool]] = {}
        self._counting: set[str] = set()

    # -- the case shown ------------------------------------------------------------------
    def show_case(
        self,
        bundle: UserBundle,
        *,
        query_id: str | None,
        expression_type: int | None,
        plan: PromptPlan | None,
        attribute_sessions: set[str] | frozenset[str],
    ) -> None:
        """Rows for this user and choice (a plan's history once it is built); nothing is redone
        when none of it changed."""
        self._case = Case(bundle, query_id, expression_type, plan, frozenset(attribute_sessions))
        self._show_case()

    def _show_case(self) -> None:
        case = self._case
        if case is None:
            return
        bundle, plan = case.bundle, case.plan
        counted = self._counted.get(bundle.user.id)
        key = (bundle.user.id, case.query_id, case.expression_type, id(plan), case.attribute_sessions, bool(counted))
        if key == self._shown_key:
            return
        self._shown_key = key
        query = bundle.query(case.query_id) if case.query_id else None
        evidence = set(bundle.gold_evidence(query, case.expression_type)) if query else set()
        tokens, estimated = counted if counted is not None else (estimated_tokens(bundle.sessions), True)
        rows = timeline_rows(
            bundle,
            expression_type=case.expression_type,
            evidence=evidence,
            tokens=tokens,
            estimated=estimated,
            plan=plan,
            attribute_sessions=case.attribute_sessions,
            hide_other_types=True,
        )
        marks = f"★ {sum(1 for r in rows if r.evidence)} evidence"
        retrieved = sum(1 for r in rows if r.retrieved_rank is not None)
        if retrieved:
            marks += f" · ▸ {retrieved} retrieved"
        if any(r.attribute_evidence for r in rows):
            marks += " · ◆ attribute"
        self.show(rows, marks + " · enter opens")

    def count_tokens(self) -> None:
        """Count the shown user's sessions for real (in a worker), unless already counted."""
        case = self._case
        if case is not None and case.bundle.user.id not in self._counted.keys() | self._counting:
            self._counting.add(case.bundle.user.id)
            self._count(case.bundle)

    @work(thread=True, group="count-tokens", exit_on_error=False, description="count tokens per session")
    def _count(self, bundle: UserBundle) -> None:
        counted = tokens_by_session(bundle.sessions)
        self.app.call_from_thread(self._tokens_counted, bundle.user.id, counted)

    def _tokens_counted(self, user_id: str, counted: tuple[dict[str, int], bool]) -> None:
        self._counted[user_id] = counted
        self._counting.discard(user_id)
        self._show_case()

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
