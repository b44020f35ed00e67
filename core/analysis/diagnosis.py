"""Why did an answer fail? Find → know → apply, from stored rows only.

Each answer gets four steps, each ``pass`` / ``fail`` / ``unknown`` / ``n/a`` with the evidence for it:

- **in context**: a gold evidence session is in the history the model was sent (and how many
  tokens before the question); PersonaMem, which labels no turns, by its own distance; a run with
  no rebuilt context (imported) when the preference is stated verbatim in the stored prompt;
- **retrieved**: RAG: a gold turn among the retrieved ones (its rank); memory methods (workflow,
  summary memory, Re-Centering): the intermediate step's output still states the preference
  (:func:`core.judges.probe_recall.recall` ≥ ``KNOWN_AT``); ``n/a`` for other methods;
- **known**: the knowledge probes of the same model in the same context and method
  (:mod:`core.run.probes`) all answered right: MCQ / true-false by the choice parser, a generated
  probe by ``probe-recall`` ≥ ``KNOWN_AT``. An MCQ / true-false answer is its own probe;
- **applied**: the answer's verdict, read from the first judge that has one, humans first, then
  LLM judges, parsers, heuristics, and within a source in the order of :data:`APPLIED_RULES`.

The label is the first step that failed, read in that order, once the answer is known not to
have applied the preference::

    applied                     the verdict passes (whatever the earlier steps say: a note
                                marks "applied without the evidence in context")
    not in context              verdict fails; the evidence was not sent
    not retrieved               verdict fails; sent, but retrieval / the memory step lost it
    not known                   verdict fails; the probes fail
    known, not applied          verdict fails; the probes pass
    undetermined: no probe      verdict fails; no step failed and no probe was run (or read)
    undetermined: no verdict    no judge gave the answer a verdict (also "no probe, no verdict")
    undetermined: no answer     the answer did not finish (error, cancelled)

A **restraint** query (``Query.meta["restraint"]``: its gold says the user's preference should not
change the answer, as OP-Bench's irrelevance questions) is read the other way round: its verdict
comes from :data:`RESTRAINT_RULES` and says whether the answer held the preference back::

    applied: held back          the verdict passes: the preference was rightly left out (counted
                                with ``applied``: the answer handled the preference right)
    misapplied                  the verdict fails: the answer drags the preference in
    undetermined: no verdict    no restraint verdict on this answer

The find / know steps are still shown; they do not change a restraint label.

Pure functions over plain values: no storage, no UI.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core.judges.aggregate import source_of
from core.judges.probe_recall import DIMENSION as RECALL_DIMENSION
from core.judges.probe_recall import KIND as RECALL_KIND
from core.judges.probe_recall import KNOWN_AT, recall
from core.plan import PromptPlan

StepStatus = Literal["pass", "fail", "unknown", "n/a"]

APPLIED = "applied"
NOT_IN_CONTEXT = "not in context"
NOT_RETRIEVED = "not retrieved"
NOT_KNOWN = "not known"
KNOWN_NOT_APPLIED = "known, not applied"
MISAPPLIED = "misapplied"
#: A restraint query's answer that rightly left the preference out (category :data:`APPLIED`).
HELD_BACK = "applied: held back"
UNDETERMINED = "undetermined"
#: The labels in funnel order: where an answer loses the preference, then the ones that kept it.
LABELS = (NOT_IN_CONTEXT, NOT_RETRIEVED, NOT_KNOWN, KNOWN_NOT_APPLIED, MISAPPLIED, APPLIED, UNDETERMINED)
#: The step whose failure gives each failure label.
STEP_LABEL = {"in context": NOT_IN_CONTEXT, "retrieved": NOT_RETRIEVED, "known": NOT_KNOWN}
STEPS = ("in context", "retrieved", "known", "applied")

#: Methods whose answer is written from an intermediate step's output (a summary, selected
#: attributes) rather than from the history itself: the "retrieved" step checks that output.
MEMORY_METHODS = ("workflow", "summary-memory", "recentering")

#: The verdicts read for "applied", in the order tried: (kind, {dimension: pass mark}, what it is).
#: The first dimension is required; the others count when the same judge scored them. Marks are
#: prefscope's where the benchmark has none: RealPref's rubric reads "applied" as alignment ≥ 4
#: ("aligned and mostly consistent") AND awareness ≥ 4 ("integrates the preference"; 3 is "highly
#: generic"), so a generic answer that merely avoids a conflict is not applied; CUPID's 7 is "Good";
#: LoCoMo F1 0.5 is half the gold answer's tokens.
APPLIED_RULES: tuple[tuple[str, dict[str, float], str], ...] = (
    ("taxonomy", {"label": 1}, "PrefEval error type accurate"),
    ("checklist", {"preference": 7}, "CUPID checklist score ≥ 7 of 10"),
    ("rubric", {"alignment": 4, "awareness": 4}, "rubric alignment and awareness ≥ 4 of 5"),
    ("choice", {"accuracy": 1}, "the right option"),
    ("longmemeval", {"accuracy": 1}, "LongMemEval judge: correct"),
    ("locomo", {"f1": 0.5}, "LoCoMo F1 ≥ 0.5"),
    ("pmv3-slice", {"held_out_hit": 1}, "PersonaMem-v3: the held-out preference matched (similarity ≥ 0.5)"),
)
#: The verdicts read for a restraint query's "applied" step (passes = the preference held back).
RESTRAINT_RULES: tuple[tuple[str, dict[str, float], str], ...] = (
    ("op-bench", {"irrelevance": 0.5}, "OP-Bench irrelevance score ≥ 0.5: no over-personalization"),
    ("pmv3-slice", {"held_back": 1}, "PersonaMem-v3: no held-out hit, no AVOID leak, carve-out respected"),
    ("restraint", {"held_back": 1}, "the answer leaves the user's stored preferences out (lexical)"),
)
_SOURCES = ("human", "llm", "recorded", "parser", "heuristic")


@dataclass(frozen=True)
class ProbeAnswer:
    """One probe's answer by the model being diagnosed, with the judgments of that answer."""

    query_id: str
    kind: str  # mcq | tf | open (generated)
    status: str
    judgments: Sequence[Any] = ()


