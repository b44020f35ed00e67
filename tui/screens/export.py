"""Ask where to write a CSV export of the chosen runs; the main screen does the writing."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class ExportScreen(ModalScreen[Path | None]):
    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    ExportScreen > Vertical { width: 90; max-width: 100%; height: auto; max-height: 100%; border: round $accent; background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="export.cancel", tooltip="Close without exporting")]

    def __init__(self, n_runs: int, default: Path):
        super().__init__()
        self.n_runs = n_runs
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Export {self.n_runs} run(s) as CSV"
            yield Label(
                "One row per final answer, judge scores in columns (heuristic and human kept apart). "
                "Enter writes the file."
            )
            yield Input(str(self.default), id="export-path")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        self.dismiss(Path(value).expanduser() if value else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
