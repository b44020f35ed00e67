"""The Diagnosis tab: why each final answer of the run shown kept or lost the preference
(find → know → apply, :mod:`core.analysis.diagnosis`).

One block per model: its label in colour, then every step (in context, retrieved, known,
applied) with its mark and evidence, the steps that decided the label in bold, and notes. The
tab also runs the knowledge probes of the run shown (``p`` on the main screen): the same models,
context and method are asked the query's MCQ / true-false probes (or a generated "what do I
prefer …" one) in a worker thread, the probe runs are stored through the Workbench's recorder,
and the diagnosis is read again. Every time it diagnoses it posts :class:`DiagnosisView.Diagnosed`
so the screen can put each label on its answer's pane.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text
from tui.widgets.worker_errors import notify_if_failed

PROBE_ACTION = "probe"  # the main screen's action (and binding id) that runs the probes
PROBE_TOOLTIP = "Probe: ask each model the preference's knowledge probes (same context and method), then diagnose"


def probe_binding() -> Binding:
    """``p`` in the footer where probing is at hand (an answer pane, this tab); the main screen
    holds the same key, hidden, so it works wherever the focus is (80 columns hold no more keys)."""
    return Binding("p", f"screen.{PROBE_ACTION}", "Probe", id=PROBE_ACTION, tooltip=PROBE_TOOLTIP)


STEP_STYLE = {"pass": "bold green", "fail": "bold red", "unknown": "dim", "n/a": "dim"}
RULE = (
    "label: the first step that failed (in context → retrieved → known) once the verdict fails; "
    "applied if it passes (docs: how-to/diagnose.md)"
)
NOTHING = "No run shown yet: ctrl+r runs the chosen models, the Runs tab (6) re-opens a stored run."


def deciding_steps(diagnosis) -> set[str]:
    """The names of the steps whose evidence :meth:`Diagnosis.reason` cites."""
    reason = diagnosis.reason()
    return {s.name for s in diagnosis.steps if f"{s.name}: {s.evidence}" in reason}


def diagnosis_block(case, diagnosis, *, demo: bool = False) -> Group:
    """``model  label``, then every step (n/a ones dimmed) with its mark and evidence (the steps
    that decided the label in bold; long evidence wraps in its own column), then notes."""
    from tui.diagnosis_style import MARK, label_text

    head = safe_text(case.model + (" (demo)" if demo else ""), "bold")
    head.append("  ").append_text(label_text(diagnosis))
    grid = Table.grid(padding=(0, 1), pad_edge=False)
    grid.add_column(width=1)  # indent
    grid.add_column(width=1)  # mark
    grid.add_column(no_wrap=True, min_width=len("in context") + 1)  # step name
    grid.add_column(ratio=1)  # evidence
    deciding = deciding_steps(diagnosis)
    for step in diagnosis.steps:
        quiet = step.status in ("n/a", "unknown")
        name_style = "bold" if step.name in deciding else ("dim" if quiet else "")
        grid.add_row(
            "",
            Text(MARK[step.status], STEP_STYLE[step.status]),
            Text(step.name, name_style),
            safe_text(step.evidence, "dim" if quiet else ""),
        )
    for note in diagnosis.notes:
        grid.add_row("", "", Text("note", "italic"), safe_text(note, "italic"))
    return Group(head, grid)


def probes_line(results: Sequence[tuple], probe_key: str, probing: bool = False) -> Text | None:
    """What the run's probes are: the probe queries answered, or why there are none (and the key);
    None while the first probes run (the status line says so)."""
    cases = [c for c, _, _ in results]
    asked = list(dict.fromkeys(q for c in cases for q in c.probe_queries))
    if asked:
        line = Text.assemble(("probes: ", "bold"), safe_text(", ".join(asked)))
        return line.append(f"  ·  {probe_key} probes again", "dim")
    if cases and all(c.query_kind in ("mcq", "tf") for c in cases):
        return Text("An MCQ / true-false answer is its own probe: its choice says whether the preference is known.")
    if cases and all(not c.preference for c in cases):
        return Text("No preference to probe (a QA query): the 'known' step stays unknown.", "yellow")
    if probing:
        return None
    return Text.assemble(
        ("No knowledge probes for this run yet: ", "bold yellow"),
        (f"press {probe_key}", "bold"),
        " to ask each model the preference's probes (same context and method), then diagnose.",
    )


def diagnosis_renderable(
    results: Sequence[tuple], *, demo_models: Sequence[str] = (), probe_key: str = "p", status: Text | None = None
) -> Group:
    """The whole tab for one run's ``(case, diagnosis, factors)`` (``Workbench.diagnoses``)."""
    parts: list = [status] if status is not None else []
    if not results:
        return Group(*parts, Text("No final answers in this run to diagnose."))
    first = results[0][0]
    parts.append(safe_text(f"run {first.run_id} · {first.query_id} · {first.method} · {first.context}", "dim"))
    parts.append(Text(RULE, "dim italic"))
    line = probes_line(results, probe_key, probing=status is not None)
    if line is not None:
        parts.append(line)
    for case, diagnosis, _ in results:
        parts.append(Text())
        parts.append(diagnosis_block(case, diagnosis, demo=case.model in demo_models))
    return Group(*parts)


