"""F1: the keys and a one-minute tour."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# prefscope — keys

| key | what it does |
|---|---|
| `ctrl+r` | run: stream the chosen models side by side, then judge |
| `esc` | cancel the focused pane's stream (partial answer kept and stored) |
| `ctrl+x` | cancel every running model |
| `ctrl+t` | retry the focused pane |
| `r` | show / hide judge rationales |
| `ctrl+o` | choose models (demo models always; real ones when keys or endpoints exist) |
| `enter` | on the timeline: open the session's turns |
| `/` | full-text search over the user's turns |
| `j` `k` `g` `G` | move in the timeline |
| `f2` | zoom the analysis tabs |
| `f8` | save an SVG screenshot |
| `ctrl+p` | command palette |
| `ctrl+q` | quit |

**Tour.** Pick a user, a query, an expression type (E1 explicit … E4 implicit), a context
configuration and a method in the run bar. The timeline shows the user's sessions; ★ marks the
gold evidence for the chosen query. `ctrl+r` builds the exact prompt (Prompt tab), streams each
model into its own pane, and shows judge scores under each answer. Demo models are offline and
labelled DEMO. Every run is saved; the Runs tab lists them.
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; height: 34; border: round $accent; background: $surface; }
    """
    BINDINGS = [Binding("escape,f1", "app.pop_screen", "Close", id="close_help", tooltip="Close help")]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)
