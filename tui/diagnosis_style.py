"""How a diagnosis label and step look, wherever one is shown (the CLI's lines, tables and PNG,
the TUI's panes, Diagnosis tab and funnel): one colour per label, one mark per step status."""

from __future__ import annotations

from rich.text import Text

from core.analysis.diagnosis import (
    APPLIED,
    KNOWN_NOT_APPLIED,
    MISAPPLIED,
    NOT_IN_CONTEXT,
    NOT_KNOWN,
    NOT_RETRIEVED,
    UNDETERMINED,
    Diagnosis,
)

#: Losses warm, misapplied (an irrelevant preference dragged in) magenta, applied green, undetermined grey (hex, so matplotlib reads them too).
COLOURS = {
    NOT_IN_CONTEXT: "#c0392b",
    NOT_RETRIEVED: "#e67e22",
    NOT_KNOWN: "#d4ac0d",
    KNOWN_NOT_APPLIED: "#8e44ad",
    MISAPPLIED: "#d81b60",
    APPLIED: "#27ae60",
    UNDETERMINED: "#95a5a6",
}
MARK = {"pass": "✓", "fail": "✗", "unknown": "?", "n/a": "–"}


def label_text(diagnosis: Diagnosis) -> Text:
    """The label in its colour (labels are ours, never data: no escaping needed)."""
    return Text(diagnosis.label, style=f"bold {COLOURS[diagnosis.category]}")
