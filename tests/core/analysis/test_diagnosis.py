"""The find → know → apply diagnosis (:mod:`core.analysis.diagnosis`) on hand-built cases, one
fixture per label, and the cases built from stored runs (:mod:`core.analysis.diagnosis_cases`).

Every case is a plain value: a real :class:`core.plan.PromptPlan` (context, evidence, retrieved
turns) and real :class:`core.judges.base.Judgment` objects, so each test names exactly what the
diagnosis reads. The preference of the hand-built cases has five content words (audiobook, book,
non-fiction, paper, speed); a memory step's output keeps it from three of them (``KNOWN_AT`` 0.5).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.analysis import diagnosis as dx
from core.analysis.diagnosis import Case, ProbeAnswer, diagnose
from core.analysis.diagnosis_cases import cases_of
from core.judges.base import Judgment
from core.plan import ContextEntry, EvidencePosition, Message, PromptPlan, PromptStep, RetrievedTurn
from core.providers.base import ModelSpec
from core.run.spec import RunSpec
from storage.runs import StoredJudgment, StoredResponse, StoredRun

PREF = "Prefers audiobooks, mostly non-fiction, at 1.5x speed, over paper books."
LLM = "openai:gpt-4o-mini"
NOTE = "applied without the evidence in context: a guess, prior knowledge or a given preference"


# -- builders --------------------------------------------------------------------------------------
def make_plan(
    *,
    context: tuple[str, ...] = ("s-life", "s-gold", "s-other"),
    evidence: tuple[tuple[str, int], ...] = (("s-gold", 1200),),
    retrieved: tuple[tuple[int, bool], ...] = (),
    prompt: str = "Any tips for getting through twenty books this year?",
    method: str = "zero-shot",
) -> PromptPlan:
    return PromptPlan(
        method=method,
        steps=[PromptStep(name="answer", messages=[Message(role="user", content=prompt)], tokens=20)],
        context=[ContextEntry(session_id=s, tokens=300) for s in context],
        evidence=[
            EvidencePosition(session_id=s, position=context.index(s) if s in context else 0, tokens_to_query=t)
            for s, t in evidence
        ],
        retrieved=[
            RetrievedTurn(
                rank=rank, session_id="s-gold" if gold else "s-other", turn_index=0, similarity=0.5, is_evidence=gold
            )
            for rank, gold in retrieved
        ],
    )


def judgment(
    kind: str,
    dimension: str,
    score: float | None,
    *,
    model: str = LLM,
    parse_ok: bool = True,
    heuristic: bool = False,
    human: bool = False,
    extra: dict | None = None,
    error: str | None = None,
) -> Judgment:
    return Judgment(
        kind=kind,
        dimension=dimension,
        score=score,
        rationale="",
        raw="",
        parse_ok=parse_ok,
        judge_model=model,
        prompt_version="v1",
        heuristic=heuristic,
        human=human,
        extra=extra or {},
        error=error,
    )


def rubric(alignment: float | None, awareness: float | None = None, **kw) -> list[Judgment]:
    out = [judgment("rubric", "alignment", alignment, **kw)]
    if awareness is not None:
        out.append(judgment("rubric", "awareness", awareness, **kw))
    return out


def choice(right: bool | None) -> Judgment:
    if right is None:
        return judgment("choice", "accuracy", None, model="parser:choice", parse_ok=False)
    return judgment("choice", "accuracy", 1.0 if right else 0.0, model="parser:choice")


def recall_judgment(score: float | None, why: str = "states 2 of 4 content words") -> Judgment:
    return replace(judgment("probe", "recall", score, model="heuristic:probe-recall", heuristic=True), rationale=why)


def mcq_probe(right: bool | None, qid: str = "q-mcq", status: str = "ok") -> ProbeAnswer:
    return ProbeAnswer(qid, "mcq", status, [choice(right)])


def tf_probe(right: bool | None, qid: str = "q-tf") -> ProbeAnswer:
    return ProbeAnswer(qid, "tf", "ok", [choice(right)])


def make_case(**kw) -> Case:
    data: dict = dict(
        run_id="run-1",
        response_id="resp-1",
        model="demo:generic",
        query_id="q-open",
        query_kind="open",
        method="zero-shot",
        context="simple",
        status="ok",
        plan=make_plan(),
        judgments=(),
        gold_sessions=("s-gold",),
        preference=PREF,
        probes=None,
    )
    data.update(kw)
    return Case(**data)


# -- one fixture per label -------------------------------------------------------------------------
def test_applied_when_the_verdict_passes():
    d = diagnose(make_case(judgments=rubric(5, 4), probes=[mcq_probe(True)]))
    assert d.label == dx.APPLIED and d.category == dx.APPLIED
    assert [(s.name, s.status) for s in d.steps] == [
        ("in context", "pass"),
        ("retrieved", "n/a"),
        ("known", "pass"),
        ("applied", "pass"),
    ]
    assert d.notes == ()
    assert d.step("in context").evidence == (
        "1 of 1 gold session(s) sent; nearest s-gold, 1,200 tokens before the question"
    )
    assert d.reason() == (
        f"applied: rubric alignment 5, awareness 4 by {LLM} (meets rubric alignment and awareness ≥ 4 of 5)"
    )


def test_applied_without_the_evidence_in_context_is_noted():
    d = diagnose(make_case(plan=make_plan(evidence=()), judgments=rubric(5, 5)))
    assert d.label == dx.APPLIED
    assert d.step("in context").status == "fail"
    assert d.notes == (NOTE,)


def test_not_in_context_when_no_gold_session_was_sent():
    # The probes fail too, but the first failing step in funnel order names the label.
    gold = ("s-g1", "s-g2", "s-g3", "s-g4", "s-g5")
    d = diagnose(make_case(gold_sessions=gold, judgments=rubric(2, 2), probes=[mcq_probe(False)]))
    assert d.label == dx.NOT_IN_CONTEXT
    assert d.known == "fail"
    assert d.reason() == "in context: none of the 5 gold session(s) (s-g1, s-g2, s-g3, s-g4…) is among the 3 sent"


def test_not_in_context_when_context_is_none():
    d = diagnose(make_case(context="none", plan=make_plan(context=(), evidence=()), judgments=rubric(1, 1)))
    assert d.label == dx.NOT_IN_CONTEXT
    assert d.reason() == "in context: no history was sent (context: none)"


def test_not_retrieved_when_rag_retrieves_no_gold_turn():
    plan = make_plan(retrieved=((1, False), (2, False), (3, False)), method="rag")
    d = diagnose(make_case(method="rag", plan=plan, judgments=rubric(2, 2), probes=[mcq_probe(False)]))
    assert d.label == dx.NOT_RETRIEVED
    assert d.reason() == "retrieved: none of the top 3 retrieved turns is gold evidence"


def test_rag_hit_passes_with_its_rank_and_the_label_moves_on():
    plan = make_plan(retrieved=((1, False), (2, False), (3, True), (4, False), (5, True)), method="rag")
    d = diagnose(make_case(method="rag", plan=plan, judgments=rubric(2, 2), probes=[mcq_probe(False)]))
    assert d.step("retrieved") == dx.Step("retrieved", "pass", "a gold turn retrieved at rank 3 of 5")
    assert d.label == dx.NOT_KNOWN


def test_not_retrieved_when_the_workflow_step_loses_the_preference():
    lost = [("preferences", "The user likes audiobooks at 1.5x speed.")]  # 2 of 5 content words
    d = diagnose(make_case(method="workflow", intermediate=lost, judgments=rubric(2, 2), probes=[mcq_probe(True)]))
    assert d.label == dx.NOT_RETRIEVED
    step = d.step("retrieved")
    assert step.status == "fail"
    assert step.evidence.startswith("lost by the preferences output: states 2 of 5 content words of the preference")
    assert step.evidence.endswith("(0.40; lexical)")
    assert d.reason() == f"retrieved: {step.evidence}"


def test_the_workflow_step_that_keeps_the_preference_passes():
    kept = [("preferences", "Prefers non-fiction audiobooks at speed rather than paper books.")]
    d = diagnose(make_case(method="workflow", intermediate=kept, judgments=rubric(2, 2), probes=[mcq_probe(True)]))
    assert d.step("retrieved").status == "pass"
    assert d.step("retrieved").evidence.startswith("kept by the preferences output: states 5 of 5")
    assert d.label == dx.KNOWN_NOT_APPLIED


def test_recentering_selection_that_keeps_the_preference_passes():
    steps = [("select", f"Relevant: {PREF}")]
    d = diagnose(make_case(method="recentering", intermediate=steps, judgments=rubric(2, 2), probes=[mcq_probe(True)]))
    assert d.step("retrieved").status == "pass"
    assert d.step("retrieved").evidence.startswith("kept by the select output")


def test_recentering_selection_that_drops_the_preference_is_not_retrieved(maya):
    """Re-Centering's answer is written from the *select* output only ({{output:select}}); an
    extraction that found the preference must not hide a selection that dropped it (cases_of keeps
    the outputs the answer step reads)."""
    answer = PromptStep(name="answer", messages=[Message(role="user", content="{{output:select}}\nq")])
    extract = PromptStep(name="extract", messages=[Message(role="user", content="history")])
    select = PromptStep(name="select", messages=[Message(role="user", content="{{output:extract}}")])
    plan = make_plan(context=("maya-p1-e1",), evidence=(("maya-p1-e1", 900),))
    plan = plan.model_copy(update={"steps": [extract, select, answer]})
    run = main_run(method="recentering", plan=plan)
    pref = maya.preference("p1").text
    run.responses += [
        response("run-main", 0, "demo:generic", step="extract", final=False, text=f"1. {pref}\n2. Works nights."),
        response("run-main", 0, "demo:generic", step="select", final=False, text="Relevant: works nights."),
    ]
    generic = cases_of(run, maya)[0]
    assert generic.intermediate == [("select", "Relevant: works nights.")]
    d = diagnose(generic)
    assert d.step("retrieved").status == "fail"
    assert d.label == dx.NOT_RETRIEVED


def test_not_known_when_a_probe_fails():
    d = diagnose(make_case(judgments=rubric(2, 1), probes=[mcq_probe(False), tf_probe(True)]))
    assert d.label == dx.NOT_KNOWN
    assert d.reason() == "known: MCQ q-mcq ✗; TF q-tf ✓"


def test_known_not_applied_when_the_probes_pass_and_the_verdict_fails():
    d = diagnose(make_case(judgments=rubric(4, 2), probes=[mcq_probe(True), tf_probe(True)]))
    assert d.label == dx.KNOWN_NOT_APPLIED
    assert d.reason() == (
        "known: MCQ q-mcq ✓; TF q-tf ✓ · "
        f"applied: rubric alignment 4, awareness 2 by {LLM} (misses rubric alignment and awareness ≥ 4 of 5)"
    )


def test_undetermined_no_probe_when_nothing_failed_and_no_probe_ran():
    d = diagnose(make_case(judgments=rubric(2, 2), probes=None))
    assert d.label == "undetermined: no probe"
    assert d.category == dx.UNDETERMINED
    assert d.known == "unknown"
    assert d.reason() == "known: no probe run (probes need a model: `--probe`, or `p` in the TUI)"


def test_undetermined_no_verdict():
    d = diagnose(make_case(judgments=(), probes=[mcq_probe(True)]))
    assert d.label == "undetermined: no verdict"
    assert d.reason() == "applied: no judge verdict on this answer"
    both = diagnose(make_case(judgments=(), probes=None))
    assert both.label == "undetermined: no probe, no verdict"
    assert both.reason().startswith("known: no probe run") and "applied: no judge verdict" in both.reason()


@pytest.mark.parametrize("status", ["error", "cancelled", "interrupted"])
def test_undetermined_no_answer(status):
    d = diagnose(make_case(status=status, judgments=rubric(5, 5), probes=[mcq_probe(True)]))
    assert d.label == f"undetermined: no answer ({status})"
    assert d.category == dx.UNDETERMINED
    assert {s.status for s in d.steps} == {"unknown"}
    assert d.reason() == "known: no finished answer · applied: no finished answer"


def test_an_incomplete_answer_is_still_diagnosed():
    assert diagnose(make_case(status="incomplete", judgments=rubric(5, 5))).label == dx.APPLIED


# -- reading the verdict ---------------------------------------------------------------------------
def test_a_human_judgment_beats_an_llm_one_which_beats_a_heuristic_one():
    human = judgment("rubric", "alignment", 2, model="human:operator", human=True)
    llm = rubric(5, 5)
    heuristic = rubric(1, 1, model="demo:heuristic", heuristic=True)
    d = diagnose(make_case(judgments=[*heuristic, *llm, human], probes=[mcq_probe(True)]))
    assert d.label == dx.KNOWN_NOT_APPLIED
    assert "by human:operator" in d.step("applied").evidence
    d = diagnose(make_case(judgments=[*heuristic, *llm], probes=[mcq_probe(True)]))
    assert d.label == dx.APPLIED and f"by {LLM}" in d.step("applied").evidence
    d = diagnose(make_case(judgments=heuristic, probes=[mcq_probe(True)]))
    assert d.label == dx.KNOWN_NOT_APPLIED and "by demo:heuristic" in d.step("applied").evidence


def test_within_a_source_the_rule_order_decides():
    # taxonomy comes before rubric in APPLIED_RULES
    tax = judgment("taxonomy", "label", 0.0, extra={"label": "Preference Violation"})
    d = diagnose(make_case(judgments=[*rubric(5, 5), tax], probes=[mcq_probe(True)]))
    assert d.label == dx.KNOWN_NOT_APPLIED
    assert d.step("applied").evidence == (
        f"taxonomy label Preference Violation by {LLM} (misses PrefEval error type accurate)"
    )


@pytest.mark.parametrize(
    ("alignment", "awareness", "status"),
    [(4, 2, "fail"), (4, 4, "pass"), (5, 3, "fail"), (4, None, "pass"), (3, None, "fail"), (3, 5, "fail")],
)
def test_the_rubric_rule(alignment, awareness, status):
    d = diagnose(make_case(judgments=rubric(alignment, awareness), probes=[mcq_probe(True)]))
    assert d.step("applied").status == status
    assert d.label == (dx.APPLIED if status == "pass" else dx.KNOWN_NOT_APPLIED)


def test_awareness_from_another_judge_model_does_not_count():
    js = [judgment("rubric", "alignment", 4), judgment("rubric", "awareness", 1, model="anthropic:claude")]
    d = diagnose(make_case(judgments=js))
    assert d.step("applied").status == "pass"
    assert d.step("applied").evidence == f"rubric alignment 4 by {LLM} (meets rubric alignment and awareness ≥ 4 of 5)"


def test_taxonomy_accurate_and_violation():
    ok = judgment("taxonomy", "label", 1.0, extra={"label": "Personalized Response"})
    bad = judgment("taxonomy", "label", 0.0, extra={"label": "Preference Violation"})
    assert diagnose(make_case(judgments=[ok])).step("applied") == dx.Step(
        "applied", "pass", f"taxonomy label Personalized Response by {LLM} (meets PrefEval error type accurate)"
    )
    assert diagnose(make_case(judgments=[bad], probes=[mcq_probe(True)])).label == dx.KNOWN_NOT_APPLIED


@pytest.mark.parametrize(("score", "status"), [(7, "pass"), (10, "pass"), (6, "fail"), (6.5, "fail")])
def test_checklist_seven_of_ten(score, status):
    d = diagnose(make_case(judgments=[judgment("checklist", "preference", score)]))
    assert d.step("applied").status == status
    assert d.step("applied").evidence.startswith(f"checklist preference {score:g} by {LLM}")


def test_mcq_answered_right_is_its_own_probe():
    d = diagnose(make_case(query_kind="mcq", judgments=[choice(True)], probes=[mcq_probe(False)]))
    assert d.label == dx.APPLIED
    assert d.step("known") == dx.Step(
        "known", "pass", "the answer is its own probe: choice accuracy 1 by parser:choice (meets the right option)"
    )


def test_mcq_answered_wrong_is_not_known():
    d = diagnose(make_case(query_kind="mcq", judgments=[choice(False)], probes=None))
    assert d.label == dx.NOT_KNOWN
    assert (
        d.reason() == "known: the answer is its own probe: choice accuracy 0 by parser:choice (misses the right option)"
    )
    tf = diagnose(make_case(query_kind="tf", judgments=[choice(False)]))
    assert tf.label == dx.NOT_KNOWN


def test_an_unreadable_mcq_answer_has_neither_probe_nor_verdict():
    d = diagnose(make_case(query_kind="mcq", judgments=[choice(None)]))
    assert d.step("known").evidence == "the answer's choice could not be read"
    assert d.label == "undetermined: no probe, no verdict"


def test_parse_failures_are_never_read_as_a_verdict():
    failed = [
        judgment("rubric", "alignment", None, parse_ok=False, error="no score"),
        judgment("rubric", "alignment", 1.0, parse_ok=False, human=True, model="human:operator"),
        judgment("taxonomy", "label", None, parse_ok=False, error="judge call(s) failed; no label"),
    ]
    assert diagnose(make_case(judgments=failed, probes=[mcq_probe(True)])).label == "undetermined: no verdict"
    # a failed human reading leaves the LLM verdict in charge
    d = diagnose(make_case(judgments=[*failed, *rubric(5, 5)], probes=[mcq_probe(True)]))
    assert d.label == dx.APPLIED and f"by {LLM}" in d.step("applied").evidence


def test_unreadable_probes_leave_known_unknown():
    d = diagnose(make_case(judgments=rubric(2, 2), probes=[mcq_probe(None), ProbeAnswer("probe:q", "open", "ok", [])]))
    assert d.step("known") == dx.Step("known", "unknown", "no probe answer could be read")
    assert d.label == "undetermined: no probe"
    # one readable failing probe is enough; the unread ones are counted
    d = diagnose(make_case(judgments=rubric(2, 2), probes=[mcq_probe(None), tf_probe(False)]))
    assert d.label == dx.NOT_KNOWN
    assert d.step("known").evidence == "MCQ q-mcq: unreadable; TF q-tf ✗ (1 unread)"
    d = diagnose(make_case(judgments=rubric(2, 2), probes=[mcq_probe(True, status="error"), tf_probe(True)]))
    assert d.step("known").evidence == "MCQ: no answer (error); TF q-tf ✓ (1 unread)"
    assert d.label == dx.KNOWN_NOT_APPLIED


def test_generated_probe_is_read_by_probe_recall():
    at_mark = ProbeAnswer("probe:q-open", "open", "ok", [recall_judgment(0.5, "states 2 of 4 checklist items")])
    d = diagnose(make_case(judgments=rubric(2, 2), probes=[at_mark]))
    assert d.step("known") == dx.Step("known", "pass", "generated probe ✓: states 2 of 4 checklist items (0.50)")
    below = ProbeAnswer("probe:q-open", "open", "ok", [recall_judgment(0.25, "states 1 of 4 checklist items")])
    d = diagnose(make_case(judgments=rubric(2, 2), probes=[below]))
    assert d.label == dx.NOT_KNOWN
    assert d.reason() == "known: generated probe ✗: states 1 of 4 checklist items (0.25)"


def test_personamem_distance_counts_as_in_context():
    depth = {"tokens": 12345, "blocks": 3, "proportion": 0.4, "source": "personamem"}
    d = diagnose(make_case(gold_sessions=(), evidence_depth=depth, plan=make_plan(evidence=()), judgments=rubric(2, 2)))
    assert d.step("in context").status == "pass"
    assert "12,345 tokens before the question" in d.step("in context").evidence
    no_depth = diagnose(make_case(gold_sessions=(), plan=make_plan(evidence=())))
    assert no_depth.step("in context") == dx.Step(
        "in context", "unknown", "the data marks no gold evidence for this query"
    )


def test_imported_run_stating_the_preference_verbatim_counts_as_in_context():
    prompt = "Remember:  PREFERS audiobooks, mostly non-fiction, at 1.5x speed,\nover paper books.\n\nAny tips?"
    plan = make_plan(context=(), evidence=(), prompt=prompt)
    d = diagnose(make_case(plan=plan, imported=True, judgments=rubric(2, 2), probes=[mcq_probe(True)]))
    assert d.step("in context") == dx.Step("in context", "pass", "the preference is stated verbatim in the prompt sent")
    assert d.label == dx.KNOWN_NOT_APPLIED
    other = diagnose(make_case(plan=make_plan(context=(), evidence=()), imported=True, judgments=rubric(2, 2)))
    assert other.step("in context") == dx.Step(
        "in context", "unknown", "imported run: the context the source sent is not rebuilt"
    )


def test_user_gone_leaves_in_context_unknown():
    d = diagnose(make_case(gold_sessions=None, judgments=rubric(2, 2), probes=[mcq_probe(False)]))
    assert d.step("in context") == dx.Step(
        "in context", "unknown", "the user is no longer stored: its gold evidence is unknown"
    )
    assert d.label == dx.NOT_KNOWN


def test_a_qa_query_without_preference_has_nothing_to_probe():
    d = diagnose(make_case(preference=None, judgments=[judgment("locomo", "f1", 0.4, model="metric:locomo")]))
    assert d.step("known").evidence == "no preference to probe (a QA query)"
    assert d.step("applied").evidence == "locomo f1 0.4 by metric:locomo (misses LoCoMo F1 ≥ 0.5)"
    assert d.label == "undetermined: no probe"


def test_a_failed_cupid_judge_call_is_not_a_verdict():
    """The checklist judge records a failed call as score 0 with ``error`` set (CUPID's protocol
    counts it as 0): the diagnosis reads that as "the answer did not apply the preference"."""
    failed = judgment(
        "checklist",
        "preference",
        0.0,
        error="judge call failed (CUPID scores 0): timeout",
        extra={"cupid_status": "judge_error"},
    )
    d = diagnose(make_case(judgments=[failed], probes=[mcq_probe(True)]))
    assert d.step("applied").status == "unknown"
    assert d.label == "undetermined: no verdict"


# -- cases from stored runs ------------------------------------------------------------------------


MODELS = ("demo:generic", "demo:oracle")
_ids = iter(range(1, 10_000))


def response(
    run_id: str, slot: int, model: str, *, step: str = "answer", final: bool = True, text: str = "", status: str = "ok"
):
    return StoredResponse(
        id=f"{run_id}-{slot}-{step}",
        slot=slot,
        model=model,
        is_demo=True,
        step=step,
        is_final=final,
        text=text,
        status=status,
        error=None,
        ttft_ms=None,
        duration_ms=None,
        input_tokens=None,
        output_tokens=None,
        cost_usd=None,
        cache_hit=False,
    )


def stored_judgment(run_id: str, response_id: str, kind: str, dimension: str, score: float | None, model: str):
    return StoredJudgment(
        id=next(_ids),
        run_id=run_id,
        response_id=response_id,
        kind=kind,
        dimension=dimension,
        score=score,
        scale_min=None,
        scale_max=None,
        rationale="why",
        raw="",
        parse_ok=score is not None,
        judge_model=model,
        prompt_version="v",
        temperature=None,
        heuristic=model.startswith(("demo:", "heuristic:")),
        human=False,
        error=None,
    )


def stored_run(
    run_id: str,
    query_id: str,
    *,
    models=MODELS,
    user: str = "maya",
    expression: int | None = 1,
    method: str = "zero-shot",
    label: str = "",
    probe_of: str | None = None,
    plan: PromptPlan | None = None,
    answer_format: str = "open",
) -> StoredRun:
    spec = RunSpec(
        user_id=user,
        query_id=query_id,
        expression_type=expression,
        method=method,
        models=[ModelSpec(id=m) for m in models],
        label=label,
        probe_of=probe_of,
    )
    plan = plan or make_plan(context=("maya-life-01", "maya-p1-e1"), evidence=(("maya-p1-e1", 900),))
    plan = plan.model_copy(update={"answer_format": answer_format})
    run = StoredRun(run_id, "2026-01-01T00:00:00", "ok", spec, plan)
    run.responses = [response(run_id, slot, m) for slot, m in enumerate(models)]
    return run


def probe_run(run_id: str, query_id: str, right: dict[str, bool], probe_of: str = "run-main") -> StoredRun:
    kind = "mcq" if "mcq" in query_id else "tf"
    run = stored_run(run_id, query_id, models=tuple(right), probe_of=probe_of, label="probe", answer_format=kind)
    for r in run.final_responses():
        score = 1.0 if right[r.model] else 0.0
        run.judgments.append(stored_judgment(run_id, r.id, "choice", "accuracy", score, "parser:choice"))
    return run


def main_run(**kw) -> StoredRun:
    run = stored_run("run-main", "p1-open", **kw)
    for r in run.final_responses():
        score = 5.0 if r.model == "demo:oracle" else 2.0
        for dim in ("alignment", "awareness"):
            run.judgments.append(stored_judgment(run.id, r.id, "rubric", dim, score, "demo:heuristic"))
    return run


def test_cases_of_a_stored_run_with_its_probes(maya):
    run = main_run()
    probes = [
        probe_run("run-p3", "p1-tf-no", {"demo:generic": True, "demo:oracle": True}),
        probe_run("run-p1", "p1-mcq", {"demo:generic": True, "demo:oracle": True}),  # older
        probe_run("run-p2", "p1-tf-yes", {"demo:generic": False, "demo:oracle": True}),
        probe_run("run-p4", "p1-mcq", {"demo:generic": False, "demo:oracle": True}),  # newer: wins
    ]
    generic, oracle = cases_of(run, maya, probes)
    assert [c.model for c in (generic, oracle)] == list(MODELS)
    assert generic.gold_sessions == ("maya-p1-e1",)
    assert generic.preference == maya.preference("p1").text
    assert generic.origin == "original"
    assert generic.query_kind == "open" and generic.checklist == () and generic.evidence_depth is None
    assert generic.imported is False
    assert [j.response_id for j in generic.judgments] == ["run-main-0-answer"] * 2
    # in probes_of order (mcq, tf-yes, tf-no), the latest run of each probe
    assert [(p.query_id, p.kind) for p in generic.probes] == [
        ("p1-mcq", "mcq"),
        ("p1-tf-yes", "tf"),
        ("p1-tf-no", "tf"),
    ]
    assert [p.judgments[0].run_id for p in generic.probes] == ["run-p4", "run-p2", "run-p3"]
    assert [p.judgments[0].score for p in generic.probes] == [0.0, 0.0, 1.0]
    assert all(p.judgments[0].response_id.endswith("-1-answer") for p in oracle.probes)
    d_generic, d_oracle = diagnose(generic), diagnose(oracle)
    assert d_generic.label == dx.NOT_KNOWN
    assert d_generic.reason() == "known: MCQ p1-mcq ✗; TF p1-tf-yes ✗; TF p1-tf-no ✓"
    assert d_oracle.label == dx.APPLIED and d_oracle.known == "pass"


def test_cases_of_without_probes_or_user(maya):
    run = main_run()
    (generic, _) = cases_of(run, maya)
    assert generic.probes is None
    assert diagnose(generic).label == "undetermined: no probe"
    gone = cases_of(run, None)[0]
    assert gone.gold_sessions is None and gone.preference is None and gone.origin is None
    assert gone.query_kind == "open"  # from the plan's answer format
    d = diagnose(gone)
    assert d.step("in context").status == "unknown"
    assert d.known == "unknown"


def test_a_probe_run_without_this_models_answer_gives_no_probe(maya):
    run = main_run()
    only_oracle = probe_run("run-p1", "p1-mcq", {"demo:oracle": True})
    generic, oracle = cases_of(run, maya, [only_oracle])
    assert generic.probes is None
    assert [p.query_id for p in oracle.probes] == ["p1-mcq"]


def test_a_later_probe_run_for_one_model_keeps_the_other_models_answers(maya):
    """Probes re-run for one model only (``probe_specs(..., models=[...])``) must not hide the other
    models' earlier answers to the same probe."""
    run = main_run()
    both = probe_run("run-p1", "p1-mcq", {"demo:generic": False, "demo:oracle": True})
    generic_again = probe_run("run-p2", "p1-mcq", {"demo:generic": True})
    generic, oracle = cases_of(run, maya, [both, generic_again])
    assert [p.judgments[0].run_id for p in generic.probes] == ["run-p2"]
    assert oracle.probes is not None and [p.judgments[0].run_id for p in oracle.probes] == ["run-p1"]


