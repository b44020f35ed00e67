"""The main screen: timeline on the left; run bar, response panes and analysis tabs on the right.

A composition: the widgets own their work (the Timeline its rows and token count, the
EstimateLine preparing the plan and showing its cost before anything is sent, the RunView the
live run, its panes and the operator's scores, each analysis tab its own keys). The screen turns
the run bar's choices into a RunSpec and tells each widget what a run, a re-opened run or a newly
chosen user means for it. All domain work lives in core/storage via the Workbench.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Header, Input

from core.model import UserBundle
from core.plan import PromptPlan
from core.run.spec import RunSpec
from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text
from tui.widgets.diagnosis_tab import PROBE_ACTION, PROBE_TOOLTIP, DiagnosisView
from tui.widgets.embed_ahead import EmbedAhead
from tui.widgets.estimate_line import EstimateLine
from tui.widgets.footer import OneRecomposeFooter
from tui.widgets.judges_tab import JudgesTable
from tui.widgets.prompt_tab import plan_text
from tui.widgets.response_pane import ResponsePane
from tui.widgets.results_grid import ResultsGrid
from tui.widgets.run_bar import RunBar, runnable, user_label
from tui.widgets.run_view import RunView
from tui.widgets.tabs import TABS, AnalysisTabs
from tui.widgets.timeline import SessionChosen, Timeline

NARROW = 120  # below this width the panes are shown one at a time behind tabs
STARTUP_QUIET_S = 0.3  # after the first paint, before background work starts (the first key is handled in ~0.1 s)


def _key(key: str, action: str, label: str, tooltip: str, show: bool = True) -> Binding:
    return Binding(key, action, label, id=action, tooltip=tooltip, show=show)


#: One number key per analysis tab; the footer shows them as one group ("1234567 Tabs").
TAB_KEYS = [
    Binding(
        str(n),
        f"show_tab('{name}')",
        label,
        id=f"tab.{name}",
        tooltip=f"Show the {label} tab and focus it",
        group=Binding.Group("Tabs", compact=True),
    )
    for n, (name, label) in enumerate(TABS.items(), start=1)
]
#: Keys that only mean something while a run streams / when an answer pane has the focus.
WHILE_RUNNING = {"cancel_pane", "cancel_all"}
IN_A_PANE = {"retry_pane", "toggle_reasons"}
#: Keys that need a finished run on screen (live or re-opened).
WITH_A_RUN = {"probe"}
#: Keys of the Runs tab that the screen holds (they read the runs the grid lists).
IN_THE_RUNS_TAB = {"judge_quality"}


class MainScreen(Screen):
    """The focus model: where the focus is after each action (tests/tui/test_focus_model.py).

    =========================================  ===========================================
    action                                     focus after it
    =========================================  ===========================================
    start                                      the timeline
    ctrl+r (▶ Run)                             the first answer pane (zoomed tabs give way
                                               to the answers): esc cancels it at once
    a run finishes; a stored run is re-opened  where it was (the grid: open the next row)
    switch user (user picker, palette)         the timeline (on 80 columns the answers
                                               come back in place of the zoomed tabs)
    1 … 7, palette "Show tab"                  that tab's first control (Runs: the grid)
    f2 (zoom the tabs / back)                  zoomed: the active tab's first control;
                                               back: the first pane, else the timeline
    f3 (hide / show the timeline)              shown: the timeline; hidden: the first
                                               pane, else the active tab
    f4 (recorded answers)                      the Runs grid
    p (probe) from inside the tabs             the Diagnosis tab's first control
    esc in any text input                      out of it: the Runs filter to its grid, the
                                               run bar's seed / turns / sessions to the
                                               timeline
    f on the grid                              the Runs filter box (enter, down, esc: back)
    =========================================  ===========================================

    Text inputs (the Runs filter, seed, turns, sessions) take the focus only when asked (f, a
    click, Tab), never on their own. Textual hands the focus of a widget being hidden to its first
    visible sibling: the Runs filter sits in a row of its own, the run bar's inputs come after a
    select. Keys typed in an input are its text (``alignment:>=4``); everywhere else the number
    keys switch tabs.
    """

    BINDINGS = [
        _key("ctrl+r", "run", "Run", "Stream the chosen models side by side, then judge"),
        _key("escape", "cancel_pane", "Cancel pane", "Cancel the focused model's stream (its partial answer is kept)"),
        _key("ctrl+x", "cancel_all", "Cancel all", "Cancel every running model"),
        _key("ctrl+t", "retry_pane", "Retry", "Run the focused model again"),
        _key("r", "toggle_reasons", "Reasons", "Show or hide judge rationales"),
        # shown in the footer by the answer panes and the Diagnosis tab (tui.widgets.diagnosis_tab.probe_binding)
        _key("p", PROBE_ACTION, "Probe", PROBE_TOOLTIP, show=False),
        _key("ctrl+o", "pick_models", "Models", "Choose which models to run"),
        _key(
            "f2",
            "zoom_tabs",
            "Zoom",
            "Give the analysis tabs the whole right side (on narrow terminals: tabs ⇄ answers)",
            show=False,
        ),
        _key("f3", "toggle_timeline", "Timeline", "Hide or show the timeline", show=False),
        _key("slash", "search", "Search", "Search the user's turns (full text)", show=False),
        _key("ctrl+s", "human_score", "Score", "Score the focused answer yourself (stored as human)", show=False),
        _key("f4", "real_answers", "Real answers", "Answers a real model gave (recorded with a benchmark)", show=False),
        _key(
            "J",
            "judge_quality",
            "Judge quality",
            "Runs tab: agreement of the judges and annotators on the runs listed (κ, α, confusion matrices)",
            show=False,  # like the Runs tab's m / d: 80 columns hold no more keys
        ),
        *TAB_KEYS,
    ]

    def __init__(
        self,
        workbench,
        *,
        methods: list[tuple[str, str]],
        models: list[str],
        judges: list[str],
        default_judge: str | None = None,
    ):
        super().__init__()
        self.workbench = workbench
        self._methods = methods
        self._models = models
        self._judges = judges
        self._default_judge = default_judge
        self.bundle: UserBundle | None = None  # the chosen user
        self.plan: PromptPlan | None = None  # prepared for the current choices (or the run re-opened)
        self._checking_writable = False  # ctrl+r's write check is under way (tui.screens.main._check_writable)
        self._pools_for: tuple[str, str] | None = None  # (user, context) the filler picker's default is for

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="body"):
            yield Timeline(id="timeline")
            with Vertical(id="work"):
                yield RunBar(self._methods, self._models, self._judges, default_judge=self._default_judge, id="runbar")
                yield EstimateLine(self.workbench, self.current_spec, id="estimate")
                yield EmbedAhead(self.workbench, id="embed-ahead")
                yield RunView(self.workbench, self.app.judges_for, id="run-view")
                yield AnalysisTabs(self.workbench, id="tabs")
        yield OneRecomposeFooter()

    @property
    def run_view(self) -> RunView:
        return self.query_one(RunView)

    @property
    def tabs(self) -> AnalysisTabs:
        return self.query_one(AnalysisTabs)

    @property
    def estimate(self) -> EstimateLine:
        return self.query_one(EstimateLine)

    def on_mount(self) -> None:
        users = self.workbench.user_choices()
        if users:
            ids = [u.id for u in users]
            first = self.app.initial_user if self.app.initial_user in ids else ids[0]
            bar = self.query_one(RunBar)
            with bar.setting_from_code():
                bar.set_users([(user_label(u), u.id) for u in users], first)
                self.load_user(first)
            # Background work (tokenizer, context building) holds the GIL: let the first keys through.
            self.call_after_refresh(self.estimate.schedule, STARTUP_QUIET_S)
        else:
            self.estimate.update("No users yet: import one with `prefscope import PATH` (see the README for formats).")
        self._apply_width(self.size.width)
        self.query_one(Timeline).focus()
        self.tabs.runs.refresh_runs()
        if self.workbench.page_check is not None:
            self.run_worker(self._pages_checked(), group="page-check")

    async def _pages_checked(self) -> None:
        """A large database's pages are checked on a thread (``storage.page_check``) while the
        screen is up: once they pass, writes are allowed and runs a killed process left are marked;
        damage stops the app with one line, as damage met by any query does."""
        from tui.cli.errors import stop_on_damage

        check = self.workbench.page_check
        if check is None:
            return
        try:
            await asyncio.to_thread(check.wait)
        except sqlite3.DatabaseError as exc:  # storage.db.DatabaseRefused: damaged
            stop_on_damage(self.app, exc)
            return
        told = len(self.workbench.startup_notes)
        self.workbench.pages_checked()
        for note in self.workbench.startup_notes[told:]:
            self.notify(terminal_safe(note), timeout=8, markup=False)

    def on_resize(self, event) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        self.set_class(width < NARROW, "narrow")
        self.query_one(Footer).compact = width < NARROW  # 80 columns hold the focused tab's keys too
        self.run_view.sync_visibility()

    # -- choosing ------------------------------------------------------------------------
    def load_user(self, user_id: str) -> None:
        from core.run.profile import choose

        self.bundle = bundle = self.workbench.user(user_id)
        bar = self.query_one(RunBar)
        bar.set_queries(bundle, bundle.queries[0].id if bundle.queries else None)
        # A benchmark's user starts from its profile; the operator's own changes stay (run_bar).
        benchmark = choose(None, bundle.user.source)
        bar.use_profile(benchmark, self.workbench.settings.judge)
        self._offer_filler_pools(keep=False)
        u = bundle.user
        # The header shows the title as plain text; controls still have to be made visible. It names
        # the profile first: on a narrow screen the run bar has no room for its button.
        profile = f"profile {benchmark.title}  ·  " if benchmark is not None else ""
        self.sub_title = terminal_safe(
            f"{profile}user: {u.name or u.id} ({u.source})  ·  db: {self.workbench.db_path.name}"
        )
        self.tabs.attributes.show_user(bundle)
        self.refresh_timeline()

    def _offer_filler_pools(self, *, keep: bool) -> None:
        """The filler picker's default entry names the pools the current user and context draw
        from (PrefEval's turns: PrefEval's pool), as the CLI's run would; asked again when the
        context changes. ``keep``: the pool the operator picked stays."""
        bar = self.query_one(RunBar)
        context = bar.choices().context
        if self.bundle is None or self._pools_for == (self.bundle.user.id, context):
            return
        self._pools_for = (self.bundle.user.id, context)
        bar.set_filler_pools(self.workbench.filler_pool_choices(self.bundle.user.id, context), keep=keep)

    def refresh_timeline(self) -> None:
        if self.bundle is not None:
            choices = self.query_one(RunBar).choices()
            self.query_one(Timeline).show_case(
                self.bundle,
                query_id=choices.query_id,
                expression_type=choices.expression_type,
                plan=self.plan,
                attribute_sessions=self.tabs.attributes.evidence_sessions,
            )

    async def on_run_bar_user_chosen(self, message: RunBar.UserChosen) -> None:
        if self.bundle is None or message.user_id != self.bundle.user.id:
            await self.switch_user(message.user_id)
            self._focus_timeline()

    async def switch_user(self, user_id: str) -> None:
        """Another user: the run bar starts from their profile (what a re-opened run set is
        dropped), the last user's answers leave the panes and tabs (unless a run still streams
        them), and the Runs filter stops naming the last user."""
        self.plan = None
        if not self.run_view.running:
            await self._forget_shown_run()
        self.load_user(user_id)
        self.tabs.runs.forget_other_users(user_id)
        self.estimate.schedule()

    async def _forget_shown_run(self) -> None:
        await self.run_view.clear()
        self.tabs.judges.clear_items()
        self.tabs.evidence.show([], [])
        self.tabs.relevance.show_run(None, None, None, None)
        self.tabs.diagnosis.clear()
        self.refresh_bindings()  # the pane and probe keys leave the footer

    def on_run_bar_changed(self, _: RunBar.Changed) -> None:
        self.plan = None
        self._offer_filler_pools(keep=True)
        self.refresh_timeline()
        self.estimate.schedule()

    def on_session_chosen(self, message: SessionChosen) -> None:
        from tui.screens.session import SessionScreen

        if self.bundle is not None:
            try:
                self.bundle.session(message.session_id)
            except (KeyError, LookupError):
                self.notify(
                    terminal_safe(f"{message.session_id} is not one of this user's sessions (filler?)"), markup=False
                )
                return
            self.app.push_screen(SessionScreen(self.bundle, message.session_id))

    # -- estimate, then run --------------------------------------------------------------
    def current_spec(self) -> RunSpec | None:
        return self.query_one(RunBar).choices().spec()

    def action_run(self) -> None:
        self.post_message(RunBar.RunRequested())

    async def on_run_bar_run_requested(self, _: RunBar.RunRequested) -> None:
        if self.run_view.running:
            self.notify("A run is still streaming: cancel it (ctrl+x) or wait.", severity="warning")
            return
        spec = self.current_spec()
        if spec is None:
            self.notify("Choose a user, a query and at least one model (ctrl+o) first.", severity="warning")
            return
        recorded = [m.id for m in spec.models if not runnable(m.id)]
        if recorded:  # a backstop: the run bar never arms them (RunBar.apply_spec)
            self.notify(
                terminal_safe(
                    f"{', '.join(recorded)}: recorded answers cannot be generated again; "
                    "choose models that run here (ctrl+o). Nothing was stored."
                ),
                severity="warning",
                markup=False,
            )
            return
        if self._checking_writable:
            self.notify("Checking that the database can store the answers …", severity="warning")
            return
        self._checking_writable = True
        self._check_writable(spec)

    @work(group="write-check", exit_on_error=False, description="the database write check")
    async def _check_writable(self, spec: RunSpec) -> None:
        """Before the first model call, as the CLI does: can the database store the answers? The
        check writes (and may wait for a lock up to write_deadline_s), so it runs on a thread while
        the screen stays responsive; if it fails, one line says why and nothing is sent."""
        try:
            problem = await asyncio.to_thread(self.workbench.write_problem, len(spec.models))
            if problem is not None:
                self.notify(
                    terminal_safe(f"{problem}; no model was called"), severity="error", timeout=15, markup=False
                )
                return
            await self._run_or_prepare(spec)  # from this worker: under way before it ends
        finally:
            self._checking_writable = False

    async def _run_or_prepare(self, spec: RunSpec) -> None:
        plan = self.estimate.plan_for(spec)
        if plan is not None:
            await self._start_run(spec, plan)
        else:
            self.query_one(EmbedAhead).pause()  # the run's prepare embeds what it needs, on every core
            self.estimate.prepare_and_run(spec)

    def on_estimate_line_preparing(self, _: EstimateLine.Preparing) -> None:
        self.query_one(Timeline).count_tokens()  # start-up has settled: count the real tokens too

    async def on_estimate_line_ready(self, message: EstimateLine.Ready) -> None:
        if not message.run:
            self._embed_ahead()
        self.plan = message.prepared.plan
        # Wrapping the whole prompt holds the main thread ~0.1 s: after the estimate line is painted.
        self.call_after_refresh(self._show_prompt, message.prepared)
        self.refresh_timeline()
        spec = self.current_spec()
        if message.run and spec is not None:
            await self._start_run(spec, message.prepared.plan)

    def _show_prompt(self, prepared) -> None:
        if self.plan is prepared.plan:  # not replaced meanwhile (a re-opened run, a newer estimate)
            self.tabs.prompt.show(prepared.prompt_text)

    async def _start_run(self, spec: RunSpec, plan: PromptPlan) -> None:
        from core.run.profile import noted

        self.plan = plan
        self.remove_class("tabs-zoomed")  # the answers come on screen: the first pane takes the focus
        self.query_one(EmbedAhead).pause()  # the streams get both cores (it resumes when the run ends)
        self.tabs.judges.clear_items()
        self.tabs.evidence.show([], [m.id for m in spec.models])
        self.tabs.relevance.show_run(None, None, None, None)  # the last run's labels are not this run's
        self.tabs.diagnosis.clear("The run is streaming: each answer is diagnosed once it is judged.")
        # The stored plan notes where its defaults came from (the user's benchmark's profile).
        await self.run_view.start(spec, noted(plan, self.query_one(RunBar).profile_now()), self.bundle)
        self.refresh_timeline()

    # -- what the run view reports -------------------------------------------------------
    def on_run_view_judged(self, message: RunView.Judged) -> None:
        self.tabs.judges.add_item(*message.item)

    def on_run_view_judgments_shown(self, message: RunView.JudgmentsShown) -> None:
        self.tabs.judges.set_items(message.items)
        if not self.run_view.running and self.tabs.diagnosis.run_id == self.run_view.run_id:
            self._show_diagnosis()  # the operator's own scores come first in the verdict

    def _embed_ahead(self) -> None:
        """Embed this user's history in the background (one core), unless a run streams."""
        if self.bundle is not None and not self.run_view.running:
            self.query_one(EmbedAhead).start(self.bundle.user.id)

    def on_run_view_finished(self, message: RunView.Finished) -> None:
        self.set_timer(1.0, self._embed_ahead)  # once the run's task has ended
        self.refresh_bindings()  # the cancel keys leave the footer
        self.tabs.runs.refresh_runs()
        self._show_run_analyses()
        ok = message.status == "ok"
        self.notify(f"run finished: {message.status}", timeout=4, severity="information" if ok else "warning")

    def _show_run_analyses(self) -> None:
        view = self.run_view
        if view.spec is not None and view.plan is not None and view.bundle is not None:
            self.tabs.evidence.show_run(view.bundle, view.spec, view.plan, dict(view.final_texts))
            self.tabs.relevance.show_run(view.run_id, view.spec.query_id, view.bundle, view.plan)
            self._show_diagnosis()

    def _show_diagnosis(self) -> None:
        view = self.run_view
        demo = [m.id for m in view.spec.models if m.is_demo] if view.spec is not None else []
        self.tabs.diagnosis.show_run(view.run_id, demo)
        self.refresh_bindings()  # the probe key needs a run on screen

    def on_diagnosis_view_diagnosed(self, message: DiagnosisView.Diagnosed) -> None:
        if message.run_id is None or message.run_id == self.run_view.run_id:
            self.run_view.show_diagnoses(message.by_response, probing=message.probing)

    def on_diagnosis_view_probes_stored(self, _: DiagnosisView.ProbesStored) -> None:
        self.tabs.runs.refresh_runs()  # the probe runs are stored runs too

    def on_judges_table_score_requested(self, message: JudgesTable.ScoreRequested) -> None:
        self.run_view.score_answer(message.response_id)

    def on_judges_table_pairwise_requested(self, _: JudgesTable.PairwiseRequested) -> None:
        self.run_view.pick_better()

    # -- re-opening a stored run ---------------------------------------------------------
    async def on_results_grid_chosen(self, message: ResultsGrid.Chosen) -> None:
        await self.reopen_run(message.run_id)

    async def reopen_run(self, run_id: str) -> None:
        if self.run_view.running:
            self.notify("A run is streaming: cancel it (ctrl+x) or wait before re-opening another.", severity="warning")
            return
        run = self.tabs.runs.load_stored(run_id)
        if run is not None:
            await self.show_stored_run(run)

    async def show_stored_run(self, run) -> None:
        """Panes from stored responses, scores from stored judgments, the prompt from stored prompts."""
        self._apply_spec_to_run_bar(run.spec)
        self.plan = run.plan
        await self.run_view.show_stored(run, self.bundle)
        self.tabs.prompt.show(plan_text(run.spec, run.plan))
        created = run.created_at[:16].replace("T", " ")
        line = Text("re-opened run ").append(safe_text(run.id, "bold"))
        line.append(f" · {created} · {run.status} · {run.plan.total_tokens:,} prompt tokens")
        recorded = [m.id for m in run.spec.models if not runnable(m.id)]
        if recorded:  # shown as stored; ctrl+r runs the run bar's models on the same question
            line.append_text(safe_text(f" · recorded ({', '.join(recorded)}), read-only", "cyan"))
            line.append_text(safe_text(f" · ctrl+r runs {', '.join(self.query_one(RunBar).models)}"))
        self.estimate.update(line)
        self.refresh_timeline()
        self._show_run_analyses()

    def _apply_spec_to_run_bar(self, spec: RunSpec) -> None:
        bar = self.query_one(RunBar)
        with bar.setting_from_code():
            if self.bundle is None or self.bundle.user.id != spec.user_id:
                bar.set_value("rb-user", spec.user_id)
                self.load_user(spec.user_id)  # the run's panes replace the last user's next
                self.tabs.runs.forget_other_users(spec.user_id)
            if not bar.apply_spec(spec):
                self.notify(
                    terminal_safe(f"method {spec.method!r} is not offered any more; the run shows as stored"),
                    markup=False,
                )
            self._offer_filler_pools(keep=True)

    # -- actions -------------------------------------------------------------------------
    def action_cancel_pane(self) -> None:
        self.run_view.cancel_focused()

    def action_cancel_all(self) -> None:
        self.run_view.cancel_all()

    def action_retry_pane(self) -> None:
        self.run_view.retry_focused()

    def action_toggle_reasons(self) -> None:
        self.run_view.toggle_reasons()

    def action_human_score(self) -> None:
        self.run_view.score_answer(None)

    def action_probe(self) -> None:
        """Ask the run's models its preference's knowledge probes (a worker), then diagnose again."""
        view = self.run_view
        if view.running:
            self.notify("Probe once the run has finished.", severity="warning")
            return
        if view.run_id is None:
            self.notify("Run the models (ctrl+r) or re-open a stored run (Runs tab) first.")
            return
        if self.tabs.diagnosis.run_id != view.run_id:
            self._show_diagnosis()
        if self.tabs.diagnosis.probe(view.run_id) and not self.has_class("narrow"):
            self.tabs.show_tab("diagnosis")  # the progress shows there (the focus stays where it is)

    def action_zoom_tabs(self) -> None:
        self.toggle_class("tabs-zoomed")
        if self.has_class("tabs-zoomed"):
            self.tabs.focus_tab(self.tabs.active)
        else:
            self.call_after_refresh(self._focus_first_of, self._first_pane, self._timeline)

    def action_toggle_timeline(self) -> None:
        self.toggle_class("no-timeline")
        if self.has_class("no-timeline"):
            self.call_after_refresh(self._settle_focus)
        else:
            self._focus_timeline()

    # -- the focus model (the class docstring) -------------------------------------------
    def on_key(self, event: events.Key) -> None:
        """esc leaves any text input (the Runs tab's own box goes to its grid first)."""
        if event.key == "escape" and isinstance(self.focused, Input):
            event.stop()
            self.call_after_refresh(self._focus_first_of, self._timeline, self._first_pane)

    def _timeline(self) -> Widget | None:
        return self.query_one(Timeline)

    def _first_pane(self) -> Widget | None:
        return next((p for p in self.run_view.panes if p.display), None)

    def _focus_first_of(self, *places: Callable[[], Widget | None]) -> None:
        """Focus the first of ``places`` that is on screen, else the active tab's first control."""
        chain = self.focus_chain
        for place in places:
            widget = place()
            if widget is not None and widget in chain:
                widget.focus()
                return
        self.tabs.focus_tab(self.tabs.active)

    def _settle_focus(self) -> None:
        """A focus left on nothing or on a hidden widget goes to the first pane, else the
        timeline, else the active tab."""
        if self.focused is None or self.focused not in self.focus_chain:
            self._focus_first_of(self._first_pane, self._timeline)

    def _focus_timeline(self) -> None:
        """Switching user shows the user's timeline (on 80 columns in place of the zoomed tabs)."""
        if self.has_class("narrow"):
            self.remove_class("tabs-zoomed")
        self.call_after_refresh(self._focus_first_of, self._timeline, self._first_pane)

    def action_pick_models(self) -> None:
        self.query_one(RunBar).pick_models()

    def action_search(self) -> None:
        from tui.screens.search import SearchScreen

        if self.bundle is not None:
            self.app.push_screen(SearchScreen(self.workbench, self.bundle))

    def action_real_answers(self) -> None:
        self.run_worker(self._real_answers(), group="real-answers", exclusive=True, exit_on_error=False)

    async def _real_answers(self) -> None:
        """Import a benchmark's recorded answers once, then show one user's (PrefEval's Mixtral
        answers at every depth, from the registry: :mod:`app.recorded_cases`)."""
        from app.recorded_cases import load_recorded_answers, recorded_case

        case = recorded_case()
        root = case.locate(self.workbench.settings) if case is not None else None
        if case is None or root is None:
            message = (
                case.missing_message(self.workbench.settings) if case else "no installed benchmark has recorded answers"
            )
            self.notify(message, severity="warning", timeout=12, markup=False)
            return
        self.notify(f"Reading {case.TITLE} …", timeout=3, markup=False)

        def load():
            with self.workbench.connection() as db:
                return load_recorded_answers(db, case, root)

        real = await asyncio.to_thread(load)
        self.workbench.forget_filler_pools()  # the case may have brought its benchmark's pool
        bar = self.query_one(RunBar)
        with bar.setting_from_code():
            bar.set_users([(user_label(u), u.id) for u in self.workbench.user_choices()], real.user_id)
        if self.bundle is None or self.bundle.user.id != real.user_id:
            await self.switch_user(real.user_id)  # here: its UserChosen would move the focus off the grid
        self.tabs.runs.refresh_runs()
        self.tabs.runs.query_one("#runs-filter").value = f"user:{real.user_id}"
        self.show_tab("runs")
        self.notify(terminal_safe(case.shown_message(real.user_id, real.runs)), timeout=15, markup=False)

    def action_judge_quality(self) -> None:
        """Agreement between every rater (annotators, judges) of the runs the Runs tab lists."""
        from tui.screens.judge_quality import JudgeQualityScreen

        run_ids, _ = self.tabs.runs.listed()
        if not run_ids:
            self.notify("No runs listed to compare raters on (clear the filter, or run something first).")
            return
        self.app.push_screen(JudgeQualityScreen(self.workbench, run_ids, self.tabs.runs.grid.filter_text))

    def show_tab(self, name: str) -> None:
        """Show an analysis tab with the focus on its first control (narrow: the tabs replace the answers)."""
        if self.has_class("narrow"):
            self.add_class("tabs-zoomed")
        self.tabs.focus_tab(name)

    def action_show_tab(self, name: str) -> None:
        self.show_tab(name)

    # -- which keys the footer offers ----------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide keys that mean nothing in the current state, so the footer fits 80 columns with
        the focused tab's own keys."""
        if action in WHILE_RUNNING:
            return self.run_view.running
        if action in IN_A_PANE:
            return self._pane_has_focus()
        if action in WITH_A_RUN:
            return self.run_view.run_id is not None and not self.run_view.running
        if action in IN_THE_RUNS_TAB:
            focused = self.focused
            return focused is not None and self.tabs.runs in focused.ancestors_with_self
        return True

    def _pane_has_focus(self) -> bool:
        focused = self.focused
        return focused is not None and any(isinstance(n, ResponsePane) for n in focused.ancestors_with_self)
