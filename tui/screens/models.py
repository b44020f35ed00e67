"""Choose the models to run: demo models always, real ones when a key or endpoint exists."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, SelectionList

from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text


class ModelPicker(ModalScreen[list[str] | None]):
    DEFAULT_CSS = """
    ModelPicker { align: center middle; }
    ModelPicker > Vertical { width: 80; max-width: 100%; height: auto; max-height: 100%; border: round $accent; background: $surface; padding: 1; }
    ModelPicker SelectionList { height: auto; max-height: 18; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Close", id="close", tooltip="Close without changes")]

    def __init__(self, models: list[tuple[str, str, bool]], chosen: list[str]):
        super().__init__()
        self.models = models
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Models to run side by side (space toggles). Unusable ones say why.")
            yield SelectionList[str](
                *[(safe_text(label), mid, mid in self.chosen) for mid, label, usable in self.models if usable],
                id="models",
            )
            blocked = [label for _, label, usable in self.models if not usable]
            if blocked:
                yield Label(safe_text("\n".join(blocked), "dim"))  # reasons carry data: Text, not markup
            yield Input(placeholder="add another model id, e.g. openai:gpt-4o-mini (enter)", id="extra")
            yield Button("Use these models", id="ok", variant="primary")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from core.providers import check_model_name

        value = event.value.strip()
        problem = check_model_name(value, self.app.settings)  # e.g. foo:bar → the known providers
        if problem is not None:
            self.notify(terminal_safe(problem), severity="warning", markup=False, timeout=10)
            return
        self.query_one(SelectionList).add_option((safe_text(value), value, True))
        event.input.value = ""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(list(self.query_one(SelectionList).selected))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