def test_intermediate_outputs_of_the_same_slot_only(maya):
    run = main_run(method="workflow")
    run.responses += [
        response("run-main", 0, "demo:generic", step="preferences", final=False, text="likes pasta"),
        response("run-main", 1, "demo:oracle", step="preferences", final=False, text=maya.preference("p1").text),
        response("run-main", 1, "demo:oracle", step="draft", final=False, text="cut off", status="error"),
    ]
    generic, oracle = cases_of(run, maya)
    assert generic.intermediate == [("preferences", "likes pasta")]
    assert oracle.intermediate == [("preferences", maya.preference("p1").text)]
    assert diagnose(generic).label == dx.NOT_RETRIEVED
    assert diagnose(oracle).step("retrieved").status == "pass"


def test_imported_label_and_generalized_origin(maya):
    run = stored_run("run-g", "g1-open", label="imported:hand.jsonl", expression=1)
    (case, _) = cases_of(run, maya)
    assert case.imported is True
    assert case.origin == "generalized"
    # a generalized preference's gold evidence is its originals' sessions
    assert case.gold_sessions == ("maya-p4-e1", "maya-p6-e1", "maya-p3-e1")


def test_cupid_case_carries_checklist_and_query_evidence(dana):
    query = dana.query("q-consistent-1")
    run = stored_run("run-d", "q-consistent-1", user="dana", expression=None)
    (case, _) = cases_of(run, dana)
    assert case.checklist == tuple(query.checklist) and len(case.checklist) == 4
    assert case.gold_sessions == ("dana-t01", "dana-t06", "dana-t13")
    assert case.preference == dana.preference("cp1").text