def plain(renderable, width: int = 100) -> str:
    """What a renderable reads as, without styles (tests, copying)."""
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    console.print(renderable)
    return console.file.getvalue()


class DiagnosisView(VerticalScroll, can_focus=True):
    """The tab's body (scrolls with the arrow keys once focused)."""

    BINDINGS = [probe_binding()]
    DEFAULT_CSS = """
    DiagnosisView { height: 1fr; padding: 0 1; }
    DiagnosisView > Static { width: 1fr; }
    """

    @dataclass
    class Diagnosed(Message):
        """The run shown was (re-)diagnosed: response id -> Diagnosis, for the panes' labels."""

        run_id: str | None
        by_response: dict = field(default_factory=dict)
        probing: bool = False

    @dataclass
    class ProbesStored(Message):
        """The probes of a run were run and stored (new runs for the Runs tab)."""

        run_id: str
        probe_run_ids: list[str]

    @dataclass
    class ProbeProgress(Message):
        """Another probe run finished (posted from the probe thread)."""

        run_id: str
        done: int
        total: int

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id)
        self.workbench = workbench
        self.run_id: str | None = None  # the run shown
        self.results: list[tuple] = []  # (case, diagnosis, factors) of its final answers
        self.probing: str | None = None  # the run whose probes are running
        self._probe_total = 0
        self._probe_done = 0
        self._demo_models: tuple[str, ...] = ()
        self.shown: object = Text(NOTHING)  # what the tab shows (a rich renderable)

    def compose(self):
        yield Static(NOTHING, id="diagnosis-text")

    # -- what is shown -------------------------------------------------------------------
    def clear(self, note: str = NOTHING) -> None:
        """No run to diagnose (a new run is streaming, nothing shown yet)."""
        self.run_id, self.results = None, []
        self._set(Text(note))
        self.post_message(self.Diagnosed(None, {}))

    def show_run(self, run_id: str | None, demo_models: Sequence[str] = ()) -> None:
        """Diagnose the stored run's final answers (stored rows only) and show them."""
        if run_id is None:
            self.clear()
            return
        self.run_id = run_id
        self._demo_models = tuple(demo_models)
        try:
            self.results = self.workbench.diagnoses([run_id])
        except Exception as exc:  # a run whose rows cannot be read: say so, keep the app running
            self.results = []
            self._set(safe_text(f"cannot diagnose run {run_id}: {type(exc).__name__}: {exc}", "red"))
            self.post_message(self.Diagnosed(run_id, {}))
            return
        self._refresh_text()
        self.post_message(self.Diagnosed(run_id, self.by_response(), self.probing == run_id))

    def by_response(self) -> dict:
        return {case.response_id: diagnosis for case, diagnosis, _ in self.results}

    def _refresh_text(self) -> None:
        status = None
        if self.probing is not None and self.probing == self.run_id:
            status = Text(f"probing … {self._probe_done} of {self._probe_total} probe runs done", "bold cyan")
        self._set(
            diagnosis_renderable(self.results, demo_models=self._demo_models, probe_key=self.probe_key(), status=status)
        )

    def _set(self, renderable) -> None:
        self.shown = renderable
        self.query_one(Static).update(renderable)

    @property
    def text(self) -> str:
        """The tab as plain text (wide: one line per step unless its evidence is long)."""
        return plain(self.shown, 200)

    def probe_key(self) -> str:
        """The key the main screen runs the probes with (a keymap may have changed it)."""
        try:
            bindings = self.screen.active_bindings
        except Exception:
            return "p"
        for active in bindings.values():
            if active.binding.id == PROBE_ACTION:
                return self.app.get_key_display(active.binding)
        return "p"

    # -- the knowledge probes ------------------------------------------------------------
    def probe(self, run_id: str) -> bool:
        """Run the knowledge probes of a stored run in a worker thread, then diagnose it again.
        False (the operator is told why) when it has none or probes are already running."""
        if self.probing is not None:
            self.notify("The probes of a run are still running: wait for them to finish.", severity="warning")
            return False
        try:
            specs = self.workbench.probe_specs(run_id)
        except Exception as exc:  # the user or query is gone, the database is locked: say so, keep running
            self.notify(
                terminal_safe(f"cannot probe run {run_id}: {type(exc).__name__}: {exc}"),
                severity="error",
                timeout=8,
                markup=False,
            )
            return False
        if not specs:
            self.notify(terminal_safe(self._why_no_probes(run_id)), severity="warning", timeout=8, markup=False)
            return False
        bundle = self.workbench.user(specs[0].user_id)
        pools = self.workbench.filler_pools()  # loaded here: the probe thread must not read the main connection
        queries = [s.query_id for s in specs]
        models = len(specs[0].models)
        self.probing, self._probe_total, self._probe_done = run_id, len(specs), 0
        self.notify(
            terminal_safe(
                f"probing {len(specs)} quer{'y' if len(specs) == 1 else 'ies'} × {models} model(s): "
                f"{', '.join(queries)} …"
            ),
            timeout=4,
            markup=False,
        )
        if self.run_id == run_id:
            self._refresh_text()
            self.post_message(self.Diagnosed(run_id, self.by_response(), True))
        self._run_probes(run_id, specs, bundle, pools)
        return True

    def _why_no_probes(self, run_id: str) -> str:
        run = self.workbench.load_run(run_id)
        query = self.workbench.user(run.spec.user_id).query(run.spec.query_id)
        if query.kind in ("mcq", "tf"):
            return (
                f"{query.id} is an MCQ / true-false query: its answer is its own probe "
                "(the Diagnosis tab reads 'known' from its choice)."
            )
        if not any(r.status in ("ok", "incomplete") for r in run.final_responses()):
            return "No model's answer finished: there is nothing to probe."
        return f"{query.id} has no preference to probe (a QA query, or the open query is not on a preference)."

    def _run_probes(self, run_id: str, specs, bundle, pools) -> None:
        from core.run.spec import RunFinished

        total, done = len(specs), [0]

        def emit(event) -> None:  # on the probe thread; post_message is thread-safe
            if isinstance(event, RunFinished):
                done[0] += 1
                self.post_message(self.ProbeProgress(run_id, done[0], total))

        def work() -> list[str]:
            return asyncio.run(self.workbench.run_probes(specs, bundle, emit, pools))

        self.run_worker(
            work, thread=True, group="probe", exit_on_error=False, description="the knowledge probes", name=run_id
        )

    def on_diagnosis_view_probe_progress(self, message: ProbeProgress) -> None:
        message.stop()
        if message.run_id == self.probing:
            self._probe_done = message.done
            if self.run_id == message.run_id:
                self._refresh_text()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "probe" or event.state not in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            return
        run_id, self.probing = self.probing, None
        notify_if_failed(self, event)
        if event.state == WorkerState.SUCCESS:
            stored = list(event.worker.result or [])
            self.notify(f"stored {len(stored)} probe run(s); diagnosis updated", timeout=4)
            if run_id is not None:
                self.post_message(self.ProbesStored(run_id, stored))
        if run_id is not None and run_id == self.run_id:
            self.show_run(run_id, self._demo_models)  # read back what was stored (or clear "probing")
