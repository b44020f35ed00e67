"""The distribution of one score column over the rows the grid shows, as a text histogram.

Scores with few distinct values (a 1–5 rubric, 0/1 accuracy) get one bar per value; others are
cut into equal-width bins. Answers without a score are counted apart, not as zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.safe_text import safe_text

MAX_DISTINCT = 12  # up to this many distinct values: one bar each
BINS = 10
BAR_WIDTH = 40
EIGHTHS = " ▏▎▍▌▋▊▉"


@dataclass(frozen=True)
class Bucket:
    label: str
    low: float
    high: float  # inclusive for a single value (low == high) and for the last bin
    count: int


def buckets(values: list[float | None]) -> tuple[list[Bucket], int]:
    """(buckets in ascending order, how many values were missing)."""
    present = sorted(float(v) for v in values if v is not None)
    missing = len(values) - len(present)
    if not present:
        return [], missing
    distinct = sorted(set(present))
    if len(distinct) <= MAX_DISTINCT:
        return [Bucket(f"{v:g}", v, v, present.count(v)) for v in distinct], missing
    lo, hi = distinct[0], distinct[-1]
    width = (hi - lo) / BINS
    counts = [0] * BINS
    for v in present:
        counts[min(BINS - 1, int((v - lo) / width))] += 1
    out = [
        Bucket(f"{lo + i * width:.3g}–{lo + (i + 1) * width:.3g}", lo + i * width, lo + (i + 1) * width, n)
        for i, n in enumerate(counts)
    ]
    return out, missing


def bar(count: int, most: int, width: int = BAR_WIDTH) -> str:
    """A bar in eighths of a block, so small differences still show."""
    eighths = round(width * 8 * count / most) if most else 0
    if count and not eighths:
        eighths = 1
    return "█" * (eighths // 8) + (EIGHTHS[eighths % 8] if eighths % 8 else "")


def histogram_text(values: list[float | None]) -> Text:
    rows, missing = buckets(values)
    present = [float(v) for v in values if v is not None]
    out = Text(no_wrap=True, overflow="ellipsis")
    if not rows:
        out.append("no scores in the rows shown")
    else:
        most = max(b.count for b in rows)
        label_w = max(len(b.label) for b in rows)
        for b in rows:
            out.append(f"{b.label:>{label_w}} ", "bold")
            out.append(f"{bar(b.count, most):<{BAR_WIDTH}}", "cyan")
            out.append(f" {b.count:>5}  {100 * b.count / len(present):5.1f}%\n")
        mean = sum(present) / len(present)
        out.append(f"\nn {len(present)} · mean {mean:.2f} · min {min(present):g} · max {max(present):g}")
    if missing:
        out.append(f" · {missing} without a score")
    return out


class HistogramScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HistogramScreen { align: center middle; }
    HistogramScreen > VerticalScroll { width: 82; max-width: 95%; height: auto; max-height: 90%;
                                       border: round $accent; background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape,q,h", "app.pop_screen", "Close", id="close_histogram", tooltip="Close")]

    def __init__(self, label: str, values: list[float | None], filter_text: str = ""):
        super().__init__()
        self.label = label
        self.values = values
        self.filter_text = filter_text

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = safe_text(f"{self.label}: {len(self.values)} answers")
            if self.filter_text.strip():
                box.border_subtitle = safe_text(f"filter: {self.filter_text.strip()}")
            yield Static(histogram_text(self.values), id="histogram")
