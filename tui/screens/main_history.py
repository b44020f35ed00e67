"""The main screen's history side: the Runs tab, re-opening a stored run exactly as it was,
comparing two runs, exporting runs as CSV, and the Evidence tab's answer mentions.

A mixin of :class:`tui.screens.main.MainScreen` (it uses the screen's panes, tabs and workbench).
"""

from __future__ import annotations

import datetime as dt

from textual import work

from core.run.spec import RunSpec
from tui.messages import RunChosen, RunsCompareRequested, RunsExportRequested
from tui.widgets.prompt_tab import plan_text
from tui.widgets.run_bar import RunBar
from tui.widgets.tabs import AnalysisTabs


def stored_pane_text(responses: list) -> str:
    """One slot's stored responses (several for a multi-step method) as the pane showed them."""
    if len(responses) == 1:
        return responses[0].text or ""
    return "\n\n".join(f"#### step: {r.step}\n\n{r.text or ''}" for r in responses)


class HistoryMixin:
    shown_run = None  # the storage.runs.StoredRun on screen when a past run was re-opened

    # -- runs list -----------------------------------------------------------------------
    def refresh_runs(self) -> None:
        self.workbench.flush()
        self.query_one(AnalysisTabs).runs.show(self.workbench.list_runs())

    # -- re-open -------------------------------------------------------------------------
    async def on_run_chosen(self, message: RunChosen) -> None:
        await self.reopen_run(message.run_id)

    async def reopen_run(self, run_id: str) -> None:
        if self.handle is not None and self.handle.running():
            self.notify("A run is streaming: cancel it (ctrl+x) or wait before re-opening another.", severity="warning")
            return
        from storage.runs import UnknownRun

        self.workbench.flush()
        try:
            run = self.workbench.load_run(run_id)
        except UnknownRun as exc:
            self.notify(str(exc), severity="error")
            return
        try:
            bundle = self.workbench.user(run.spec.user_id)
            bundle.query(run.spec.query_id)
        except (KeyError, LookupError):
            self.notify(
                f"run {run_id}: user {run.spec.user_id!r} or query {run.spec.query_id!r} is no longer "
                "in the database (re-import the user to re-open it)",
                severity="error",
                timeout=8,
            )
            return
        await self.show_stored_run(run)

    async def show_stored_run(self, run) -> None:
        """Panes from stored responses, scores from stored judgments, the prompt from stored prompts."""
        spec: RunSpec = run.spec
        self._apply_spec_to_run_bar(spec)
        self.shown_run = run
        self.spec = spec
        self.plan = run.plan
        self._plan_key = None  # a re-opened plan is never reused for a new run: choices re-prepare
        self.run_id = run.id
        self.handle = None
        await self._build_panes(spec)
        by_slot: dict[int, list] = {}
        for r in run.responses:
            by_slot.setdefault(r.slot, []).append(r)
        self.response_models = {r.id: r.model for r in run.responses}
        self.final_texts = {}
        judgments = run.judgments
        tabs = self.query_one(AnalysisTabs)
        tabs.judges.clear_items()
        for pane in self.panes:
            responses = by_slot.get(pane.slot, [])
            if not responses:
                continue
            final = next((r for r in reversed(responses) if r.is_final), responses[-1])
            mine = [j for j in judgments if j.response_id == final.id]
            await pane.show_stored(final, mine, text=stored_pane_text(responses))
            if final.is_final and final.status == "ok":
                self.final_texts[pane.model_id] = final.text
        for j in judgments:
            tabs.judges.add_item(self.response_models.get(j.response_id or "", ""), j.response_id, j)
        tabs.prompt.show(plan_text(spec, run.plan))
        created = run.created_at[:19].replace("T", " ")
        self.set_estimate(
            f"re-opened run [b]{run.id}[/] from {created} · {run.status} · "
            f"{run.plan.total_tokens:,} prompt tokens · change any choice and ctrl+r to run it again"
        )
        self.refresh_timeline()
        self.refresh_evidence()
        self.refresh_relevance()

    def _apply_spec_to_run_bar(self, spec: RunSpec) -> None:
        bar = self.query_one(RunBar)
        self._applying = True
        try:
            if self.bundle is None or self.bundle.user.id != spec.user_id:
                bar.set_value("rb-user", spec.user_id)
                self.load_user(spec.user_id)
            bar.set_value("rb-query", spec.query_id)
            bar.set_value("rb-expression", spec.expression_type)
            bar.set_value("rb-context", spec.context)
            bar.set_value("rb-seed", spec.seed)
            if not bar.set_value("rb-method", spec.method):
                self.notify(f"method {spec.method!r} is not offered any more; the run shows as stored")
            bar.set_value("rb-judge", spec.judges[0] if spec.judges else "")
            bar.set_value("rb-force", spec.force)
            bar.set_models([m.id for m in spec.models])
        finally:
            self.call_after_refresh(self._stop_applying)

    def _stop_applying(self) -> None:
        self._applying = False

    # -- compare / export ----------------------------------------------------------------
    def on_runs_compare_requested(self, message: RunsCompareRequested) -> None:
        if len(message.run_ids) != 2:
            self.notify("Mark two runs with space, then press c to compare them.")
            return
        from tui.screens.compare import compare_markdown
        from tui.screens.text_view import TextView

        self.workbench.flush()
        a, b = (self.workbench.load_run(r) for r in message.run_ids)
        self.app.push_screen(TextView(f"compare {a.id} ↔ {b.id}", compare_markdown(a, b)))

    def on_runs_export_requested(self, message: RunsExportRequested) -> None:
        if not message.run_ids:
            self.notify("No runs to export yet.")
            return
        from core.settings import data_dir
        from tui.screens.export import ExportScreen

        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        default = data_dir() / "exports" / f"prefscope-runs-{stamp}.csv"
        ids = list(message.run_ids)

        def chosen(path) -> None:
            if path is None:
                return
            try:
                n = self.workbench.export_runs(ids, path)
            except (OSError, ValueError) as exc:
                self.notify(f"could not write {path}: {exc}", severity="error", timeout=8)
                return
            self.notify(f"wrote {n} row(s) from {len(ids)} run(s) to {path}", title="Exported", timeout=8)

        self.app.push_screen(ExportScreen(len(ids), default), chosen)

    # -- evidence mentions ---------------------------------------------------------------
    def refresh_evidence(self) -> None:
        if self.bundle is None or self.plan is None or self.spec is None:
            return
        models = [m.id for m in self.spec.models]
        self._evidence(self.bundle, self.spec, self.plan, dict(self.final_texts), models)

    @work(thread=True, exclusive=True, group="evidence", exit_on_error=False, description="evidence mentions")
    def _evidence(self, bundle, spec, plan, answers: dict[str, str], models: list[str]) -> None:
        from core.analysis.mentions import evidence_mentions

        sessions = {s.id: "\n".join(t.content for t in s.turns) for s in bundle.sessions}
        query = bundle.query(spec.query_id)
        rows = evidence_mentions(
            sessions,
            question=query.text,
            gold=[e.session_id for e in plan.evidence],
            retrieved=[(r.session_id, r.rank, r.similarity) for r in plan.retrieved],
            tokens_to_query={e.session_id: e.tokens_to_query for e in plan.evidence},
            answers=answers,
        )
        self.app.call_from_thread(self.query_one(AnalysisTabs).evidence.show, rows, models)
