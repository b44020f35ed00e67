"""Command-palette commands (ctrl+p) for every workbench action: run, cancel, retry, choose the
query / expression / context / method / judge, switch user, pick models, show a tab (and focus it),
re-open the latest run, the funnel and the heatmap of the runs listed,
export, score, search, screenshot.

The provider only lists verbs and calls the main screen's (and its widgets') actions and setters.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

from core.text.terminal_safe import terminal_safe


def _highlight(matcher: Matcher, title: str) -> Content:
    """``matcher.highlight`` parses its candidate as markup; titles carry data (query texts), so the
    matched characters are styled on plain Content instead."""
    content = Content(title)
    score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets if score else ():
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def _commands(screen) -> list[tuple[str, Callable[[], object], str]]:
    """(title, callback, help) for everything the palette offers on the main screen."""
    from tui.widgets.run_bar import CONTEXTS, RunBar, query_label
    from tui.widgets.tabs import TABS

    out: list[tuple[str, Callable[[], object], str]] = [
        ("Run: stream the chosen models", screen.action_run, "ctrl+r"),
        ("Cancel all running models", screen.action_cancel_all, "ctrl+x"),
        ("Cancel the focused pane", screen.action_cancel_pane, "esc"),
        ("Retry the focused pane", screen.action_retry_pane, "ctrl+t"),
        ("Choose models…", screen.action_pick_models, "ctrl+o"),
        ("Show / hide judge rationales", screen.action_toggle_reasons, "r"),
        ("Score the focused answer yourself…", screen.action_human_score, "stored as a human judgment"),
        ("Pick the better of two answers…", screen.run_view.pick_better, "stored as a human judgment"),
        ("Search the user's turns…", screen.action_search, "/"),
        ("Zoom the analysis tabs", screen.action_zoom_tabs, "f2"),
        ("Hide / show the timeline", screen.action_toggle_timeline, "f3"),
        ("Re-open the latest stored run", partial(_reopen_latest, screen), "Runs tab, enter"),
        ("Real answers: answers a real model gave, recorded with a benchmark", screen.action_real_answers, "f4"),
        ("Export the marked answers' runs as CSV…", screen.tabs.runs.grid.action_export, "Runs tab, e"),
        ("Probe: ask the run's models its knowledge probes, then diagnose", screen.action_probe, "p"),
        ("Diagnosis funnel of the runs listed", screen.tabs.runs.action_funnel, "Runs tab, d"),
        ("Heatmap of the runs listed: a score over two factors", screen.tabs.runs.action_heatmap, "Runs tab, m"),
        ("Force: send even past a model's context window (toggle)", partial(_toggle_force, screen), "run bar"),
    ]
    for n, (key, label) in enumerate(TABS.items(), start=1):
        out.append((f"Show tab: {label}", partial(screen.show_tab, key), f"key {n}"))
    bar = screen.query_one(RunBar)
    out.append(("Switch user…", bar.pick_user, "run bar: the user picker"))
    if screen.bundle is not None:
        for q in screen.bundle.queries:
            out.append(
                (
                    terminal_safe(f"Query: {query_label(screen.bundle, q.id, 70)}"),
                    partial(bar.set_value, "rb-query", q.id),
                    "run bar",
                )
            )
        from core.model import EXPRESSION_TYPES

        for t in screen.bundle.expression_types():
            out.append(
                (
                    f"Expression: E{t} {EXPRESSION_TYPES.get(t, 'untyped')}",
                    partial(bar.set_value, "rb-expression", t),
                    "run bar",
                )
            )
    for key, label in CONTEXTS:
        out.append((f"Context: {label}", partial(bar.set_value, "rb-context", key), "run bar"))
    for key, label in screen._methods:
        out.append((f"Method: {label}", partial(bar.set_value, "rb-method", key), "run bar"))
    for name in screen._judges:
        out.append((f"Judge: {name}", partial(bar.set_value, "rb-judge", name), "run bar"))
    for label, pool_id in bar.filler_labels:
        out.append(
            (
                terminal_safe(f"Filler pool: {label.removeprefix('filler: ')}"),
                partial(bar.set_value, "rb-filler", pool_id),
                "run bar",
            )
        )
    return out


def _users(screen, query: str) -> list[tuple[str, Callable[[], object], str]]:
    """The "Switch user: …" commands for the users matching ``query``: a few, found through the run
    bar's index of its user list (not every user scored at every key press)."""
    from tui.widgets.run_bar import RunBar

    bar = screen.query_one(RunBar)
    index = bar.user_index
    return [(index.titles[i], partial(bar.set_value, "rb-user", index.ids[i]), "run bar") for i in index.search(query)]


def _reopen_latest(screen) -> None:
    runs = screen.workbench.list_runs(limit=1)
    if not runs:
        screen.notify("No stored runs yet.")
        return
    screen.run_worker(screen.reopen_run(runs[0].id), group="reopen", exclusive=True, exit_on_error=False)


def _toggle_force(screen) -> None:
    from textual.widgets import Checkbox

    box = screen.query_one("#rb-force", Checkbox)
    box.value = not box.value


class WorkbenchCommands(Provider):
    def _main(self):
        from tui.screens.main import MainScreen

        screen = self.screen
        return screen if isinstance(screen, MainScreen) else None

    async def discover(self) -> Hits:
        screen = self._main()
        if screen is None:
            return
        for title, callback, help_text in _commands(screen):
            if title.startswith(
                ("Query:", "Context:", "Method:", "Expression:", "Judge:", "Show tab:", "Switch user:", "Filler pool:")
            ):
                continue  # too many to list before typing; they show up when searched
            yield DiscoveryHit(Content(title), callback, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        screen = self._main()
        if screen is None:
            return
        matcher = self.matcher(query)
        for title, callback, help_text in [*_commands(screen), *_users(screen, query)]:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, _highlight(matcher, title), callback, text=title, help=help_text)
