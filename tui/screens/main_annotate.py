"""The main screen's annotation side: the operator's scores and pairwise choices (Judges tab),
attribute verdicts (Attributes tab), relevance labels and deciders (Relevance tab).

Everything the operator enters is stored through the Workbench (``storage.analyses``) with
``human = 1`` / decider ``human``, then re-read so what is on screen is what is stored.
A mixin of :class:`tui.screens.main.MainScreen`.
"""

from __future__ import annotations

from textual import work

from tui.messages import (
    AttributeVerdictChosen,
    HumanScoreRequested,
    JudgmentOpened,
    PairwiseRequested,
    RelevanceDecideRequested,
    RelevanceLabelled,
)
from tui.widgets.attributes_tab import rows_from
from tui.widgets.tabs import AnalysisTabs


class AnnotateMixin:
    # -- judgments -----------------------------------------------------------------------
    def on_judgment_opened(self, message: JudgmentOpened) -> None:
        from tui.screens.text_view import TextView, judgment_markdown

        j = message.judgment
        self.app.push_screen(TextView(f"{j.kind} / {j.dimension}", judgment_markdown(message.model, j)))

    def _stored_run_ready(self) -> bool:
        if self.run_id is None or (self.handle is not None and self.handle.running()):
            self.notify("Score answers once the run has finished (or re-open a stored run).", severity="warning")
            return False
        return True

    def action_human_score(self) -> None:
        self.post_message(HumanScoreRequested(None))

    def on_human_score_requested(self, message: HumanScoreRequested) -> None:
        if not self._stored_run_ready():
            return
        response_id = message.response_id
        pane = (
            next((p for p in self.panes if p.response_id == response_id), None) if response_id else self.focused_pane()
        )
        if pane is None and len(self.panes) == 1:
            pane = self.panes[0]
        if pane is None or pane.response_id is None:
            self.notify("Focus the answer to score (click its pane), or pick a row in the Judges tab.")
            return
        if pane.status != "ok":
            self.notify(f"{pane.model_id} has no finished answer to score ({pane.status}).", severity="warning")
            return
        from tui.screens.human_score import HumanScoreScreen, scales_from

        run_id, response_id = self.run_id, pane.response_id

        def chosen(scores) -> None:
            if not scores:
                return
            for scale, value in scores:
                self.workbench.save_human_judgment(
                    run_id,
                    response_id,
                    kind=scale.kind,
                    dimension=scale.dimension,
                    score=value,
                    scale=(scale.lo, scale.hi),
                )
            self.reload_judgments()
            self.notify(f"stored {len(scores)} score(s) of yours for {pane.model_id}", timeout=4)

        self.app.push_screen(HumanScoreScreen(pane.model_id, scales_from(pane.judgments)), chosen)

    def on_pairwise_requested(self, _: PairwiseRequested) -> None:
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
            self.workbench.save_human_judgment(
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
            )
            self.reload_judgments()
            verdict = {1.0: f"{a.model_id} better", 0.5: "a tie", 0.0: f"{b.model_id} better"}[score]
            self.notify(f"stored your pairwise choice: {verdict}", timeout=4)

        self.app.push_screen(PairwiseScreen([f"{p.label}" for p in answered]), chosen)

    def reload_judgments(self) -> None:
        """Re-read the shown run's judgments from the database into the panes and the Judges tab."""
        if self.run_id is None:
            return
        rows = self.workbench.judgments(self.run_id)
        tabs = self.query_one(AnalysisTabs)
        tabs.judges.clear_items()
        for j in rows:
            tabs.judges.add_item(self.response_models.get(j.response_id or "", ""), j.response_id, j)
        for pane in self.panes:
            pane.set_judgments([j for j in rows if j.response_id == pane.response_id and j.kind != "pairwise"])

    # -- attributes ----------------------------------------------------------------------
    def refresh_attributes(self) -> None:
        if self.bundle is None:
            return
        stored = self.workbench.latest_extraction(self.bundle.user.id)
        rows = rows_from(stored, self.bundle.attributes)
        name = self.bundle.user.name or self.bundle.user.id
        if stored is not None:
            ex = stored.extraction
            note = (
                f"latest extraction by {ex.model} ({ex.prompt_version}); verifier "
                f"{ex.verifier_model or 'not run'} · a accept · u uncertain · x reject · enter opens evidence"
            )
        elif rows:
            note = f"{name}: the dataset's gold attributes (read-only) · enter opens evidence"
        else:
            note = (
                f"No attributes for {name} yet. Extract them with a model: "
                f"`prefscope attributes {self.bundle.user.id} --model PROVIDER:MODEL` (Re-Centering stage 1; "
                "offline: `--model demo:extractor`)."
            )
        self.query_one(AnalysisTabs).attributes.show(rows, note)

    def on_attribute_verdict_chosen(self, message: AttributeVerdictChosen) -> None:
        self.workbench.set_attribute_verdict(message.extraction_id, message.attribute_id, message.verdict)
        self.refresh_attributes()

    # -- relevance -----------------------------------------------------------------------
    def refresh_relevance(self) -> None:
        from core.analysis import relevance as rel

        tabs = self.query_one(AnalysisTabs)
        if self.run_id is None:
            tabs.relevance.show({}, {}, "Run a case or re-open one; then d decides relevance here.")
            return
        self.workbench.flush()
        stored = self.workbench.relevance(self.run_id)
        decisions = [s.decision for s in stored]
        texts: dict = {}
        for s in stored:
            if s.target_text:
                texts.setdefault((s.decision.target_kind, s.decision.target_id), s.target_text)
        table = rel.side_by_side(decisions)
        if not table:
            hint = (
                "d runs the gold and BM25 deciders (D adds embeddings)"
                if self.plan is not None and (self.plan.retrieved or self.bundle.attributes)
                else "nothing to decide: no attributes and no retrieved turns (use a RAG method or extract attributes)"
            )
            tabs.relevance.show({}, {}, f"run {self.run_id}: {hint} · y / n label a target yourself")
            return
        reference = "human" if any(d.decider == "human" for d in decisions) else "gold"
        parts = []
        for a in rel.agreement(decisions, reference):
            rate = "—" if a.positive_rate is None else f"{a.positive_rate:.0%}"
            kappa = "—" if a.kappa is None else f"{a.kappa:.2f}"
            f1 = "—" if a.f1 is None else f"{a.f1:.2f}"
            parts.append(f"{a.decider}: relevant {rate}, κ {kappa}, F1 {f1} (n={a.n})")
        note = f"vs {reference}: " + " · ".join(parts) if parts else f"reference: {reference}"
        tabs.relevance.show(table, texts, note + " · y / n: your label · d: decide again")

    def on_relevance_labelled(self, message: RelevanceLabelled) -> None:
        if self.run_id is None or self.spec is None:
            self.notify("Label relevance for a run: run a case or re-open one first.")
            return
        self.workbench.save_human_relevance(
            self.run_id, self.spec.query_id, message.target_kind, message.target_id, message.relevant
        )
        self.refresh_relevance()

    def on_relevance_decide_requested(self, message: RelevanceDecideRequested) -> None:
        if not self._stored_run_ready() or self.bundle is None:
            return
        self.workbench.flush()
        run = self.workbench.load_run(self.run_id)
        self.query_one(AnalysisTabs).relevance.show({}, {}, "deciding …")
        self._decide(run, self.bundle, message.embeddings)

    @work(thread=True, exclusive=True, group="relevance", exit_on_error=False, description="relevance deciders")
    def _decide(self, run, bundle, embeddings: bool) -> None:
        n = self.workbench.decide_relevance(run, bundle, embeddings=embeddings)
        self.app.call_from_thread(self.refresh_relevance)
        if n == 0:
            self.app.call_from_thread(self.notify, "Nothing to decide: no attributes and no retrieved turns.")
