"""One session's turns, full text, opened from the timeline with Enter; Esc goes back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from core.model import EXPRESSION_TYPES, UserBundle


class SessionScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="back", tooltip="Back to the timeline")]

    def __init__(self, bundle: UserBundle, session_id: str):
        super().__init__()
        self.bundle = bundle
        self.session = bundle.session(session_id)

    def compose(self) -> ComposeResult:
        s = self.session
        yield Header()
        head = [f"[b]{s.id}[/b]  {s.date or ''}  kind: {s.kind}"]
        if s.expression_type:
            head.append(f"expression: E{s.expression_type} {EXPRESSION_TYPES[s.expression_type]}")
        if s.preference_ids:
            prefs = "; ".join(f"{p}: {self.bundle.preference(p).text}" for p in s.preference_ids)
            head.append(f"preferences (gold, not shown to models): {prefs}")
        if s.context_factor:
            head.append(f"context factor (gold): {s.context_factor} — {s.contextual_preference or ''}")
        with VerticalScroll():
            yield Static("\n".join(head), classes="session-head", markup=True)
            for i, t in enumerate(s.turns):
                who = "[b cyan]user[/]" if t.role == "user" else "[b green]assistant[/]"
                yield Static(f"{who} [dim]#{i}[/]\n{_escape(t.content)}\n", markup=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = "session"
        self.sub_title = self.session.title or self.session.id


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
