"""The Runs tab: the results grid of every stored answer, with a filter box above it.

The grid (:mod:`tui.widgets.results_grid`) holds the keys; typing in the filter box narrows its
rows (``model:oracle alignment:>=4``, or plain words); ``enter``, ``down`` or ``esc`` there goes
to the grid, ``f`` on the grid back to the box (the box takes the focus only so: see the focus
model in :mod:`tui.screens.main`); ``d`` opens the diagnosis funnel of the answers listed
(:mod:`tui.screens.funnel`; knowledge-probe runs left out: they are diagnosed with the run they
probe), ``m`` a heatmap of their runs' scores over two factors (:mod:`tui.screens.heatmap`).
Re-opening a run is the screen's (it resets the run bar, the panes and the tabs), so the grid
posts a message and :meth:`RunsView.load_stored` reads the run back for the screen.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Input

from core.text.terminal_safe import terminal_safe
from tui.widgets.results_grid import ResultsGrid
from tui.widgets.worker_errors import flush_or_notify

FILTER_PAUSE_S = 0.15
FILTER_HINT = (
    "filter: words or column:value (model:oracle alignment:>=4) · on the grid: enter open · "
    "s sort · h histogram · e export · d funnel · f back here"
)


def _names_another_user(term: str, user_id: str) -> bool:
    """``user:maya`` names a user other than ``user_id`` (the filter matches ``user:`` values as
    case-insensitive parts of the id: :func:`tui.widgets.results_grid_rows.row_filter`)."""
    key, sep, wanted = term.lower().partition(":")
    return bool(sep) and key == "user" and wanted not in user_id.lower()


def _metric_name(kind: str, dimension: str) -> str:
    """A score column as ``prefscope report --metric`` names it."""
    return "accuracy" if (kind, dimension) == ("choice", "accuracy") else f"{kind}:{dimension}"


class RunsView(Vertical):
    # A compact input: one line, no border, focused or not (a bordered one-line box shows only
    # its borders). It sits in a row of its own, so it is not the grid's sibling: Textual hands
    # the focus of a widget being hidden to a visible sibling, and the box would take the grid's.
    DEFAULT_CSS = """
    RunsView > #runs-filter-row { height: 1; }
    RunsView #runs-filter { padding: 0 1; background: $boost; }
    RunsView #runs-filter:focus { background: $accent 25%; }
    RunsView > ResultsGrid { height: 1fr; }
    """

    BINDINGS = [
        Binding(
            "d",
            "funnel",
            "Funnel",
            id="runs.funnel",
            tooltip="Diagnosis funnel of the runs listed: per model × expression × context × method",
            show=False,  # 80 columns hold no more keys: the filter box's hint names it
        ),
        Binding(
            "m",
            "heatmap",
            "Heatmap",
            id="runs.heatmap",
            tooltip="Heatmap of the runs listed: a score over two factors (evidence depth × context …)",
            show=False,
        ),
    ]

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id)
        self.workbench = workbench
        self._filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="runs-filter-row"):
            yield Input(placeholder=FILTER_HINT, id="runs-filter", compact=True)
        yield ResultsGrid(self.workbench, id="runs-grid")

    @property
    def grid(self) -> ResultsGrid:
        return self.query_one(ResultsGrid)

    def on_input_changed(self, event: Input.Changed) -> None:
        """Refilled once typing pauses: a refill of thousands of rows takes longer than a keystroke."""
        event.stop()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_PAUSE_S, lambda: self._apply_filter(event.value))

    def _apply_filter(self, text: str) -> None:
        self._filter_timer = None
        if text != self.grid.filter_text:
            self.grid.filter(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._apply_filter(event.value)
        self.grid.focus()

    def on_results_grid_filter_requested(self, event) -> None:
        event.stop()
        self.query_one(Input).focus()

    def on_key(self, event) -> None:
        if event.key in ("down", "escape") and isinstance(self.app.focused, Input):
            event.stop()
            self.grid.focus()

    def forget_other_users(self, user_id: str) -> None:
        """Drop the filter's ``user:`` terms that do not match ``user_id`` (another user was chosen:
        a filter naming the last one would hide the new one's runs)."""
        box = self.query_one("#runs-filter", Input)
        terms = box.value.split()
        kept = [t for t in terms if not _names_another_user(t, user_id)]
        if kept != terms:
            box.value = " ".join(kept)
            self._apply_filter(box.value)

    def listed(self) -> tuple[list[str], list[str]]:
        """The runs and answers the filter keeps (listed or past the grid's last row), in row
        order, without knowledge-probe runs (they are diagnosed with the run they probe)."""
        from core.run.probes import LABEL_PREFIX

        probe = LABEL_PREFIX.rstrip(":")
        rows = [r for r in self.grid.matching if not (r.batch == probe or r.batch.startswith(LABEL_PREFIX))]
        return list(dict.fromkeys(r.run_id for r in rows)), [r.response_id for r in rows]

    def action_funnel(self) -> None:
        from tui.screens.funnel import FunnelScreen

        run_ids, response_ids = self.listed()
        if not run_ids:
            self.notify("No runs listed to diagnose (clear the filter, or run something first).")
            return

        def closed(run_id: str | None) -> None:
            if run_id:  # re-opened by the screen, as enter on the grid does
                self.grid.post_message(ResultsGrid.Chosen(run_id))

        screen = FunnelScreen(self.workbench, run_ids, self.grid.filter_text, response_ids=response_ids)
        self.app.push_screen(screen, closed)

    def action_heatmap(self) -> None:
        """The heatmap of the runs listed: of their listed models' answers when the filter left
        some models out; the metrics the listed answers were scored on are offered after the
        runs' default ones."""
        from tui.screens.heatmap import HeatmapScreen

        run_ids, response_ids = self.listed()
        if not run_ids:
            self.notify("No runs listed to draw (clear the filter, or run something first).")
            return
        listed, runs = set(response_ids), set(run_ids)
        answers = [r for r in self.grid.data.rows if r.run_id in runs]
        shown = [r for r in answers if r.response_id in listed]
        models = list(dict.fromkeys(r.model for r in shown))
        narrowed = set(models) != {r.model for r in answers}
        note = ""
        if len(shown) < sum(1 for r in answers if r.model in models):
            note = "counts every answer of these runs' models: the filter's other conditions pick runs, not answers"
        judged = dict.fromkeys(
            _metric_name(c.kind, c.dimension)
            for r in shown
            for c, v in r.scores.items()
            if v is not None and c.kind != "pairwise" and c.dimension != "*"
        )
        screen = HeatmapScreen(
            self.workbench,
            run_ids,
            self.grid.filter_text,
            models=models if narrowed else None,
            metrics=sorted(judged),
            note=note,
        )
        self.app.push_screen(screen)

    def load_stored(self, run_id: str):
        """The stored run (``storage.runs.StoredRun``) to re-open, or None (the operator is told
        why) when it is unknown or its user or query is no longer in the database."""
        from app.records import UnknownRun

        flush_or_notify(self, self.workbench)
        try:
            run = self.workbench.load_run(run_id)
        except UnknownRun as exc:
            self.notify(terminal_safe(str(exc)), severity="error", markup=False)
            return None
        try:
            self.workbench.user(run.spec.user_id).query(run.spec.query_id)
        except (KeyError, LookupError):
            self.notify(
                terminal_safe(
                    f"run {run_id}: user {run.spec.user_id!r} or query {run.spec.query_id!r} is no longer "
                    "in the database (re-import the user to re-open it)"
                ),
                markup=False,
                severity="error",
                timeout=8,
            )
            return None
        return run

    def refresh_runs(self) -> None:
        """Every stored answer, newest run first (the recorder's pending writes included), read on
        a thread: 100,000 answers take seconds to read, and the screen answers keys meanwhile."""
        flush_or_notify(self, self.workbench)
        self.run_worker(self._read_runs, thread=True, exclusive=True, group="runs-grid")

    def _read_runs(self) -> None:
        from textual.worker import get_current_worker

        data, short_ids = self.workbench.runs_grid()
        if not get_current_worker().is_cancelled:  # a newer refresh has the newer rows
            self.app.call_from_thread(self.grid.show, data, short_ids)