# -- restraint queries: misapplied -----------------------------------------------------------------
def restraint_case(*judgments: Judgment, **kw) -> Case:
    return make_case(restraint=True, judgments=list(judgments), **kw)


def test_misapplied_when_a_restraint_answer_drags_the_preference_in():
    d = diagnose(restraint_case(judgment("restraint", "held_back", 0.0, model="heuristic", heuristic=True)))
    assert d.label == dx.MISAPPLIED and d.category == dx.MISAPPLIED and d.restraint
    assert d.step("applied").status == "fail"
    assert d.step("applied").evidence.startswith("dragged in: restraint held_back 0")
    assert d.reason().startswith("applied: dragged in")


def test_a_restraint_answer_that_holds_back_counts_as_applied():
    d = diagnose(restraint_case(judgment("restraint", "held_back", 1.0, model="heuristic", heuristic=True)))
    assert d.label == dx.HELD_BACK and d.category == dx.APPLIED and d.restraint
    assert d.notes == ("restraint query: the preference was rightly left out",)


@pytest.mark.parametrize(("score", "label"), [(0.49, dx.MISAPPLIED), (0.5, dx.HELD_BACK), (1.0, dx.HELD_BACK)])
def test_the_op_bench_irrelevance_score_is_read_at_one_half(score, label):
    assert diagnose(restraint_case(judgment("op-bench", "irrelevance", score))).label == label


