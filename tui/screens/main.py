"""The main screen: timeline on the left; run bar, response panes and analysis tabs on the right.

It turns the operator's choices into a RunSpec, prepares the plan in a worker thread (context
building and retrieval may be slow), runs the engine in an async worker, and routes the engine's
events to the panes and tabs. All domain work lives in core/storage via the Workbench.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Select, Static, TabbedContent, TabPane, Tabs, Tab
from textual.worker import Worker, WorkerState

from core.providers.base import ModelSpec
from core.run import JudgeScored, ResponseFinished, ResponseStarted, RunFinished, RunSpec, RunStarted
from tui.bridge import EngineBridge
from tui.messages import EngineEvent, RunRequested, SessionChosen, TokensPending
from tui.widgets.response_pane import ResponsePane
from tui.widgets.run_bar import RunBar
from tui.widgets.timeline import Timeline, rows_for_user
from tui.widgets.tabs import AnalysisTabs

NARROW = 120  # below this width the panes are shown one at a time behind tabs


class MainScreen(Screen):
    BINDINGS = [
        Binding("ctrl+r", "run", "Run", id="run", tooltip="Stream the chosen models side by side"),
        Binding("escape", "cancel_pane", "Cancel pane", id="cancel_pane",
                tooltip="Cancel the focused model's stream (its partial answer is kept)"),
        Binding("ctrl+x", "cancel_all", "Cancel all", id="cancel_all", tooltip="Cancel every running model"),
        Binding("ctrl+t", "retry_pane", "Retry pane", id="retry_pane", tooltip="Run the focused model again"),
        Binding("r", "toggle_reasons", "Reasons", id="toggle_reasons", tooltip="Show or hide judge rationales"),
        Binding("ctrl+m", "pick_models", "Models", id="pick_models", tooltip="Choose which models to run"),
        Binding("f2", "zoom_tabs", "Zoom tabs", id="zoom_tabs", tooltip="Give the analysis tabs the whole right side"),
        Binding("slash", "search", "Search", id="search", tooltip="Search the user's turns (full text)"),
    ]

    def __init__(self, workbench, *, methods: list[tuple[str, str]], models: list[str], judges: list[str]):
        super().__init__()
        self.workbench = workbench
        self._methods = methods
        self._models = models
        self._judges = judges
        self.bundle = None
        self.plan = None
        self.spec: RunSpec | None = None
        self.handle = None
        self.panes: list[ResponsePane] = []
        self._pane_by_response: dict[str, ResponsePane] = {}
        self.bridge = EngineBridge(self, also=workbench.recorder().record if workbench else None)
        self.run_id: str | None = None

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="body"):
            yield Timeline(id="timeline")
            with Vertical(id="work"):
                yield RunBar(self._methods, self._models, self._judges, id="runbar")
                yield Static("", id="estimate")
                yield Tabs(id="pane-tabs")
                yield Horizontal(id="panes")
                yield AnalysisTabs(self.workbench, id="tabs")
        yield Footer()

    def on_mount(self) -> None:
        users = self.workbench.users()
        self.title = "prefscope"
        bar = self.query_one(RunBar)
        if users:
            ids = [u.id for u in users]
            first = self.app.initial_user if self.app.initial_user in ids else ids[0]
            bar.set_users([(u.name or u.id, u.id) for u in users], first)
            self.load_user(first)
        else:
            self.query_one("#estimate", Static).update(
                "No users yet: import one with `prefscope import PATH` (see the README for formats).")
        self._apply_width(self.size.width)
        self.query_one(Timeline).focus()

    def on_resize(self, event) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        self.set_class(width < NARROW, "narrow")
        self._sync_pane_visibility()

    # -- choosing ------------------------------------------------------------------------
    def load_user(self, user_id: str) -> None:
        self.bundle = self.workbench.user(user_id)
        bar = self.query_one(RunBar)
        first = self.bundle.queries[0].id if self.bundle.queries else None
        bar.set_queries(self.bundle, first)
        self.sub_title = f"user: {self.bundle.user.name or self.bundle.user.id} ({self.bundle.user.source})  ·  db: {self.workbench.db_path}"
        self.refresh_timeline()

    def refresh_timeline(self) -> None:
        if self.bundle is None:
            return
        from core.tokens import count_tokens

        choices = self.query_one(RunBar).choices()
        query = self.bundle.query(choices.query_id) if choices.query_id else None
        evidence = set(self.bundle.gold_evidence(query, choices.expression_type)) if query else set()
        tokens = {s.id: sum(count_tokens(t.content) for t in s.turns) for s in self.bundle.sessions}
        retrieved: dict[str, str] = {}
        order = None
        if self.plan is not None:
            for r in self.plan.retrieved:
                retrieved.setdefault(r.session_id, f"#{r.rank} ({r.similarity:.2f})")
            order = self.plan_order
            tokens.update(self.plan_tokens)
        rows = rows_for_user(self.bundle, expression_type=choices.expression_type, evidence=evidence,
                             tokens=tokens, retrieved=retrieved, order=order)
        n_ev = sum(1 for r in rows if r.evidence)
        self.query_one(Timeline).show(rows, f"★ {n_ev} evidence · enter opens")

    plan_order: list[str] | None = None
    plan_tokens: dict[str, int] = {}

    @on(Select.Changed, "#rb-user")
    def _user_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.BLANK and (self.bundle is None or event.value != self.bundle.user.id):
            self.plan = None
            self.load_user(event.value)

    @on(Select.Changed, "#rb-query")
    @on(Select.Changed, "#rb-expression")
    @on(Select.Changed, "#rb-context")
    def _choice_changed(self, event: Select.Changed) -> None:
        self.plan = None
        self.plan_order = None
        self.refresh_timeline()

    def on_session_chosen(self, message: SessionChosen) -> None:
        from tui.screens.session import SessionScreen

        self.app.push_screen(SessionScreen(self.bundle, message.session_id))

    # -- running -------------------------------------------------------------------------
    def action_run(self) -> None:
        self.post_message(RunRequested())

    def on_button_pressed(self, event) -> None:
        if event.button.id == "rb-run":
            self.action_run()
        elif event.button.id == "rb-models":
            self.action_pick_models()

    def on_run_requested(self, _: RunRequested) -> None:
        if self.handle is not None and self.handle.running():
            self.notify("A run is still streaming: cancel it (ctrl+x) or wait.", severity="warning")
            return
        choices = self.query_one(RunBar).choices()
        if not (choices.user_id and choices.query_id):
            self.notify("Choose a user and a query first.", severity="warning")
            return
        if not choices.models:
            self.notify("Choose at least one model (ctrl+m).", severity="warning")
            return
        self.spec = RunSpec(
            user_id=choices.user_id, query_id=choices.query_id, expression_type=choices.expression_type,
            context=choices.context, method=choices.method,
            models=[ModelSpec(id=m) for m in choices.models],
            judges=[choices.judge] if choices.judge else [],
        )
        self.query_one("#estimate", Static).update("preparing the prompt …")
        self._prepare(self.spec, self.workbench.user(self.spec.user_id), self.workbench.filler_pools())

    @work(thread=True, exclusive=True, group="prepare", exit_on_error=False, description="build context and prompt")
    def _prepare(self, spec: RunSpec, bundle, pools):
        return spec, self.workbench.prepare(spec, bundle, pools)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "prepare":
            if event.state == WorkerState.SUCCESS:
                spec, plan = worker.result
                self._start_run(spec, plan)
            elif event.state == WorkerState.ERROR:
                self.query_one("#estimate", Static).update(f"[red]{worker.error}[/]")
                self.notify(str(worker.error), title="Cannot run", severity="error", timeout=8)
        elif worker.group == "run" and event.state == WorkerState.ERROR:
            self.notify(f"Run failed: {worker.error}", severity="error", timeout=8)

    def _start_run(self, spec: RunSpec, plan) -> None:
        self.plan = plan
        self.plan_order = [c.session_id for c in plan.context] or None
        self.plan_tokens = {c.session_id: c.tokens for c in plan.context}
        self._build_panes(spec)
        est = f"{plan.history_tokens:,} history tokens · {plan.total_tokens:,} prompt tokens/model · {len(plan.steps)} step(s)"
        self.query_one("#estimate", Static).update(est)
        self.query_one(AnalysisTabs).show_plan(self.bundle, spec, plan)
        self.refresh_timeline()
        self._run_engine(spec, plan)

    @work(exclusive=True, group="run", exit_on_error=False, description="stream models")
    async def _run_engine(self, spec: RunSpec, plan) -> None:
        engine = self.workbench.engine(self.bridge, judges=self.app.judges_for(spec))
        self.run_id = await engine.run(spec, plan, self.bundle, on_handle=self._set_handle)

    def _set_handle(self, handle) -> None:
        self.handle = handle

    def _build_panes(self, spec: RunSpec) -> None:
        container = self.query_one("#panes", Horizontal)
        container.remove_children()
        tabs = self.query_one("#pane-tabs", Tabs)
        tabs.clear()
        self.panes = []
        self._pane_by_response.clear()
        for i, m in enumerate(spec.models):
            pane = ResponsePane(i, m.id, is_demo=m.is_demo, id=f"pane-{i}")
            self.panes.append(pane)
            tabs.add_tab(Tab(pane.label, id=f"ptab-{i}"))
        container.mount_all(self.panes)
        self._sync_pane_visibility()
        if self.panes:
            self.call_after_refresh(self.panes[0].focus)

    def _sync_pane_visibility(self) -> None:
        narrow = self.has_class("narrow")
        active = self.query_one("#pane-tabs", Tabs).active
        for i, pane in enumerate(self.panes):
            pane.display = (not narrow) or active in (None, f"ptab-{i}")

    @on(Tabs.TabActivated, "#pane-tabs")
    def _pane_tab(self, event: Tabs.TabActivated) -> None:
        self._sync_pane_visibility()

    # -- engine events -------------------------------------------------------------------
    async def on_tokens_pending(self, _: TokensPending) -> None:
        for response_id, text in self.bridge.drain().items():
            pane = self._pane_by_response.get(response_id)
            if pane is not None:
                await pane.write(text)

    async def on_engine_event(self, message: EngineEvent) -> None:
        event = message.event
        tabs = self.query_one(AnalysisTabs)
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
        elif isinstance(event, ResponseStarted):
            pane = self.panes[event.slot]
            self._pane_by_response[event.response_id] = pane
            await pane.begin(event.step, event.is_final_step)
        elif isinstance(event, ResponseFinished):
            pane = self._pane_by_response.get(event.response_id)
            if pane is not None:
                await pane.write(self.bridge.take(event.response_id))
                await pane.finish(event)
            tabs.add_response(event, self.spec)
        elif isinstance(event, JudgeScored):
            pane = self._pane_by_response.get(event.response_id)
            if pane is not None:
                pane.add_judgment(event.judgment)
            tabs.add_judgment(event, self.spec)
        elif isinstance(event, RunFinished):
            tabs.run_finished(event.run_id)
            self.notify(f"run {event.run_id}: {event.status}", timeout=4)

    # -- pane actions --------------------------------------------------------------------
    def _focused_slot(self) -> int | None:
        node = self.focused
        while node is not None:
            if isinstance(node, ResponsePane):
                return node.slot
            node = node.parent
        return None

    def action_cancel_pane(self) -> None:
        if self.handle is None or not self.handle.running():
            return
        slot = self._focused_slot()
        if slot is None:
            running = self.handle.running()
            slot = running[0] if len(running) == 1 else None
        if slot is None:
            self.notify("Focus a pane (tab) to cancel it, or ctrl+x to cancel all.")
            return
        self.handle.cancel(slot)

    def action_cancel_all(self) -> None:
        if self.handle is not None:
            self.handle.cancel()

    def action_retry_pane(self) -> None:
        slot = self._focused_slot()
        if slot is None or self.spec is None or self.plan is None:
            self.notify("Focus a finished pane to retry it.")
            return
        if self.handle is not None and self.handle.running():
            self.notify("Wait for the run to finish before retrying a pane.", severity="warning")
            return
        spec = self.spec.model_copy(update={"models": [self.spec.models[slot]]})
        self._retry(spec, slot)

    @work(exclusive=True, group="run", exit_on_error=False, description="retry one model")
    async def _retry(self, spec: RunSpec, slot: int) -> None:
        pane = self.panes[slot]
        pane.reset()
        # Route the single-model run's slot 0 into this pane.
        original = self.panes
        self.panes = [pane]
        try:
            engine = self.workbench.engine(self.bridge, judges=self.app.judges_for(spec))
            await engine.run(spec, self.plan, self.bundle, on_handle=self._set_handle)
        finally:
            self.panes = original

    def action_toggle_reasons(self) -> None:
        for pane in self.panes:
            pane.toggle_rationales()

    def action_zoom_tabs(self) -> None:
        self.toggle_class("tabs-zoomed")

    def action_pick_models(self) -> None:
        from tui.screens.models import ModelPicker

        bar = self.query_one(RunBar)

        def chosen(models: list[str] | None) -> None:
            if models:
                bar.set_models(models)

        self.app.push_screen(ModelPicker(self.app.available_models(), bar.models), chosen)

    def action_search(self) -> None:
        from tui.screens.search import SearchScreen

        if self.bundle is not None:
            self.app.push_screen(SearchScreen(self.workbench, self.bundle))
