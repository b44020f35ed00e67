"""The line under the run bar: what the current choices would cost, before anything is sent.

It owns preparing the plan: once the operator stops changing choices it builds the context and
the prompt in a worker thread (context building may be slow) through the Workbench, then shows
the token/cost estimate, or why the prompt cannot be sent (too long for a model's window, a
context that cannot be built). A prepared plan is kept for the run that follows, as long as the
choices that shape the prompt have not changed.

An estimate never embeds: a RAG plan whose history is not embedded yet counts BM25's turns
instead, and is not kept for the run. The run's own prepare embeds, showing its progress here;
a newer prepare stops it between batches (what finished stays cached), and asking to run the
plan already being prepared joins it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from core.plan import PromptPlan
from core.run.spec import RunSpec
from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text
from tui.widgets.prompt_tab import plan_text

ESTIMATE_DELAY_S = 0.35  # wait for the operator to stop changing choices before preparing


@dataclass
class Prepared:
    spec: RunSpec
    plan: PromptPlan
    estimate: Any  # the Workbench's estimate: .text()
    prompt_text: Any  # rich Text for the Prompt tab


def plan_key(spec: RunSpec) -> str:
    """What makes two specs need the same plan (judges and labels do not change the prompt)."""
    return spec.model_dump_json(exclude={"judges", "label"})


class EstimateLine(Static):
    @dataclass
    class Preparing(Message):
        """Preparing started: background work that should wait for start-up may start too."""

    @dataclass
    class Embedding(Message):
        """Progress of the run's prepare embedding the history (posted from its thread)."""

        done: int
        total: int

    @dataclass
    class Ready(Message):
        prepared: Prepared
        run: bool  # the operator asked to run it as soon as it is ready

    def __init__(self, workbench, choices: Callable[[], RunSpec | None], *, id: str | None = None):
        super().__init__("", id=id)
        self.workbench = workbench
        self._choices = choices  # the run bar's current choices as a RunSpec (None: incomplete)
        self.timer: Timer | None = None  # the pending estimate, while the operator is still choosing
        self._prepared: Prepared | None = None
        self._run_when_ready = False
        self._preparing_for_run: str | None = None  # plan key of the run's prepare in flight

    def schedule(self, delay: float = ESTIMATE_DELAY_S) -> None:
        """Estimate the current choices after ``delay`` (restarted by every change)."""
        self._prepared = None
        if self.timer is not None:
            self.timer.stop()
        self.timer = self.set_timer(delay, self._estimate_now)

    def _estimate_now(self) -> None:
        self.timer = None
        spec = self._choices()
        if spec is not None:
            self.update("estimating tokens and cost …")
            self._start(spec, for_run=self._run_when_ready)

    def plan_for(self, spec: RunSpec) -> PromptPlan | None:
        """The prepared plan, if it was prepared for these choices (an estimate's stand-in is not)."""
        ready = self._prepared
        if ready is None or plan_key(ready.spec) != plan_key(spec) or ready.plan.retrieval_stand_in:
            return None
        return ready.plan

    def prepare_and_run(self, spec: RunSpec) -> None:
        self._run_when_ready = True
        if self._preparing_for_run == plan_key(spec):
            return  # already preparing exactly this: join it
        self.update("preparing the prompt …")
        self._start(spec, for_run=True)

    def _start(self, spec: RunSpec, for_run: bool = False) -> None:
        self._preparing_for_run = plan_key(spec) if for_run else None
        self.post_message(self.Preparing())
        self._prepare(spec, self.workbench.user(spec.user_id), self.workbench.filler_pools(), for_run)

    def on_estimate_line_embedding(self, message: Embedding) -> None:
        if self._preparing_for_run is not None:
            self.update(
                safe_text(f"embedding the history for retrieval: {message.done:,} of {message.total:,} texts …")
            )

    @work(thread=True, exclusive=True, group="prepare", exit_on_error=False, description="build context and prompt")
    def _prepare(self, spec: RunSpec, bundle, pools, for_run: bool) -> Prepared:
        from textual.worker import get_current_worker

        from core.history.tokens import count_tokens

        worker = get_current_worker()
        if for_run:  # this thread's worker is cancelled by a newer prepare: stop between batches
            options: dict[str, Any] = {
                "embed_stop": lambda: worker.is_cancelled,
                "embed_progress": lambda done, total: self.post_message(self.Embedding(done, total)),
            }
        else:
            options = {"estimate_only": True}
        plan = self.workbench.prepare(spec, bundle, pools, **options)
        counts = [[count_tokens(m.content) for m in step.messages] for step in plan.steps]
        return Prepared(spec, plan, self.workbench.estimate(spec, plan), plan_text(spec, plan, counts))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        from core.history.retrieval import EmbeddingStopped

        if event.worker.group != "prepare" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        if isinstance(event.worker.error, EmbeddingStopped):
            return  # superseded by a newer prepare, which reports for itself
        self._preparing_for_run = None
        if event.state == WorkerState.SUCCESS and isinstance(event.worker.result, Prepared):
            self._ready(event.worker.result)
        else:
            self._run_when_ready = False
            self._failed(event.worker.error)

    def _ready(self, prepared: Prepared) -> None:
        current = self._choices()
        if current is None or plan_key(current) != plan_key(prepared.spec):
            return  # the choices changed meanwhile; a newer estimate is on its way
        self._prepared = prepared
        text = safe_text(prepared.estimate.text())  # Text, not markup: notes carry data
        for note in prepared.plan.notes:
            text.append_text(safe_text(f"  ⚠ {note}", "yellow"))
        self.update(text.append("  ·  ctrl+r runs"))
        run, self._run_when_ready = self._run_when_ready, False
        if run and prepared.plan.retrieval_stand_in:  # the run needs the real retrieval
            self.prepare_and_run(prepared.spec)
            run = False
        self.post_message(self.Ready(prepared, run))

    def _failed(self, error: BaseException | None) -> None:
        from core.history.configs import ContextError, ContextWindowExceeded

        self._prepared = None
        if isinstance(error, ContextWindowExceeded):
            self.update(
                Text.assemble(
                    safe_text(f"⚠ too long: {error}", "red"), "  (tick ", ("force", "bold"), " to send anyway)"
                )
            )
        elif isinstance(error, ContextError):
            self.update(safe_text(f"⚠ {error}", "red"))
        else:
            self.update(safe_text(f"cannot prepare: {type(error).__name__}: {error}", "red"))
            self.notify(
                terminal_safe(str(error)), markup=False, title="Cannot prepare the prompt", severity="error", timeout=8
            )
