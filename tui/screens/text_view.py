"""A modal that shows one long text (a judgment's rationale and raw output, a comparison)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from core.judges.aggregate import source_of
from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text


class TextView(ModalScreen[None]):
    DEFAULT_CSS = """
    TextView { align: center middle; }
    TextView > VerticalScroll { width: 90%; max-width: 130; height: 85%; border: round $accent;
                                background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Close", id="close_text", tooltip="Close")]

    def __init__(self, title: str, markdown: str):
        super().__init__()
        self._title = title
        self._markdown = markdown

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = safe_text(self._title)  # a str title would be parsed as markup
            scroll.border_subtitle = "esc closes"
            yield Markdown(terminal_safe(self._markdown))  # data inside: escape sequences shown


def judgment_markdown(model: str, j) -> str:
    score = "—" if j.score is None else f"{j.score:g}"
    scale = f" on {j.scale_min:g}–{j.scale_max:g}" if j.scale_min is not None and j.scale_max is not None else ""
    source = {
        "heuristic": "heuristic (not an LLM)",
        "parser": "parser (no model call)",
        "llm": "LLM judge",
        "recorded": "recorded with the answer (not run here)",
    }.get(source_of(j), "human")
    lines = [
        f"**answer of** `{model}` · **judge** `{j.judge_model}` ({source}) · **prompt** `{j.prompt_version}`"
        + (f" · **temperature** {j.temperature:g}" if j.temperature is not None else ""),
        f"\n**{j.kind} / {j.dimension}: {score}**{scale} · parsed: {'yes' if j.parse_ok else 'NO'}",
    ]
    if j.error:
        lines.append(f"\n> **error:** {j.error}")
    lines.append(f"\n### rationale\n\n{j.rationale or '—'}")
    fence = "~~~~" if "```" in (j.raw or "") else "```"
    lines.append(f"\n### raw judge output\n\n{fence}text\n{j.raw or '(none)'}\n{fence}")
    return "\n".join(lines)
