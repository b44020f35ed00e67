"""The answers of one run: a ResponsePane per model, fed by the engine through the bridge.

The view owns the run while it streams (the engine worker, its handle for cancelling, the
bridge that coalesces tokens), retrying one pane, re-showing a stored run exactly as it was, and
the operator's own scores of its answers. It tells the screen what happened with three messages:
a judge scored an answer, the judgments shown changed, the run finished.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.dom import DOMNode
from textual.message import Message
from textual.widgets import Tab, Tabs
from textual.worker import Worker

from core.run.spec import JudgeScored, ResponseFinished, ResponseStarted, RunEvent, RunFinished, RunSpec, RunStarted
from core.text.terminal_safe import terminal_safe
from tui.bridge import EngineBridge, EngineEvent, TokensPending
from tui.quiet_gc import quiet_gc
from tui.safe_text import safe_text
from tui.widgets.response_pane import ResponsePane
from tui.widgets.run_bar import runnable
from tui.widgets.worker_errors import notify_if_failed, store_or_notify

#: (model id, response id, judgment) as the Judges tab lists them
JudgmentItem = tuple[str, str | None, Any]


def stored_pane_text(responses: list) -> str:
    """One slot's stored responses (several for a multi-step method) as the pane showed them."""
    if len(responses) == 1:
        return responses[0].text or ""
    return "\n\n".join(f"#### step: {r.step}\n\n{r.text or ''}" for r in responses)


