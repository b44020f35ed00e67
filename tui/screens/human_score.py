"""The operator's own scores: one answer on the judges' scales, or the better of two answers.

Both modals only collect choices and dismiss with them; the main screen stores them (human = 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select

from tui.safe_text import safe_text

#: The RealPref rubric, offered when no judge has scored the answer yet.
DEFAULT_SCALES = [("rubric", "awareness", 1.0, 5.0), ("rubric", "alignment", 1.0, 5.0), ("rubric", "quality", 1.0, 5.0)]


@dataclass(frozen=True)
class Scale:
    kind: str
    dimension: str
    lo: float
    hi: float

    @property
    def key(self) -> str:
        return f"{self.kind}-{self.dimension}".replace(":", "-").replace("*", "all")

    def values(self) -> list[float]:
        if self.hi - self.lo <= 10 and float(self.lo).is_integer() and float(self.hi).is_integer():
            return [float(v) for v in range(int(self.lo), int(self.hi) + 1)]
        return [self.lo, (self.lo + self.hi) / 2, self.hi]


def scales_from(judgments) -> list[Scale]:
    """The scales the (non-human) judges used for an answer, else the RealPref rubric."""
    seen: dict[tuple[str, str], Scale] = {}
    for j in judgments:
        if j.human or j.scale_min is None or j.scale_max is None or j.dimension == "*":
            continue
        seen.setdefault((j.kind, j.dimension), Scale(j.kind, j.dimension, j.scale_min, j.scale_max))
    return list(seen.values()) or [Scale(*s) for s in DEFAULT_SCALES]


class HumanScoreScreen(ModalScreen[list[tuple[Scale, float]] | None]):
    DEFAULT_CSS = """
    HumanScoreScreen { align: center middle; }
    HumanScoreScreen > Vertical { width: 70; max-width: 100%; height: auto; max-height: 100%; border: round $accent; background: $surface; padding: 1 2; }
    HumanScoreScreen Horizontal { height: auto; margin-bottom: 1; }
    HumanScoreScreen Horizontal > Label { width: 24; }
    HumanScoreScreen Select { width: 1fr; }
    HumanScoreScreen #buttons Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="human.cancel", tooltip="Close without saving")]

    def __init__(self, model: str, scales: list[Scale]):
        super().__init__()
        self.model = model
        self.scales = scales

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = safe_text(f"Your scores for {self.model}")  # model ids are data, not markup
            yield Label("Same scales as the judges. Leave a dimension blank to skip it. Stored as human.")
            for s in self.scales:
                with Horizontal():
                    yield Label(safe_text(f"{s.kind} / {s.dimension} ({s.lo:g}–{s.hi:g})"))
                    yield Select([(f"{v:g}", v) for v in s.values()], prompt="—", id=f"hs-{s.key}", compact=True)
            with Horizontal(id="buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
            return
        out = []
        for s in self.scales:
            value = self.query_one(f"#hs-{s.key}", Select).value
            if value is not Select.NULL:
                out.append((s, float(value)))
        self.dismiss(out)

    def action_cancel(self) -> None:
        self.dismiss(None)


class PairwiseScreen(ModalScreen[tuple[int, int, float] | None]):
    """Pick two answers (by pane) and which is better; dismisses with (a, b, score of a: 1 / 0.5 / 0)."""

    DEFAULT_CSS = """
    PairwiseScreen { align: center middle; }
    PairwiseScreen > Vertical { width: 76; max-width: 100%; height: auto; max-height: 100%; border: round $accent; background: $surface; padding: 1 2; }
    PairwiseScreen Select { margin-bottom: 1; }
    PairwiseScreen Horizontal { height: auto; }
    PairwiseScreen Horizontal Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="pairwise.cancel", tooltip="Close without saving")]

    def __init__(self, answers: list[str]):
        super().__init__()
        self.answers = answers

    def compose(self) -> ComposeResult:
        options = [(safe_text(label), i) for i, label in enumerate(self.answers)]
        with Vertical() as box:
            box.border_title = "Which answer follows the user's preference better?"
            yield Select(options, value=0, id="pw-a", allow_blank=False)
            yield Select(options, value=min(1, len(options) - 1), id="pw-b", allow_blank=False)
            with Horizontal():
                yield Button("A is better", id="a", variant="primary")
                yield Button("Tie", id="tie")
                yield Button("B is better", id="b", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
            return
        a, b = self.query_one("#pw-a", Select).value, self.query_one("#pw-b", Select).value
        if a == b:
            self.notify("Choose two different answers.", severity="warning")
            return
        self.dismiss((a, b, {"a": 1.0, "tie": 0.5, "b": 0.0}[event.button.id]))

    def action_cancel(self) -> None:
        self.dismiss(None)