@dataclass(frozen=True)
class Case:
    """Everything the diagnosis of one final answer reads (built from stored rows by the caller)."""

    run_id: str
    response_id: str
    model: str
    query_id: str
    query_kind: str
    method: str
    context: str
    status: str
    plan: PromptPlan
    judgments: Sequence[Any] = ()
    #: Gold evidence session ids for the query and expression type; None when the user is gone.
    gold_sessions: tuple[str, ...] | None = ()
    #: The preference (or gold preference) the answer should follow; None for QA without one.
    preference: str | None = None
    checklist: tuple[str, ...] = ()
    origin: str | None = None
    #: PersonaMem's distance of the reference from the question (``Query.meta["evidence_depth"]``).
    evidence_depth: dict | None = None
    #: The earlier steps' outputs this model's answer step reads (step name, text), for memory methods.
    intermediate: Sequence[tuple[str, str]] = ()
    #: This model's answers to the probes of the query; None when no probe was ever run.
    probes: Sequence[ProbeAnswer] | None = None
    imported: bool = False
    #: A restraint query: its gold says the preference should not change the answer.
    restraint: bool = False

    def answer(self) -> Answer:
        """Which answer this case is, without the plan, judgments and texts it is diagnosed from:
        what views keep of each diagnosed answer (a run's plan holds its whole prompt)."""
        return Answer(
            self.run_id,
            self.response_id,
            self.model,
            self.query_id,
            self.query_kind,
            self.method,
            self.context,
            self.status,
            self.origin,
            self.imported,
            self.preference,
            tuple(dict.fromkeys(p.query_id for p in self.probes or ())),
        )


@dataclass(frozen=True)
class Answer:
    """The diagnosed answer as views list and group it (the scalar fields of :class:`Case`)."""

    run_id: str
    response_id: str
    model: str
    query_id: str
    query_kind: str
    method: str
    context: str
    status: str
    origin: str | None = None
    imported: bool = False
    preference: str | None = None
    #: The probe queries this model answered (none: never probed, or nothing to probe).
    probe_queries: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    name: str
    status: StepStatus
    evidence: str


@dataclass(frozen=True)
class Diagnosis:
    label: str
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: Diagnosed as a restraint query (its "applied" step says whether the preference was held back).
    restraint: bool = False

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    @property
    def category(self) -> str:
        """The label without what an undetermined one misses (one of :data:`LABELS`)."""
        if self.label.startswith(UNDETERMINED):
            return UNDETERMINED
        return APPLIED if self.label == HELD_BACK else self.label

    @property
    def known(self) -> StepStatus:
        return self.step("known").status

    def reason(self) -> str:
        """The evidence that decided the label, in one line."""
        if self.category == UNDETERMINED:
            shown = [s for s in self.steps if s.status == "unknown" and s.name in ("known", "applied")] or [
                s for s in self.steps if s.status == "unknown"
            ]
        elif self.label == KNOWN_NOT_APPLIED:
            shown = [self.step("known"), self.step("applied")]
        elif self.category == APPLIED or self.label == MISAPPLIED:
            shown = [self.step("applied")]
        else:
            shown = [next(s for s in self.steps if STEP_LABEL.get(s.name) == self.label)]
        return " · ".join(f"{s.name}: {s.evidence}" for s in shown)


