"""The Textual application and its factory. Nothing happens at import time."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from core.settings import Settings

METHOD_FALLBACK = [("zero-shot", "zero-shot (RealPref)")]


class PrefscopeApp(App):
    CSS_PATH = "styles.tcss"
    TITLE = "prefscope"
    BINDINGS = [
        Binding("f1", "help", "Help", id="help", tooltip="Keys and a short tour"),
        Binding("f8", "screenshot", "Screenshot", id="screenshot", tooltip="Save an SVG screenshot"),
        Binding("ctrl+q", "quit", "Quit", id="quit", tooltip="Leave prefscope (runs are already saved)"),
    ]

    def __init__(self, settings: Settings, workbench, *, models: list[str] | None = None,
                 initial_user: str | None = None):
        super().__init__()
        self.initial_user = initial_user
        self.settings = settings
        self.workbench = workbench
        self._initial_models = models or list(settings.models)
        #: Things the operator should know at start (first-run import, interrupted runs).
        self.startup_notes: list[str] = []

    def on_mount(self) -> None:
        from tui.screens.main import MainScreen

        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        self.push_screen(MainScreen(self.workbench, methods=self.methods(), models=self._initial_models,
                                    judges=self.judge_names()))
        for note in self.startup_notes:
            self.notify(note, timeout=6)

    # -- what can be chosen --------------------------------------------------------------
    def methods(self) -> list[tuple[str, str]]:
        try:
            from core.methods import METHODS
        except ImportError:
            return METHOD_FALLBACK
        return [(name, f"{name} ({m.family})") for name, m in METHODS.items()]

    def available_models(self) -> list[tuple[str, str, bool]]:
        """(id, label, usable) for the model picker: demo always, real ones when configured."""
        from core.providers import available_models

        return [(m.id, m.label, m.usable) for m in available_models(self.settings)]

    def judge_names(self) -> list[str]:
        try:
            from core.judges import JUDGE_CHOICES
        except ImportError:
            return []
        return list(JUDGE_CHOICES)

    def judges_for(self, spec):
        try:
            from core.judges import judges_for
        except ImportError:
            return []
        return judges_for(spec, self.settings)

    # -- actions -------------------------------------------------------------------------
    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_screenshot(self) -> None:
        path = self.save_screenshot()
        self.notify(f"saved {path}", title="Screenshot")

    def on_unmount(self) -> None:
        if self.workbench is not None:
            self.workbench.close()


def make_app(settings: Settings, workbench, *, models: list[str] | None = None,
             initial_user: str | None = None) -> PrefscopeApp:
    """Build the app around injected settings and services (tests inject their own)."""
    return PrefscopeApp(settings, workbench, models=models, initial_user=initial_user)
