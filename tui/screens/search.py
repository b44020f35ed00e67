"""Full-text search over the user's turns (SQLite FTS); Enter opens the session."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from core.model import UserBundle
from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text


class SearchScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    SearchScreen { align: center middle; }
    SearchScreen > Vertical { width: 100; max-width: 100%; height: 30; max-height: 100%; border: round $accent; background: $surface; }
    SearchScreen OptionList { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "app.pop_screen", "Close", id="close_search", tooltip="Close search")]

    def __init__(self, workbench, bundle: UserBundle):
        super().__init__()
        self.workbench = workbench
        self.bundle = bundle

    def compose(self) -> ComposeResult:
        with Vertical():
            name = terminal_safe(self.bundle.user.name or self.bundle.user.id)
            yield Input(placeholder=f"search {name}'s turns", id="q")
            yield OptionList(id="hits")

    def on_input_changed(self, event: Input.Changed) -> None:
        hits = self.query_one(OptionList)
        hits.clear_options()
        if len(event.value.strip()) < 2:
            return
        for h in self.workbench.search_turns(event.value, self.bundle.user.id):
            hits.add_option(
                Option(  # a Text prompt: a str one would be parsed as markup
                    safe_text(f"{h.session_id} #{h.turn_index} {h.role}: {h.snippet}"),
                    id=h.session_id + "|" + str(h.turn_index),
                )
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        from tui.screens.session import SessionScreen

        session_id = event.option.id.split("|")[0]
        self.app.pop_screen()
        self.app.push_screen(SessionScreen(self.bundle, session_id))