def diagnose(case: Case) -> Diagnosis:
    if case.status not in ("ok", "incomplete"):
        unknown = tuple(Step(n, "unknown", "no finished answer") for n in STEPS)
        return Diagnosis(f"{UNDETERMINED}: no answer ({case.status})", unknown)
    if case.restraint:
        return _restraint(case)
    steps = (in_context(case), retrieved(case), known(case), applied(case))
    found, _, know, verdict = steps
    notes: tuple[str, ...] = ()
    if verdict.status == "pass":
        if found.status == "fail":
            notes = ("applied without the evidence in context: a guess, prior knowledge or a given preference",)
        return Diagnosis(APPLIED, steps, notes)
    if verdict.status == "unknown":
        missing = (["no probe"] if know.status == "unknown" else []) + ["no verdict"]
        return Diagnosis(f"{UNDETERMINED}: {', '.join(missing)}", steps)
    for step in steps[:3]:
        if step.status == "fail":
            return Diagnosis(STEP_LABEL[step.name], steps)
    if know.status == "pass":
        return Diagnosis(KNOWN_NOT_APPLIED, steps)
    return Diagnosis(f"{UNDETERMINED}: no probe", steps)


def _restraint(case: Case) -> Diagnosis:
    steps = (in_context(case), retrieved(case), known(case), restrained(case))
    verdict = steps[-1]
    if verdict.status == "pass":
        return Diagnosis(HELD_BACK, steps, ("restraint query: the preference was rightly left out",), restraint=True)
    if verdict.status == "fail":
        return Diagnosis(
            MISAPPLIED, steps, ("restraint query: the preference should not change the answer",), restraint=True
        )
    return Diagnosis(f"{UNDETERMINED}: no verdict", steps, ("restraint query",), restraint=True)


# -- the four steps ----------------------------------------------------------------------------
def in_context(case: Case) -> Step:
    plan = case.plan
    name = "in context"
    if case.context == "none":
        return Step(name, "fail", "no history was sent (context: none)")
    gold = case.gold_sessions
    if not plan.context:
        if case.preference and _stated_in_prompt(plan, case.preference):
            return Step(name, "pass", "the preference is stated verbatim in the prompt sent")
        why = "imported run: the context the source sent is not rebuilt" if case.imported else "no context recorded"
        return Step(name, "unknown", why)
    if gold is None:
        return Step(name, "unknown", "the user is no longer stored: its gold evidence is unknown")
    if not gold:
        depth = case.evidence_depth or {}
        if depth.get("tokens") is not None:
            return Step(
                name,
                "pass",
                f"by the dataset's distance: the reference is {int(depth['tokens']):,} tokens before the "
                "question (no turn-level labels)",
            )
        return Step(name, "unknown", "the data marks no gold evidence for this query")
    present = [e for e in plan.evidence if e.session_id in gold]
    if not present:
        shown = ", ".join(gold[:4]) + ("…" if len(gold) > 4 else "")
        return Step(
            name, "fail", f"none of the {len(gold)} gold session(s) ({shown}) is among the {len(plan.context)} sent"
        )
    nearest = min(present, key=lambda e: e.tokens_to_query)
    return Step(
        name,
        "pass",
        f"{len(present)} of {len(gold)} gold session(s) sent; nearest {nearest.session_id}, "
        f"{nearest.tokens_to_query:,} tokens before the question",
    )


def retrieved(case: Case) -> Step:
    plan = case.plan
    name = "retrieved"
    if plan.retrieved:
        k = len(plan.retrieved)
        hits = sorted(r.rank for r in plan.retrieved if r.is_evidence)
        if hits:
            return Step(name, "pass", f"a gold turn retrieved at rank {hits[0]} of {k}")
        return Step(name, "fail", f"none of the top {k} retrieved turns is gold evidence")
    if case.method in MEMORY_METHODS and case.intermediate and case.preference:
        text = "\n".join(t for _, t in case.intermediate)
        share, why = recall(case.preference, list(case.checklist), text)
        steps = ", ".join(n for n, _ in case.intermediate)
        if share is None:
            return Step(name, "unknown", f"{steps}: {why}")
        status: StepStatus = "pass" if share >= KNOWN_AT else "fail"
        verb = "kept" if status == "pass" else "lost"
        return Step(name, status, f"{verb} by the {steps} output: {why} ({share:.2f}; lexical)")
    return Step(name, "n/a", "the method sends the history itself")


