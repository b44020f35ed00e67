"""The Textual application and its factory. Nothing happens at import time."""

from __future__ import annotations

import json
from collections.abc import Callable

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from core.settings import Settings
from core.text.terminal_safe import terminal_safe
from tui.screens.commands import WorkbenchCommands

UI_STATE = "ui-state.json"  # in the data dir: what the operator chose in the app (the theme)


class PrefscopeApp(App):
    CSS_PATH = "styles.tcss"
    TITLE = "prefscope"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    BINDINGS = [
        Binding("f1", "help", "Help", id="help", tooltip="Keys and a short tour"),
        Binding("f8", "screenshot", "Screenshot", id="screenshot", tooltip="Save an SVG screenshot", show=False),
        Binding("ctrl+q", "quit", "Quit", id="quit", tooltip="Leave prefscope (runs are already saved)", show=False),
    ]

    def __init__(
        self,
        settings: Settings,
        workbench,
        *,
        models: list[str] | None = None,
        initial_user: str | None = None,
        remember_theme: bool = True,
    ):
        super().__init__()
        self.initial_user = initial_user
        self.settings = settings
        self.workbench = workbench
        self._initial_models = models or list(settings.models)
        self._remember_theme = remember_theme
        #: Things the operator should know at start (first-run import, interrupted runs).
        self.startup_notes: list[str] = []
        #: A screen to open over the main screen at start (`prefscope compare --tui`); esc goes back.
        self.opening_screen: Callable[[], Screen] | None = None
        #: False: only the opening screen, nothing under it (`prefscope annotate`: a blind queue's
        #: labeller must not reach views that show models and scores).
        self.main_screen = True

    def get_driver_class(self):
        """Textual's choice, with a terminal driver that leaves when its terminal goes away."""
        from tui.terminal_watch import watched_driver

        return watched_driver(super().get_driver_class())

    def on_mount(self) -> None:
        from tui.screens.main import MainScreen

        theme = self._remembered_theme() or self.settings.theme
        if theme in self.available_themes:
            self.theme = theme
        if self._remember_theme:
            self.theme_changed_signal.subscribe(self, self._save_theme)
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        if self.main_screen:
            judges = self.judge_names()
            self.push_screen(
                MainScreen(
                    self.workbench,
                    methods=self.methods(),
                    models=self._initial_models,
                    judges=judges,
                    default_judge=self.default_judge(judges),
                )
            )
        if self.opening_screen is not None:
            self.push_screen(self.opening_screen())
        for note in self.startup_notes:
            self.notify(terminal_safe(note), timeout=6, markup=False)

    # -- the remembered theme ------------------------------------------------------------
    def _state_path(self):
        from core.settings import data_dir

        return data_dir() / UI_STATE

    def _remembered_theme(self) -> str | None:
        if not self._remember_theme:
            return None
        try:
            return json.loads(self._state_path().read_text()).get("theme")
        except (OSError, ValueError, AttributeError):
            return None

    def _save_theme(self, theme) -> None:
        path = self._state_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"theme": theme.name}))
        except OSError as exc:
            self.notify(f"could not remember the theme in {path}: {exc}", severity="warning")

    # -- what can be chosen --------------------------------------------------------------
    def methods(self) -> list[tuple[str, str]]:
        from core.methods import METHODS

        return [(name, f"{name} ({m.family})") for name, m in METHODS.items()]

    def available_models(self) -> list[tuple[str, str, bool]]:
        """(id, label, usable) for the model picker: demo always, real ones when configured."""
        from core.providers import available_models

        return [(m.id, m.label, True) for m in available_models(self.settings)]  # only usable ones are listed

    def judge_names(self) -> list[str]:
        """Offline judges always; LLM judges (rubric, checklist …) only when ``settings.judge`` names
        a judge model, e.g. ``openai:gpt-4o-mini`` → ``rubric:openai:gpt-4o-mini``."""
        from core.judges import HEURISTIC, JUDGE_CHOICES, LLM_KINDS

        names = [n for n in JUDGE_CHOICES if n not in LLM_KINDS]
        model = self.settings.judge
        if model and model != HEURISTIC and ":" in model and model.split(":", 1)[0] not in LLM_KINDS:
            names += [f"{kind}:{model}" for kind in JUDGE_CHOICES if kind in LLM_KINDS]
        elif model and model.split(":", 1)[0] in LLM_KINDS:
            names.append(model)
        return names

    def default_judge(self, names: list[str]) -> str | None:
        model = self.settings.judge
        for candidate in (model, f"rubric:{model}"):
            if candidate in names:
                return candidate
        return names[0] if names else None

    def judges_for(self, spec):
        from core.judges import judges_for

        return judges_for(spec, self.settings)

    # -- actions -------------------------------------------------------------------------
    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_command_palette(self) -> None:
        """ctrl+p: Textual's palette, whose Enter runs the entry of what is typed (WorkbenchPalette)."""
        from textual.command import CommandPalette

        from tui.screens.commands import WorkbenchPalette

        if self.use_command_palette and not CommandPalette.is_open(self):
            self.push_screen(WorkbenchPalette(id="--command-palette"))

    def action_screenshot(self) -> None:
        """An SVG of the screen in the outputs folder (``outputs_dir``, `prefscope paths`), never
        the current directory; the notification names the whole path."""
        from app.outputs import output_path, stamped

        try:
            target = output_path(self.settings, stamped("prefscope", ".svg"))
            path = self.save_screenshot(filename=target.name, path=str(target.parent))
        except OSError as exc:
            self.notify(terminal_safe(f"could not save the screenshot: {exc}"), severity="error", markup=False)
            return
        self.notify(terminal_safe(f"saved {path}"), title="Screenshot", timeout=8, markup=False)

    def on_unmount(self) -> None:
        if self.workbench is not None:
            self.workbench.close()


def make_app(
    settings: Settings,
    workbench,
    *,
    models: list[str] | None = None,
    initial_user: str | None = None,
    remember_theme: bool = True,
) -> PrefscopeApp:
    """Build the app around injected settings and services (tests inject their own)."""
    return PrefscopeApp(settings, workbench, models=models, initial_user=initial_user, remember_theme=remember_theme)
