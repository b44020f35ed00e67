"""From a stored run (and the runs probing it) to one diagnosis :class:`Case` per final answer.

Duck-typed on the stored rows (``storage.runs.StoredRun``: ``spec``, ``plan``, ``responses``,
``judgments``), so core never imports storage. The user may be gone (re-imported without the
query, deleted): the case then says its gold evidence is unknown rather than guessing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.analysis.diagnosis import Case, ProbeAnswer
from core.history.build import default_expression_type
from core.history.configs import ContextError, config_named
from core.methods import UnknownMethod, method_info
from core.model import EVIDENCE_DEPTH, PROBE_PREFIX, RESTRAINT, Query, UserBundle

#: The label prefix of runs made by ``prefscope import-results`` (their plans rebuild no context).
IMPORTED_LABEL = "imported:"


def _query(bundle: UserBundle | None, query_id: str) -> Query | None:
    if bundle is None:
        return None
    try:
        return bundle.query(query_id)
    except KeyError:
        return None


def _kind(query: Query | None, query_id: str, answer_format: str) -> str:
    if query is not None:
        return query.kind
    if query_id.startswith(PROBE_PREFIX):
        return "open"
    return answer_format.split("-", 1)[0]


def _canonical(spec: Any) -> tuple[str, str]:
    """(method, context) by their canonical names: a spec stores an alias as typed (``wf``)."""
    try:
        method = method_info(spec.method).name
    except UnknownMethod:
        method = spec.method
    try:
        context = config_named(spec.context).name
    except ContextError:
        context = spec.context
    return method, context


def _used_outputs(run: Any, slot: int) -> list[tuple[str, str]]:
    """The earlier steps' outputs the answer step reads (its ``{{output:…}}`` markers), else the
    last earlier output: Re-Centering answers from its selection, not from the extraction."""
    earlier = [(r.step, r.text) for r in run.responses if r.slot == slot and not r.is_final and r.status == "ok"]
    if not earlier or not run.plan.steps:
        return earlier
    needed = set(run.plan.steps[-1].needs())
    used = [(step, text) for step, text in earlier if step in needed]
    return used or earlier[-1:]


def cases_of(run: Any, bundle: UserBundle | None, probe_runs: Sequence[Any] = ()) -> list[Case]:
    spec, plan = run.spec, run.plan
    query = _query(bundle, spec.query_id)
    # a batch cell stores no expression type when none was asked: its context used the default one
    gold = (
        tuple(bundle.gold_evidence(query, default_expression_type(bundle, spec.expression_type)))
        if bundle and query
        else None
    )
    preference, origin = None, None
    if query is not None and bundle is not None:
        if query.preference_id:
            pref = bundle.preference(query.preference_id)
            preference, origin = pref.text, pref.origin
        else:
            preference = query.gold_preference
    order = {q.id: i for i, q in enumerate(bundle.probes_of(query))} if bundle and query else {}
    method, context = _canonical(spec)
    out = []
    for response in run.final_responses():
        # per probe query, the latest probe run that asked this model (runs come oldest first)
        latest: dict[str, ProbeAnswer] = {}
        for p in probe_runs:
            answer = _probe_answer(p, response.model, bundle)
            if answer is not None:
                latest[p.spec.query_id] = answer
        answered = sorted(latest.values(), key=lambda a: (order.get(a.query_id, len(order)), a.query_id))
        out.append(
            Case(
                run_id=run.id,
                response_id=response.id,
                model=response.model,
                query_id=spec.query_id,
                query_kind=_kind(query, spec.query_id, plan.answer_format),
                method=method,
                context=context,
                status=response.status,
                plan=plan,
                judgments=[j for j in run.judgments if j.response_id == response.id],
                gold_sessions=gold,
                preference=preference,
                checklist=tuple(query.checklist) if query else (),
                origin=origin,
                evidence_depth=query.meta.get(EVIDENCE_DEPTH) if query else None,
                intermediate=_used_outputs(run, response.slot),
                probes=answered or None,
                imported=spec.label.startswith(IMPORTED_LABEL),
                restraint=bool(query is not None and query.meta.get(RESTRAINT) is True),
            )
        )
    return out


def _probe_answer(probe_run: Any, model: str, bundle: UserBundle | None) -> ProbeAnswer | None:
    answer = next((r for r in probe_run.final_responses() if r.model == model), None)
    if answer is None:
        return None
    query_id = probe_run.spec.query_id
    return ProbeAnswer(
        query_id=query_id,
        kind=_kind(_query(bundle, query_id), query_id, probe_run.plan.answer_format),
        status=answer.status,
        judgments=[j for j in probe_run.judgments if j.response_id == answer.id],
    )
