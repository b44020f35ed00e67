"""Command-palette commands (ctrl+p) for every workbench action: run, cancel, retry, choose the
query / expression / context / method / judge, switch user, pick models, show a tab (and focus it),
re-open the latest run, the funnel and the heatmap of the runs listed,
export, score, search, screenshot.

The provider only lists verbs and calls the main screen's (and its widgets') actions and setters.
:class:`WorkbenchPalette` is Textual's palette with Enter acting on what is typed: an Enter
pressed before the search for the typed text has finished waits for it, then runs that search's
highlighted entry, never the one a shorter filter (or none) had highlighted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from functools import partial

from textual import on
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import FuzzySearch, Matcher
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from core.text.terminal_safe import terminal_safe

Command = tuple[str, Callable[[], object], str]


class BoundedFuzzySearch(FuzzySearch):
    """Textual's fuzzy search scores every way the query's letters can sit in order in a title:
    in a long title (a query's text) with common letters that is thousands of ways per key press.
    Where there could be more than :data:`EXACT` ways, this one scores only the :data:`LIKELIEST`
    likeliest to score best: each letter right after the one before, else at a word's start, else
    leftmost. Everywhere else (short titles, a query typed whole) the score is Textual's own."""

    #: Up to this many ways (an upper bound from letter counts), every one is scored, as Textual does.
    EXACT = 64
    #: Past it, this many are scored: the best is almost always among the first few.
    LIKELIEST = 16

    def _match(self, query: str, candidate: str) -> Iterator[tuple[float, Sequence[int]]]:
        if not self.case_sensitive:
            query, candidate = query.lower(), candidate.lower()
        latest = _latest_positions(query, candidate)  # str.rfind: no Python loop over the title
        if latest is None:  # the letters are not in order: no match
            yield 0.0, ()
            return
        if query in candidate or math.prod(candidate.count(c) for c in query) <= self.EXACT:
            yield from super()._match(query, candidate)
            return
        yield from self._likeliest(query, candidate, latest)

    def _likeliest(self, query: str, candidate: str, latest: list[int]) -> Iterator[tuple[float, Sequence[int]]]:
        firsts = self.get_first_letters(candidate)
        where = {c: _positions(c, candidate) for c in set(query)}
        last_letter = len(query) - 1
        scored = 0

        def walk(i: int, offsets: list[int]) -> Iterator[tuple[float, Sequence[int]]]:
            nonlocal scored
            before = offsets[-1] if offsets else -1
            # Up to latest[i] only: the letters after it always still fit, so no path dead-ends.
            options = sorted(
                (p for p in where[query[i]] if before < p <= latest[i]),
                key=lambda p: (p != before + 1, p not in firsts, p),
            )
            for p in options:
                if scored >= self.LIKELIEST:
                    return
                if i == last_letter:
                    scored += 1
                    yield self.score(candidate, [*offsets, p]), [*offsets, p]
                else:
                    yield from walk(i + 1, [*offsets, p])

        yield from walk(0, [])


def _positions(letter: str, text: str) -> list[int]:
    out = []
    at = text.find(letter)
    while at >= 0:
        out.append(at)
        at = text.find(letter, at + 1)
    return out


def _latest_positions(query: str, candidate: str) -> list[int] | None:
    """For each letter of ``query``, the last place in ``candidate`` it can take with every later
    letter still after it; None when the letters do not occur in order."""
    latest = [0] * len(query)
    bound = len(candidate)
    for i in range(len(query) - 1, -1, -1):
        bound = candidate.rfind(query[i], 0, bound)
        if bound < 0:
            return None
        latest[i] = bound
    return latest


def _highlight(matcher: Matcher, title: str) -> Content:
    """``matcher.highlight`` parses its candidate as markup; titles carry data (query texts), so the
    matched characters are styled on plain Content instead."""
    content = Content(title)
    score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets if score else ():
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def _commands(screen) -> list[Command]:
    """(title, callback, help) for everything the palette offers on the main screen."""
    from tui.widgets.run_bar import CONTEXTS, RunBar, query_label
    from tui.widgets.tabs import TABS

    out: list[Command] = [
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


def _users(screen, query: str) -> list[Command]:
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
    """The workbench's commands. One palette opening is one provider: the command list is built
    once per opening (the main screen cannot change under the modal palette), and the fuzzy
    scores are kept across key presses."""

    def __init__(self, screen, match_style=None):
        super().__init__(screen, match_style)
        self._listed: list[Command] | None = None
        self._fuzzy = BoundedFuzzySearch()

    def _main(self):
        from tui.screens.main import MainScreen

        screen = self.screen
        return screen if isinstance(screen, MainScreen) else None

    def _commands(self, screen) -> list[Command]:
        if self._listed is None:
            self._listed = _commands(screen)
        return self._listed

    async def discover(self) -> Hits:
        screen = self._main()
        if screen is None:
            return
        for title, callback, help_text in self._commands(screen):
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
        matcher.fuzzy_search = self._fuzzy
        for title, callback, help_text in [*self._commands(screen), *_users(screen, query)]:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, _highlight(matcher, title), callback, text=title, help=help_text)


class WorkbenchPalette(CommandPalette):
    """Textual's command palette, with Enter acting on the list of what is typed.

    Textual runs the highlighted entry of the list on screen, which until the search for the text
    just typed has finished is an older filter's (the unfiltered list's first entry: Run). Here an
    Enter pressed while that search runs waits for it, then runs its highlighted entry (nothing
    when nothing matches). A key typed after that Enter cancels it: it was meant for another filter.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._enter_waiting = False

    def _searching(self) -> bool:
        return any(
            w.node is self and w.group == self._GATHER_COMMANDS_GROUP and not w.is_finished and not w.is_cancelled
            for w in self.app.workers
        )

    @on(Input.Submitted)
    def _enter_after_search(self, event: Input.Submitted) -> None:
        if self._searching():
            event.prevent_default()  # not yet: the list on screen is an older filter's
            event.stop()
            self._enter_waiting = True

    @on(Input.Changed)
    def _typed_after_enter(self, _: Input.Changed) -> None:
        self._enter_waiting = False

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if (
            self._enter_waiting
            and event.worker.group == self._GATHER_COMMANDS_GROUP
            and event.state == WorkerState.SUCCESS
            and not self._searching()
        ):
            self._enter_waiting = False
            self._select_or_command()
