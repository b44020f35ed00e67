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
| `ctrl+r` | run: stream the chosen models side by side, then judge (the estimate line shows tokens and cost first) |
| `esc` | cancel the focused pane's stream (partial answer kept and stored) |
| `ctrl+x` | cancel every running model |
| `ctrl+t` | retry the focused pane |
| `r` | show / hide judge rationales under every pane |
| `ctrl+s` | score the focused answer yourself (stored as human) |
| `ctrl+o` | choose models (demo models always; real ones when keys or endpoints exist) |
| `enter` | timeline: open the session · Runs tab: re-open the run · Judges tab: full rationale and raw output |
| `/` | full-text search over the user's turns |
| `j` `k` `g` `G` | move in the timeline |
| `1` … `7` | show a tab with the focus in it: Prompt, Evidence, Attributes, Relevance, Judges, Runs, Diagnosis (80 columns: the tabs replace the answers) |
| `p` | probe: ask each model the preference's knowledge probes (same context and method), then diagnose each answer (Diagnosis tab, `7`) |
| `d` | Runs tab: the diagnosis funnel of the runs listed (enter: its cases; enter again: open the run) |
| `m` | Runs tab: heatmap of the runs listed, a score over two factors (evidence depth × context …); there `m` next metric · `r` / `c` next row / column factor · `x` swap |
| `J` | Runs tab: judge quality of the runs listed: Krippendorff's α per dimension and every pair of raters (annotators, judges): n, abstentions, exact, ±1, κ, weighted κ, ρ, τ; the highlighted pair's confusion matrix and base rates; there `d` next dimension |
| `tab` / `shift+tab` | next / previous control: timeline, run bar row by row, answers, the shown tab |
| `esc` in a text box | leave it (Runs filter → the grid; seed, turns, sessions → the timeline) |
| `f2` | analysis tabs take the right side (80 columns: tabs ⇄ answers) |
| `f3` | hide / show the timeline |
| `f4` | answers a real model gave, recorded with a benchmark (the start-up note names them; read from ../shared) |
| Judges tab | `h` score the row's answer · `p` pick the better of two answers |
| Attributes tab | `a` accept · `u` uncertain · `x` reject |
| Relevance tab | `y` / `n` your label · `d` gold + BM25 deciders · `D` also embeddings |
| Runs tab | one row per answer: `f` filter (`model:oracle alignment:>=4`) · `s` sort by the column · `g` group · `space` mark · `c` compare 2–4 (word diff) · `enter` on a score: rationale + evidence · `h` histogram · `e` export the marked answers (none marked: the cursor's run) as CSV |
| `prefscope compare A B --tui` | the items B regressed and improved on; `enter` shows an item's two answers side by side with B's changed words marked |
| `prefscope annotate QUEUE` | blind labelling: `1`–`5` score the marked dimension (`tab` / `↑` `↓` move, `s` save, `c` the rubric criteria) · pairs `a` / `b` / `t` · relevance `y` / `n` · attributes `a` / `u` / `r` · `o` note · `x` skip · `enter` next after the reveal · `esc` leave (resumable) |
| `f1` | this help (`esc` or `f1` closes it) |
| `f8` | save an SVG screenshot |
| `ctrl+p` | command palette (every action, plus "Switch user: …", "Method: …", "Query: …", "Context: …") |
| `ctrl+q` | quit |

Keys are remappable in the config: `[keymap] run = "f5"` (binding ids: run, cancel_pane,
cancel_all, retry_pane, toggle_reasons, pick_models, zoom_tabs, search, human_score, tab.prompt …
tab.runs). The footer shows the keys of what has the focus; esc / ctrl+x only while a run streams.

**Tour.** Pick a user, a query, an expression type (E1 explicit … E4 implicit), a context
configuration and a method in the run bar; the line under it shows the prompt tokens × models and
the cost before anything is sent (a prompt over a model's window is refused until you tick
*force*). The timeline shows the user's sessions; ★ marks the gold evidence, ▸ retrieved turns,
◆ attribute evidence. `ctrl+r` streams each model into its own pane and scores it. Demo models
are offline and labelled demo. Every run is saved; the Runs tab re-opens any of them exactly.
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: 34; max-height: 100%; border: round $accent; background: $surface; }
    """
    BINDINGS = [Binding("escape,f1", "app.pop_screen", "Close", id="close_help", tooltip="Close help")]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)