class RunView(Vertical):
    @dataclass
    class Judged(Message):
        """A judge scored one answer of the live run."""

        item: JudgmentItem

    @dataclass
    class JudgmentsShown(Message):
        """The run's judgments as stored (a re-opened run, or after the operator scored)."""

        items: list[JudgmentItem]

    @dataclass
    class Finished(Message):
        run_id: str | None
        status: str

    def __init__(self, workbench, judges_for: Callable[[RunSpec], Any], *, id: str | None = None):
        super().__init__(id=id)
        self.workbench = workbench
        self._judges_for = judges_for  # the judges a spec names, built from the app's settings
        self.panes: list[ResponsePane] = []
        self._pane_by_response: dict[str, ResponsePane] = {}
        #: response id -> model id, for every response of the run shown (live or stored)
        self.response_models: dict[str, str] = {}
        #: model id -> its final answer, for the Evidence tab
        self.final_texts: dict[str, str] = {}
        self.bridge = EngineBridge(self, also=self._record)
        self.handle: Any = None  # core.run.engine's handle of the live run: running(), cancel()
        self.run_id: str | None = None
        self.spec: RunSpec | None = None
        self.plan = None  # core.plan.PromptPlan of the run shown
        self.bundle = None
        self.stored_run = None  # the storage.runs.StoredRun shown when a past run was re-opened

    def compose(self) -> ComposeResult:
        yield Tabs(id="pane-tabs")
        yield Horizontal(id="panes")

    def _record(self, event: RunEvent) -> None:
        self.workbench.recorder().record(event)

    @property
    def running(self) -> bool:
        return self.handle is not None and bool(self.handle.running())

    # -- a live run ----------------------------------------------------------------------
    async def start(self, spec: RunSpec, plan, bundle) -> None:
        self._shown(spec, plan, bundle, run_id=None, stored=None)
        await self._build_panes(spec)
        if self.panes:  # the operator now watches the answers: esc cancels this one, tab moves on
            self.call_after_refresh(self.panes[0].focus)
        self._run_engine(spec, plan)

    async def clear(self) -> None:
        """Show no run (another user was chosen: the last one's answers are not theirs)."""
        self._shown(None, None, None, run_id=None, stored=None)
        await self.query_one("#panes", Horizontal).remove_children()
        await self.query_one("#pane-tabs", Tabs).clear()
        self.panes = []
        self._pane_by_response.clear()

    def _shown(self, spec: RunSpec | None, plan, bundle, *, run_id: str | None, stored) -> None:
        self.spec, self.plan, self.bundle = spec, plan, bundle
        self.run_id, self.stored_run, self.handle = run_id, stored, None
        self.final_texts = {}
        self.response_models = {}

    @work(exclusive=True, group="run", exit_on_error=False, description="the run")
    async def _run_engine(self, spec: RunSpec, plan) -> None:
        engine = self.workbench.engine(self.bridge, judges=self._judges_for(spec))
        with quiet_gc():
            await engine.run(spec, plan, self.bundle, on_handle=self._set_handle)

    def _set_handle(self, handle) -> None:
        self.handle = handle
        self.screen.refresh_bindings()  # the cancel keys join the footer while it streams

    async def _build_panes(self, spec: RunSpec) -> None:
        await self.query_one("#panes", Horizontal).remove_children()
        tabs = self.query_one("#pane-tabs", Tabs)
        await tabs.clear()
        self.panes = [ResponsePane(i, m.id, is_demo=m.is_demo, id=f"pane-{i}") for i, m in enumerate(spec.models)]
        self._pane_by_response.clear()
        for i, pane in enumerate(self.panes):
            # Narrow screens: three model ids fit the tab strip (the pane's own title says "demo").
            await tabs.add_tab(Tab(safe_text(pane.model_id), id=f"ptab-{i}"))
        await self.query_one("#panes", Horizontal).mount_all(self.panes)
        self.sync_visibility()

    def sync_visibility(self) -> None:
        """Narrow screens show one pane at a time, the one whose tab is active."""
        narrow = self.screen.has_class("narrow")
        active = self.query_one("#pane-tabs", Tabs).active
        for i, pane in enumerate(self.panes):
            pane.display = (not narrow) or active in (None, "", f"ptab-{i}")

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()
        self.sync_visibility()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        notify_if_failed(self, event)

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
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
        elif isinstance(event, ResponseStarted):
            started = self.panes[event.slot]
            self._pane_by_response[event.response_id] = started
            self.response_models[event.response_id] = event.model.id
            await started.begin(event.step, event.is_final_step, event.response_id)
            await started.write(self.bridge.take(event.response_id))
        elif isinstance(event, ResponseFinished):
            finished = self._pane_by_response.get(event.response_id)
            if finished is not None:
                await finished.write(self.bridge.take(event.response_id))
                await finished.finish(event)
                if event.is_final_step:
                    self.final_texts[finished.model_id] = event.text
        elif isinstance(event, JudgeScored):
            judged = self._pane_by_response.get(event.response_id or "")
            if judged is not None:
                judged.add_judgment(event.judgment)
            model = self.response_models.get(event.response_id or "", "")
            self.post_message(self.Judged((model, event.response_id, event.judgment)))
        elif isinstance(event, RunFinished):
            self.post_message(self.Finished(self.run_id, event.status))

    # -- a stored run --------------------------------------------------------------------
    async def show_stored(self, run, bundle) -> None:
        """Panes from stored responses, scores from stored judgments."""
        self._shown(run.spec, run.plan, bundle, run_id=run.id, stored=run)
        await self._build_panes(run.spec)
        by_slot: dict[int, list] = {}
        for r in run.responses:
            by_slot.setdefault(r.slot, []).append(r)
        self.response_models = {r.id: r.model for r in run.responses}
        for pane in self.panes:
            responses = by_slot.get(pane.slot, [])
            if not responses:
                continue
            final = next((r for r in reversed(responses) if r.is_final), responses[-1])
            mine = [j for j in run.judgments if j.response_id == final.id]
            await pane.show_stored(final, mine, text=stored_pane_text(responses))
            if final.is_final and final.status == "ok":
                self.final_texts[pane.model_id] = final.text
        self.post_message(self.JudgmentsShown(self._items(run.judgments)))

    def _items(self, judgments: list) -> list[JudgmentItem]:
        return [(self.response_models.get(j.response_id or "", ""), j.response_id, j) for j in judgments]

    def reload_judgments(self) -> None:
        """Re-read the shown run's judgments from the database into the panes and the Judges tab."""
        if self.run_id is None:
            return
        rows = self.workbench.judgments(self.run_id)
        for pane in self.panes:
            pane.set_judgments([j for j in rows if j.response_id == pane.response_id and j.kind != "pairwise"])
        self.post_message(self.JudgmentsShown(self._items(rows)))

    def show_diagnoses(self, by_response: dict, *, probing: bool = False) -> None:
        """Each pane's diagnosis label (response id -> ``Diagnosis``). Panes whose answer is not in
        it keep theirs: after a retry, the other panes still show the first run's answers."""
        for pane in self.panes:
            if pane.response_id in by_response:
                pane.set_diagnosis(by_response[pane.response_id], probing=probing)

    # -- pane actions --------------------------------------------------------------------
    def focused_pane(self) -> ResponsePane | None:
        node: DOMNode | None = self.screen.focused
        while node is not None:
            if isinstance(node, ResponsePane):
                return node
            node = node.parent
        if self.screen.has_class("narrow"):
            return next((p for p in self.panes if p.display), None)
        return None

    def cancel_focused(self) -> None:
        if not self.running:
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

    def cancel_all(self) -> None:
        if self.handle is not None:
            self.handle.cancel()

    def retry_focused(self) -> None:
        pane = self.focused_pane()
        if pane is None or self.spec is None or self.plan is None:
            self.notify("Focus a finished pane to retry it.")
            return
        if not runnable(pane.model_id):
            self.notify(
                terminal_safe(f"{pane.model_id} is a recorded answer: it cannot be generated again"), markup=False
            )
            return
        if self.running:
            self.notify("Wait for the run to finish before retrying a pane.", severity="warning")
            return
        self._retry(self.spec.model_copy(update={"models": [self.spec.models[pane.slot]]}), pane.slot)

    @work(exclusive=True, group="run", exit_on_error=False, description="retry one model")
    async def _retry(self, spec: RunSpec, slot: int) -> None:
        pane = self.panes[slot]
        await pane.reset()
        original = self.panes
        self.panes = [pane]  # the single-model run's slot 0 is this pane
        try:
            engine = self.workbench.engine(self.bridge, judges=self._judges_for(spec))
            with quiet_gc():
                await engine.run(spec, self.plan, self.bundle, on_handle=self._set_handle)
        finally:
            self.panes = original

    def toggle_reasons(self) -> None:
        for pane in self.panes:
            pane.toggle_rationales()

    # -- the operator's own scores -------------------------------------------------------
    def _stored_run_ready(self) -> bool:
        if self.run_id is None or self.running:
            self.notify("Score answers once the run has finished (or re-open a stored run).", severity="warning")
            return False
        return True

    def score_answer(self, response_id: str | None) -> None:
        """Ask the operator for scores of one answer (None: the focused pane's) and store them."""
        if not self._stored_run_ready():
            return
        pane: ResponsePane | None
        if response_id:
            pane = next((p for p in self.panes if p.response_id == response_id), None)
        else:
            pane = self.focused_pane()
        if pane is None and len(self.panes) == 1:
            pane = self.panes[0]
        if pane is None or pane.response_id is None:
            self.notify("Focus the answer to score (click its pane), or pick a row in the Judges tab.")
            return
        if pane.status != "ok":
            self.notify(
                terminal_safe(f"{pane.model_id} has no finished answer to score ({pane.status})."),
                severity="warning",
                markup=False,
            )
            return
        from tui.screens.human_score import HumanScoreScreen, scales_from

        run_id, answer = self.run_id, pane.response_id

        def chosen(scores) -> None:
            if not scores:
                return

            def save() -> None:
                for scale, value in scores:
                    self.workbench.save_human_judgment(
                        run_id,
                        answer,
                        kind=scale.kind,
                        dimension=scale.dimension,
                        score=value,
                        scale=(scale.lo, scale.hi),
                    )

            if not store_or_notify(self, save):
                return
            self.reload_judgments()
            self.notify(
                terminal_safe(f"stored {len(scores)} score(s) of yours for {pane.model_id}"), timeout=4, markup=False
            )

        self.app.push_screen(HumanScoreScreen(pane.model_id, scales_from(pane.judgments)), chosen)

    def pick_better(self) -> None:
        """Ask the operator which of two finished answers is better and store it as pairwise."""
        if not self._stored_run_ready():
            return
        answered = [p for p in self.panes if p.status == "ok" and p.response_id]
        if len(answered) < 2:
            self.notify("Pairwise needs two finished answers.", severity="warning")
            return
        from tui.screens.human_score import PairwiseScreen

        run_id = self.run_id

        def chosen(result) -> None:
            if result is None:
                return
            a, b, score = answered[result[0]], answered[result[1]], result[2]
            stored = store_or_notify(
                self,
                lambda: self.workbench.save_human_judgment(
                    run_id,
                    a.response_id,
                    kind="pairwise",
                    dimension="win",
                    score=score,
                    scale=(0.0, 1.0),
                    extra={
                        "model_a": a.model_id,
                        "model_b": b.model_id,
                        "response_a": a.response_id,
                        "response_b": b.response_id,
                    },
                ),
            )
            if not stored:
                return
            self.reload_judgments()
            verdict = {1.0: f"{a.model_id} better", 0.5: "a tie", 0.0: f"{b.model_id} better"}[score]
            self.notify(f"stored your pairwise choice: {verdict}", timeout=4)

        self.app.push_screen(PairwiseScreen([f"{p.label}" for p in answered]), chosen)
