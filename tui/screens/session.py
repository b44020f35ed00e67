"""One session's turns, full text, opened from the timeline with Enter; Esc goes back."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from core.model import EXPRESSION_TYPES, UserBundle
from core.text.clip import clip, clip_note
from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text
from tui.widgets.prompt_tab import ROLE_STYLE


class SessionScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="back", tooltip="Back to the timeline"),
        Binding("f", "full", "Whole turns", id="full_turns", tooltip="Show very long turns whole (slow for MBs)"),
    ]

    def __init__(self, bundle: UserBundle, session_id: str):
        super().__init__()
        self.bundle = bundle
        self.session = bundle.session(session_id)
        #: Very long turns show their start until asked (laying out MBs of text takes seconds).
        self.whole_turns = False

    def compose(self) -> ComposeResult:
        s = self.session
        yield Header()
        # Data is shown as Text, never markup (Textual's markup cannot escape a trailing "[/").
        head = [safe_text(s.id, "bold") + safe_text(f"  {s.date or ''}  kind: {s.kind}")]
        if s.expression_type:
            head.append(Text(f"expression: E{s.expression_type} {EXPRESSION_TYPES[s.expression_type]}"))
        if s.preference_ids:
            prefs = "; ".join(f"{p}: {self.bundle.preference(p).text}" for p in s.preference_ids)
            head.append(safe_text(f"preferences (gold, not shown to models): {prefs}"))
        if s.context_factor:
            head.append(safe_text(f"context factor (gold): {s.context_factor} — {s.contextual_preference or ''}"))
        with VerticalScroll():
            yield Static(Text("\n").join(head), classes="session-head")
            for i, t in enumerate(s.turns):
                who = Text(t.role, ROLE_STYLE.get(t.role, "bold"))
                shown, hidden = (t.content, 0) if self.whole_turns else clip(t.content)
                body = Text.assemble(who, (f" #{i}", "dim"), "\n", safe_text(shown), "\n")
                if hidden:
                    body.append(clip_note(hidden, "f shows whole turns") + "\n", "dim italic")
                yield Static(body)
        yield Footer()

    async def action_full(self) -> None:
        if not self.whole_turns:
            self.whole_turns = True
            await self.recompose()

    def on_mount(self) -> None:
        self.title = "session"
        self.sub_title = terminal_safe(self.session.title or self.session.id)
