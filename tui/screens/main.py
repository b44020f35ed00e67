"""The main screen: timeline on the left; run bar, response panes and analysis tabs on the right.

It turns the operator's choices into a RunSpec, prepares the plan in a worker thread (context
building and retrieval may be slow) so the token/cost estimate and the context-window check are
shown before anything is sent, runs the engine in an async worker, and routes the engine's events
to the panes and tabs. Re-opening stored runs and the operator's annotations live in the two
mixins (``main_history``, ``main_annotate``). All domain work lives in core/storage via the
Workbench.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Checkbox, Footer, Header, Input, Select, Static, Tab, Tabs
from textual.worker import Worker, WorkerState

from core.providers.base import ModelSpec
from core.run.spec import JudgeScored, ResponseFinished, ResponseStarted, RunFinished, RunSpec, RunStarted
from tui.bridge import EngineBridge
from tui.messages import EngineEvent, RunRequested, SessionChosen, TokensPending
from tui.quiet_gc import quiet_gc
from tui.screens.main_annotate import AnnotateMixin
from tui.screens.main_history import HistoryMixin
from tui.widgets.prompt_tab import plan_text
from tui.widgets.response_pane import ResponsePane
from tui.widgets.run_bar import RunBar
from tui.widgets.tabs import AnalysisTabs
from tui.widgets.timeline import Timeline, rows_for_user

NARROW = 120  # below this width the panes are shown one at a time behind tabs
ESTIMATE_DELAY_S = 0.35  # wait for the operator to stop changing choices before preparing
STARTUP_QUIET_S = 0.6  # after the first paint, before background work starts


@dataclass
class Prepared:
    spec: RunSpec
    plan: object  # core.plan.PromptPlan
    estimate: object  # tui.workbench.Estimate
    prompt_md: object  # rich Text


def plan_key(spec: RunSpec) -> str:
    """What makes two specs need the same plan (judges and labels do not change the prompt)."""
    return spec.model_dump_json(exclude={"judges", "label"})


class MainScreen(HistoryMixin, AnnotateMixin, Screen):
    BINDINGS = [
        Binding("ctrl+r", "run", "Run", id="run", tooltip="Stream the chosen models side by side, then judge"),
        Binding(
            "escape",
            "cancel_pane",
            "Cancel pane",
            id="cancel_pane",
            tooltip="Cancel the focused model's stream (its partial answer is kept)",
        ),
        Binding("ctrl+x", "cancel_all", "Cancel all", id="cancel_all", tooltip="Cancel every running model"),
        Binding("ctrl+t", "retry_pane", "Retry", id="retry_pane", tooltip="Run the focused model again"),
        Binding("r", "toggle_reasons", "Reasons", id="toggle_reasons", tooltip="Show or hide judge rationales"),
        Binding("ctrl+o", "pick_models", "Models", id="pick_models", tooltip="Choose which models to run"),
        Binding(
            "f2",
            "zoom_tabs",
            "Tabs",
            id="zoom_tabs",
            tooltip="Give the analysis tabs the whole right side (on narrow terminals: tabs ⇄ answers)",
        ),
        Binding(
            "f3", "toggle_timeline", "Timeline", id="toggle_timeline", show=False, tooltip="Hide or show the timeline"
        ),
        Binding("slash", "search", "Search", id="search", tooltip="Search the user's turns (full text)"),
        Binding(
            "ctrl+s",
            "human_score",
            "Score",
            id="human_score",
            show=False,
            tooltip="Score the focused answer yourself (stored as human)",
        ),
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
        self.bundle = None
        self.plan = None
        self._plan_key: str | None = None
        self.spec: RunSpec | None = None
        self.handle = None
        self.panes: list[ResponsePane] = []
        self._pane_by_response: dict[str, ResponsePane] = {}
        #: response id -> model id, for every response of the run shown (live or stored)
        self.response_models: dict[str, str] = {}
        self.final_texts: dict[str, str] = {}
        self.bridge = EngineBridge(self, also=self._record)
        self.run_id: str | None = None
        self._estimate_timer = None
        self._run_after_prepare = False
        self._applying = False  # setting the run bar from code: do not re-prepare
        self.attribute_sessions: set[str] = set()
        self._token_cache: dict[str, dict[str, int]] = {}
        self._timeline_key = None

    def _record(self, event) -> None:
        if self.workbench is not None:
            self.workbench.recorder().record(event)

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="body"):
            yield Timeline(id="timeline")
            with Vertical(id="work"):
                yield RunBar(self._methods, self._models, self._judges, default_judge=self._default_judge, id="runbar")
                yield Static("", id="estimate")
                yield Tabs(id="pane-tabs")
                yield Horizontal(id="panes")
                yield AnalysisTabs(id="tabs")
        yield Footer()

    def on_mount(self) -> None:
        users = self.workbench.users()
        bar = self.query_one(RunBar)
        if users:
            ids = [u.id for u in users]
            first = self.app.initial_user if self.app.initial_user in ids else ids[0]
            self._applying = True
            bar.set_users([(u.name or u.id, u.id) for u in users], first)
            self.load_user(first)
            self.call_after_refresh(self._done_applying)
        else:
            self.set_estimate("No users yet: import one with `prefscope import PATH` (see the README for formats).")
        self._apply_width(self.size.width)
        self.query_one(Timeline).focus()
        self.refresh_runs()

    def _done_applying(self) -> None:
        self._applying = False
        # Background work (tokenizer, context building) holds the GIL: let the first keys through.
        self.schedule_estimate(STARTUP_QUIET_S)

    def on_resize(self, event) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        self.set_class(width < NARROW, "narrow")
        self._sync_pane_visibility()

    def set_estimate(self, text: str) -> None:
        self.query_one("#estimate", Static).update(text)

    # -- choosing ------------------------------------------------------------------------
    def load_user(self, user_id: str) -> None:
        self.bundle = self.workbench.user(user_id)
        bar = self.query_one(RunBar)
        first = self.bundle.queries[0].id if self.bundle.queries else None
        bar.set_queries(self.bundle, first)
        u = self.bundle.user
        self.sub_title = f"user: {u.name or u.id} ({u.source})  ·  db: {self.workbench.db_path.name}"
        self.attribute_sessions = self._attribute_sessions()
        self.refresh_timeline()
        self.refresh_attributes()

    def _attribute_sessions(self) -> set[str]:
        refs = [r for a in self.bundle.attributes for r in a.evidence_turns]
        stored = self.workbench.latest_extraction(self.bundle.user.id)
        if stored is not None:
            refs += [r for x in stored.extraction.attributes for r in x.attribute.evidence_turns]
        return {r.split("#")[0] for r in refs}

    def refresh_timeline(self) -> None:
        if self.bundle is None:
            return
        choices = self.query_one(RunBar).choices()
        key = (
            self.bundle.user.id,
            choices.query_id,
            choices.expression_type,
            id(self.plan),
            frozenset(self.attribute_sessions),
        )
        if key == self._timeline_key:
            return  # nothing the timeline shows has changed
        self._timeline_key = key
        query = self.bundle.query(choices.query_id) if choices.query_id else None
        evidence = set(self.bundle.gold_evidence(query, choices.expression_type)) if query else set()
        counted = self._session_tokens()
        tokens = dict(counted or self._estimated_tokens())
        retrieved: dict[str, str] = {}
        order = None
        if self.plan is not None:
            for r in self.plan.retrieved:
                retrieved.setdefault(r.session_id, f"#{r.rank} ({r.similarity:.2f})")
            order = [c.session_id for c in self.plan.context] or None
            tokens.update({c.session_id: c.tokens for c in self.plan.context})
        rows = rows_for_user(
            self.bundle,
            expression_type=choices.expression_type,
            evidence=evidence,
            tokens=tokens,
            retrieved=retrieved,
            attribute_sessions=self.attribute_sessions,
            order=order,
            estimated=counted is None and self.plan is None,
        )
        marks = f"★ {sum(1 for r in rows if r.evidence)} evidence"
        if retrieved:
            marks += f" · ▸ {len(retrieved)} retrieved"
        if any(r.attribute_evidence for r in rows):
            marks += " · ◆ attribute"
        self.query_one(Timeline).show(rows, marks + " · enter opens")

    def _session_tokens(self) -> dict[str, int] | None:
        """Real tokens per session of the current user, or None while they are being counted.

        Loading the tokenizer takes ~0.25 s, so the first paint shows estimates (marked ~); the
        count runs in a worker with the token/cost estimate, after start-up has settled."""
        return self._token_cache.get(self.bundle.user.id)

    def _estimated_tokens(self) -> dict[str, int]:
        return {s.id: sum(len(t.content) for t in s.turns) // 4 for s in self.bundle.sessions}

    @work(thread=True, group="count-tokens", exit_on_error=False, description="count tokens per session")
    def _count_tokens(self, uid: str, bundle) -> None:
        from core.history.tokens import count_tokens

        counts = {s.id: sum(count_tokens(t.content) for t in s.turns) for s in bundle.sessions}
        self.app.call_from_thread(self._tokens_counted, uid, counts)

    def _tokens_counted(self, uid: str, counts: dict[str, int]) -> None:
        self._token_cache[uid] = counts
        self._timeline_key = None
        self.refresh_timeline()

    @on(Select.Changed, "#rb-user")
    def _user_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL and (self.bundle is None or event.value != self.bundle.user.id):
            self.plan = None
            self.load_user(event.value)
            self.schedule_estimate()

    @on(Select.Changed, "#rb-query")
    @on(Select.Changed, "#rb-expression")
    @on(Select.Changed, "#rb-context")
    @on(Select.Changed, "#rb-method")
    @on(Checkbox.Changed, "#rb-force")
    @on(Input.Changed, "#rb-seed")
    def _choice_changed(self, event) -> None:
        if self._applying:
            return
        self.plan = None
        self._plan_key = None
        self.refresh_timeline()
        self.schedule_estimate()

    def on_session_chosen(self, message: SessionChosen) -> None:
        from tui.screens.session import SessionScreen

        if self.bundle is not None:
            try:
                self.bundle.session(message.session_id)
            except (KeyError, LookupError):
                self.notify(f"{message.session_id} is not one of this user's sessions (filler?)")
                return
            self.app.push_screen(SessionScreen(self.bundle, message.session_id))

    # -- estimate, then run --------------------------------------------------------------
    def current_spec(self) -> RunSpec | None:
        choices = self.query_one(RunBar).choices()
        if not (choices.user_id and choices.query_id and choices.models):
            return None
        return RunSpec(
            user_id=choices.user_id,
            query_id=choices.query_id,
            expression_type=choices.expression_type,
            context=choices.context,
            seed=choices.seed,
            method=choices.method,
            models=[ModelSpec(id=m) for m in choices.models],
            judges=[choices.judge] if choices.judge else [],
            force=choices.force,
        )

    def schedule_estimate(self, delay: float = ESTIMATE_DELAY_S) -> None:
        if self._estimate_timer is not None:
            self._estimate_timer.stop()
        self._estimate_timer = self.set_timer(delay, self._estimate_now)

    def _estimate_now(self) -> None:
        self._estimate_timer = None
        spec = self.current_spec()
        if spec is None or self.bundle is None:
            return
        if self.bundle.user.id not in self._token_cache:
            self._count_tokens(self.bundle.user.id, self.bundle)
        self.set_estimate("estimating tokens and cost …")
        self._prepare(spec, self.workbench.user(spec.user_id), self.workbench.filler_pools())

    def action_run(self) -> None:
        self.post_message(RunRequested())

    def on_button_pressed(self, event) -> None:
        if event.button.id == "rb-run":
            self.action_run()
        elif event.button.id == "rb-models":
            self.action_pick_models()

    async def on_run_requested(self, _: RunRequested) -> None:
        if self.handle is not None and self.handle.running():
            self.notify("A run is still streaming: cancel it (ctrl+x) or wait.", severity="warning")
            return
        spec = self.current_spec()
        if spec is None:
            self.notify("Choose a user, a query and at least one model (ctrl+o) first.", severity="warning")
            return
        if self.plan is not None and self._plan_key == plan_key(spec):
            await self._start_run(spec, self.plan)
            return
        self._run_after_prepare = True
        self.set_estimate("preparing the prompt …")
        self._prepare(spec, self.workbench.user(spec.user_id), self.workbench.filler_pools())

    @work(thread=True, exclusive=True, group="prepare", exit_on_error=False, description="build context and prompt")
    def _prepare(self, spec: RunSpec, bundle, pools) -> Prepared:
        from core.history.tokens import count_tokens

        plan = self.workbench.prepare(spec, bundle, pools)
        counts = [[count_tokens(m.content) for m in step.messages] for step in plan.steps]
        return Prepared(spec, plan, self.workbench.estimate(spec, plan), plan_text(spec, plan, counts))

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "prepare":
            if event.state == WorkerState.SUCCESS:
                await self._prepared(worker.result)
            elif event.state == WorkerState.ERROR:
                self._run_after_prepare = False
                self._prepare_failed(worker.error)
        elif worker.group in ("run", "evidence", "relevance") and event.state == WorkerState.ERROR:
            self.notify(
                f"{worker.description} failed: {type(worker.error).__name__}: {worker.error}",
                severity="error",
                timeout=10,
            )

    async def _prepared(self, prepared: Prepared) -> None:
        current = self.current_spec()
        if current is None or plan_key(current) != plan_key(prepared.spec):
            return  # the choices changed meanwhile; a newer estimate is on its way
        self.plan = prepared.plan
        self._plan_key = plan_key(prepared.spec)
        text = prepared.estimate.text()
        for note in prepared.plan.notes:
            text += f"  [yellow]⚠ {note}[/]"
        self.set_estimate(f"{text}  ·  ctrl+r runs")
        self.query_one(AnalysisTabs).prompt.show(prepared.prompt_md)
        self.refresh_timeline()
        if self._run_after_prepare:
            self._run_after_prepare = False
            await self._start_run(current, prepared.plan)

    def _prepare_failed(self, error: BaseException) -> None:
        from core.history.configs import ContextError, ContextWindowExceeded

        self.plan = None
        if isinstance(error, ContextWindowExceeded):
            self.set_estimate(f"[red]⚠ too long: {error}[/]  (tick [b]force[/] to send anyway)")
        elif isinstance(error, ContextError):
            self.set_estimate(f"[red]⚠ {error}[/]")
        else:
            self.set_estimate(f"[red]cannot prepare: {type(error).__name__}: {error}[/]")
            self.notify(str(error), title="Cannot prepare the prompt", severity="error", timeout=8)

    async def _start_run(self, spec: RunSpec, plan) -> None:
        self.spec = spec
        self.plan = plan
        self.shown_run = None
        self.run_id = None
        self.final_texts = {}
        self.response_models = {}
        await self._build_panes(spec)
        if self.panes:  # the operator now watches the answers: esc cancels this one, tab moves on
            self.call_after_refresh(self.panes[0].focus)
        tabs = self.query_one(AnalysisTabs)
        tabs.judges.clear_items()
        tabs.evidence.show([], [m.id for m in spec.models])
        self.refresh_timeline()
        self._run_engine(spec, plan)

    @work(exclusive=True, group="run", exit_on_error=False, description="the run")
    async def _run_engine(self, spec: RunSpec, plan) -> None:
        engine = self.workbench.engine(self.bridge, judges=self.app.judges_for(spec))
        with quiet_gc():
            await engine.run(spec, plan, self.bundle, on_handle=self._set_handle)

    def _set_handle(self, handle) -> None:
        self.handle = handle

    async def _build_panes(self, spec: RunSpec) -> None:
        container = self.query_one("#panes", Horizontal)
        await container.remove_children()
        tabs = self.query_one("#pane-tabs", Tabs)
        await tabs.clear()
        self.panes = []
        self._pane_by_response.clear()
        for i, m in enumerate(spec.models):
            pane = ResponsePane(i, m.id, is_demo=m.is_demo, id=f"pane-{i}")
            self.panes.append(pane)
            await tabs.add_tab(Tab(pane.label, id=f"ptab-{i}"))
        await container.mount_all(self.panes)
        self._sync_pane_visibility()

    def _sync_pane_visibility(self) -> None:
        narrow = self.has_class("narrow")
        active = self.query_one("#pane-tabs", Tabs).active
        for i, pane in enumerate(self.panes):
            pane.display = (not narrow) or active in (None, "", f"ptab-{i}")

    @on(Tabs.TabActivated, "#pane-tabs")
    def _pane_tab(self, event: Tabs.TabActivated) -> None:
        self._sync_pane_visibility()

    # -- engine events -------------------------------------------------------------------
    async def on_tokens_pending(self, _: TokensPending) -> None:
        for response_id, text in self.bridge.drain().items():
            pane = self._pane_by_response.get(response_id)
            if pane is not None:
                await pane.write(text)
            else:  # its ResponseStarted is still queued: that handler takes the text
                self.bridge.put_back(response_id, text)

    async def on_engine_event(self, message: EngineEvent) -> None:
        event = message.event
        tabs = self.query_one(AnalysisTabs)
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
        elif isinstance(event, ResponseStarted):
            pane = self.panes[event.slot]
            self._pane_by_response[event.response_id] = pane
            self.response_models[event.response_id] = event.model.id
            await pane.begin(event.step, event.is_final_step, event.response_id)
            await pane.write(self.bridge.take(event.response_id))
        elif isinstance(event, ResponseFinished):
            pane = self._pane_by_response.get(event.response_id)
            if pane is not None:
                await pane.write(self.bridge.take(event.response_id))
                await pane.finish(event)
                if event.is_final_step:
                    self.final_texts[pane.model_id] = event.text
        elif isinstance(event, JudgeScored):
            pane = self._pane_by_response.get(event.response_id)
            if pane is not None:
                pane.add_judgment(event.judgment)
            tabs.judges.add_item(
                self.response_models.get(event.response_id or "", ""), event.response_id, event.judgment
            )
        elif isinstance(event, RunFinished):
            self.refresh_runs()
            self.refresh_evidence()
            self.refresh_relevance()
            severity = "information" if event.status == "ok" else "warning"
            self.notify(f"run finished: {event.status}", timeout=4, severity=severity)

    # -- pane actions --------------------------------------------------------------------
    def focused_pane(self) -> ResponsePane | None:
        node = self.focused
        while node is not None:
            if isinstance(node, ResponsePane):
                return node
            node = node.parent
        if self.has_class("narrow"):
            return next((p for p in self.panes if p.display), None)
        return None

    def action_cancel_pane(self) -> None:
        if self.handle is None or not self.handle.running():
            return
        pane = self.focused_pane()
        slot = pane.slot if pane is not None and pane in self.panes else None
        if slot is None:
            running = self.handle.running()
            slot = running[0] if len(running) == 1 else None
        if slot is None:
            self.notify("Focus a pane (click or tab) to cancel it, or ctrl+x to cancel all.")
            return
        self.handle.cancel(slot)

    def action_cancel_all(self) -> None:
        if self.handle is not None:
            self.handle.cancel()

    def action_retry_pane(self) -> None:
        pane = self.focused_pane()
        if pane is None or self.spec is None or self.plan is None:
            self.notify("Focus a finished pane to retry it.")
            return
        if self.handle is not None and self.handle.running():
            self.notify("Wait for the run to finish before retrying a pane.", severity="warning")
            return
        spec = self.spec.model_copy(update={"models": [self.spec.models[pane.slot]]})
        self._retry(spec, pane.slot)

    @work(exclusive=True, group="run", exit_on_error=False, description="retry one model")
    async def _retry(self, spec: RunSpec, slot: int) -> None:
        pane = self.panes[slot]
        await pane.reset()
        original = self.panes
        self.panes = [pane]  # the single-model run's slot 0 is this pane
        try:
            engine = self.workbench.engine(self.bridge, judges=self.app.judges_for(spec))
            with quiet_gc():
                await engine.run(spec, self.plan, self.bundle, on_handle=self._set_handle)
        finally:
            self.panes = original

    def action_toggle_reasons(self) -> None:
        for pane in self.panes:
            pane.toggle_rationales()

    def action_zoom_tabs(self) -> None:
        self.toggle_class("tabs-zoomed")

    def action_toggle_timeline(self) -> None:
        self.toggle_class("no-timeline")

    def action_pick_models(self) -> None:
        from tui.screens.models import ModelPicker

        bar = self.query_one(RunBar)

        def chosen(models: list[str] | None) -> None:
            if models:
                bar.set_models(models)
                self.plan = None
                self.schedule_estimate()

        self.app.push_screen(ModelPicker(self.app.available_models(), bar.models), chosen)

    def action_search(self) -> None:
        from tui.screens.search import SearchScreen

        if self.bundle is not None:
            self.app.push_screen(SearchScreen(self.workbench, self.bundle))

    def show_tab(self, name: str) -> None:
        self.remove_class("tabs-zoomed") if name == "" else None
        self.query_one(AnalysisTabs).show_tab(name)