def known(case: Case) -> Step:
    name = "known"
    if case.query_kind in ("mcq", "tf"):
        verdict = _verdict(case.judgments, only=("choice",))
        if verdict is None:
            return Step(name, "unknown", "the answer's choice could not be read")
        ok, why = verdict
        return Step(name, "pass" if ok else "fail", f"the answer is its own probe: {why}")
    if case.probes is None:
        if not case.preference and case.gold_sessions is not None:
            return Step(name, "unknown", "no preference to probe (a QA query)")
        return Step(name, "unknown", "no probe run (probes need a model: `--probe`, or `p` in the TUI)")
    results = [_probe_result(p) for p in case.probes]
    read = [r for r in results if r[0] is not None]
    if not read:
        return Step(name, "unknown", "no probe answer could be read")
    ok = all(r[0] for r in read)
    unread = len(results) - len(read)
    why = "; ".join(r[1] for r in results) + (f" ({unread} unread)" if unread else "")
    return Step(name, "pass" if ok else "fail", why)


def applied(case: Case) -> Step:
    verdict = _verdict(case.judgments)
    if verdict is None:
        return Step("applied", "unknown", "no judge verdict on this answer")
    ok, why = verdict
    return Step("applied", "pass" if ok else "fail", why)


def restrained(case: Case) -> Step:
    """A restraint query's "applied" step: passes when the answer held the preference back."""
    verdict = _verdict(case.judgments, rules=RESTRAINT_RULES)
    if verdict is None:
        return Step(
            "applied", "unknown", "no restraint verdict on this answer (judge `restraint` or `op-bench:<model>`)"
        )
    ok, why = verdict
    return Step("applied", "pass" if ok else "fail", ("held back: " if ok else "dragged in: ") + why)


# -- reading verdicts --------------------------------------------------------------------------
def _verdict(
    judgments: Sequence[Any],
    only: Sequence[str] | None = None,
    rules: tuple[tuple[str, dict[str, float], str], ...] = APPLIED_RULES,
) -> tuple[bool, str] | None:
    """(passes, why) from the first judge with a score, by source then :data:`APPLIED_RULES`."""
    for source in _SOURCES:
        # a failed judge call is no verdict, even where a benchmark scores it 0 (CUPID's checklist)
        mine = [
            j
            for j in judgments
            if source_of(j) == source and j.parse_ok and j.score is not None and not getattr(j, "error", None)
        ]
        for kind, marks, what in rules:
            if only is not None and kind not in only:
                continue
            required = next(iter(marks))
            for first in (j for j in mine if j.kind == kind and j.dimension == required):
                same = {j.dimension: j for j in mine if j.kind == kind and j.judge_model == first.judge_model}
                used = [same[d] for d in marks if d in same]
                ok = all(float(j.score) >= marks[j.dimension] for j in used)
                shown = ", ".join(f"{j.dimension} {_shown(j)}" for j in used)
                return ok, f"{kind} {shown} by {first.judge_model} ({'meets' if ok else 'misses'} {what})"
    return None


def _shown(j: Any) -> str:
    label = (j.extra or {}).get("label") if j.kind == "taxonomy" else None
    return str(label) if label else _num(float(j.score))


def _probe_result(p: ProbeAnswer) -> tuple[bool | None, str]:
    tag = "generated probe" if p.kind == "open" else p.kind.upper()
    if p.status not in ("ok", "incomplete"):
        return None, f"{tag}: no answer ({p.status})"
    if p.kind in ("mcq", "tf"):
        verdict = _verdict(p.judgments, only=("choice",))
        if verdict is None:
            return None, f"{tag} {p.query_id}: unreadable"
        return verdict[0], f"{tag} {p.query_id} {'✓' if verdict[0] else '✗'}"
    for j in p.judgments:
        if j.kind == RECALL_KIND and j.dimension == RECALL_DIMENSION and j.parse_ok and j.score is not None:
            ok = float(j.score) >= KNOWN_AT
            return ok, f"{tag} {'✓' if ok else '✗'}: {j.rationale} ({float(j.score):.2f})"
    return None, f"{tag}: not scored"


def _stated_in_prompt(plan: PromptPlan, preference: str) -> bool:
    needle = " ".join(preference.split()).lower()
    return any(needle in " ".join(m.content.split()).lower() for s in plan.steps for m in s.messages)


def _num(value: float) -> str:
    return f"{value:g}"