def test_the_llm_restraint_verdict_beats_the_lexical_one():
    held = judgment("restraint", "held_back", 1.0, model="heuristic", heuristic=True)
    assert diagnose(restraint_case(held, judgment("op-bench", "irrelevance", 0.2))).label == dx.MISAPPLIED


def test_a_restraint_query_ignores_the_ordinary_verdicts_and_earlier_steps():
    # the rubric would say "applied", the context misses the gold: neither decides a restraint label
    case = restraint_case(*rubric(5, 5), plan=make_plan(context=("s-life",), evidence=()))
    d = diagnose(case)
    assert d.label == "undetermined: no verdict" and d.restraint
    assert d.step("in context").status == "fail"


def test_an_ordinary_query_never_gets_misapplied():
    d = diagnose(make_case(judgments=[judgment("restraint", "held_back", 0.0, model="heuristic", heuristic=True)]))
    assert d.label == "undetermined: no probe, no verdict" and not d.restraint


def test_cases_of_reads_the_restraint_flag_from_the_query(maya):
    query = maya.query("p1-open")
    flagged = maya.model_copy(
        update={
            "queries": [
                q.model_copy(update={"meta": {**q.meta, "restraint": True}}) if q is query else q for q in maya.queries
            ]
        }
    )
    assert {c.restraint for c in cases_of(main_run(), flagged)} == {True}
    assert {c.restraint for c in cases_of(main_run(), maya)} == {False}
