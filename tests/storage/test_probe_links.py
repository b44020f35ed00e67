"""Knowledge-probe runs in storage (migration 008, ``runs.probe_of``) and the diagnosis end to end:
a real Workbench on a temporary SQLite file, the demo provider (no pacing) and the demo:heuristic
judge, on maya's p1-open (data MCQ / TF probes) and dana's CUPID query (a generated probe)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from app.workbench import Workbench
from core.analysis import diagnosis as dx
from core.analysis.diagnosis_funnel import funnel_table
from core.providers.base import ModelSpec
from core.run.spec import RunSpec, RunStarted
from core.settings import Settings
from storage.db import open_db
from storage.export import RunFilter, answer_run_ids
from storage.migrations import applied, discover, migrate
from storage.runs import load_run, probe_run_ids
from storage.users import delete_user

MODELS = ("demo:generic", "demo:oracle")
NOTE = "applied without the evidence in context: a guess, prior knowledge or a given preference"


def run_once(wb: Workbench, user: str = "maya", query: str = "p1-open", **kw) -> str:
    """One stored run, as `prefscope run` makes it: prepare, engine with the spec's judges, recorder."""
    data = dict(
        user_id=user,
        query_id=query,
        expression_type=1 if user == "maya" else None,
        context="simple",
        models=[ModelSpec(id=m) for m in MODELS],
        judges=["demo:heuristic"],
    )
    spec = RunSpec(**{**data, **kw})
    bundle = wb.user(user)
    plan = wb.prepare(spec, bundle, wb.filler_pools())
    engine = wb.engine(wb.recorder().record, judges=wb.judges(spec))
    run_id = asyncio.run(engine.run(spec, plan, bundle))
    wb.flush()
    return run_id


def by_model(results) -> dict[str, tuple]:
    return {case.model: (case, diagnosis) for case, diagnosis, _ in results}


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    path = tmp_path_factory.mktemp("probes") / "x.db"
    with Workbench.open(Settings(db=path, demo_tokens_per_s=0), path) as workbench:
        yield workbench
    mp.undo()


@pytest.fixture(scope="module")
def maya_run(wb):
    run_id = run_once(wb)
    before = by_model(wb.diagnoses([run_id]))
    specs = wb.probe_specs(run_id)
    events: list = []
    probe_ids = asyncio.run(wb.run_probes(specs, wb.user("maya"), events.append))
    wb.flush()
    return SimpleNamespace(run_id=run_id, before=before, specs=specs, events=events, probe_ids=probe_ids)


# -- schema ----------------------------------------------------------------------------------------
def test_migration_008_adds_runs_probe_of(tmp_path):
    db = open_db(tmp_path / "fresh.db")
    assert "probe_of" in {c.name for c in db["runs"].columns}
    assert "runs_by_probe_of" in {i.name for i in db["runs"].indexes}
    older = open_db(tmp_path / "older.db", migrate=False)
    migrate(older, [m for m in discover() if m.version < 8])
    assert "probe_of" not in {c.name for c in older["runs"].columns}
    assert migrate(older)[0] == "m008_probes"
    assert (8, "m008_probes") in [(v, n) for v, n, _ in applied(older)]
    assert "probe_of" in {c.name for c in older["runs"].columns}


# -- storing and linking probe runs ----------------------------------------------------------------
def test_probe_specs_of_a_stored_run(wb, maya_run):
    assert [s.query_id for s in maya_run.specs] == ["p1-mcq", "p1-tf-yes", "p1-tf-no"]
    assert {(s.probe_of, s.label) for s in maya_run.specs} == {(maya_run.run_id, "probe")}
    assert all([m.id for m in s.models] == list(MODELS) and s.judges == [] for s in maya_run.specs)


def test_the_recorder_stores_probe_of(wb, maya_run):
    rows = dict(wb.db.execute("SELECT id, probe_of FROM runs").fetchall())
    assert rows[maya_run.run_id] is None
    assert {rows[p] for p in maya_run.probe_ids} == {maya_run.run_id}
    for probe_id, spec in zip(maya_run.probe_ids, maya_run.specs, strict=True):
        stored = load_run(wb.db, probe_id)
        assert stored.spec == spec and stored.spec.probe_of == maya_run.run_id
        # scored by their own judges (the choice parser), not the probed run's demo:heuristic
        assert {(j.kind, j.judge_model) for j in stored.judgments} == {("choice", "parser:choice")}
        assert len(stored.judgments) == 2
    started = [e for e in maya_run.events if isinstance(e, RunStarted)]
    assert [e.run_id for e in started] == maya_run.probe_ids


def test_probe_run_ids_and_answer_run_ids(wb, maya_run):
    other = run_once(wb, query="p2-open")
    links = probe_run_ids(wb.db, [maya_run.run_id, other])
    assert set(links) == {maya_run.run_id, other}
    assert sorted(links[maya_run.run_id]) == sorted(maya_run.probe_ids) and links[other] == []
    assert probe_run_ids(wb.db, []) == {}
    answers = answer_run_ids(wb.db)
    assert maya_run.run_id in answers and other in answers
    assert not set(answers) & set(maya_run.probe_ids)
    assert answer_run_ids(wb.db, RunFilter(labels=["probe"])) == []  # probe runs are never answers
    assert answer_run_ids(wb.db, RunFilter(run_ids=[maya_run.run_id, *maya_run.probe_ids])) == [maya_run.run_id]


def test_probe_run_ids_are_oldest_first_within_one_second(wb):
    """Run ids are a second-stamp plus random hex, and ``created_at`` has seconds: ORDER BY
    created_at, id does not give creation order within a second (the diagnosis then may read an
    older probe run as the latest)."""
    spec = RunSpec(user_id="maya", query_id="p1-mcq", models=[ModelSpec(id="demo:oracle")], probe_of="run-ordered")
    plan = wb.prepare(spec, wb.user("maya"), wb.filler_pools())
    engine = wb.engine(wb.recorder().record)
    first = asyncio.run(engine.run(spec, plan, wb.user("maya"), run_id="run-zzz-first"))
    second = asyncio.run(engine.run(spec, plan, wb.user("maya"), run_id="run-aaa-second"))
    wb.flush()
    with wb.db.conn:
        wb.db.execute("UPDATE runs SET created_at = '2026-01-01T00:00:00+00:00' WHERE probe_of = 'run-ordered'")
    assert probe_run_ids(wb.db, ["run-ordered"])["run-ordered"] == [first, second]


# -- diagnoses -------------------------------------------------------------------------------------
def test_before_probing_the_failed_answer_is_undetermined(maya_run):
    (_, generic), (_, oracle) = maya_run.before["demo:generic"], maya_run.before["demo:oracle"]
    assert generic.label == "undetermined: no probe"
    assert oracle.label == dx.APPLIED


def test_after_probing_oracle_applied_and_generic_as_its_probes_say(wb, maya_run):
    results = wb.diagnoses([maya_run.run_id])
    assert [(c.run_id, c.query_id) for c, _, _ in results] == [(maya_run.run_id, "p1-open")] * 2
    assert [(f["expression_type"], f["label"]) for _, _, f in results] == [(1, "")] * 2
    got = by_model(results)
    case, oracle = got["demo:oracle"]
    assert oracle.label == dx.APPLIED and oracle.known == "pass"
    assert oracle.step("in context").evidence.startswith("1 of 1 gold session(s) sent; nearest maya-p1-e1")
    assert oracle.step("known").evidence == "MCQ p1-mcq ✓; TF p1-tf-yes ✓; TF p1-tf-no ✓"
    assert built_case(wb, maya_run.run_id, "demo:oracle").gold_sessions == ("maya-p1-e1",)
    # generic: what its stored probe answers say
    case, generic = got["demo:generic"]
    right = {}
    for probe_id in maya_run.probe_ids:
        stored = load_run(wb.db, probe_id)
        (answer,) = [r for r in stored.final_responses() if r.model == "demo:generic"]
        (j,) = [j for j in stored.judgments if j.response_id == answer.id]
        right[stored.spec.query_id] = j.score == 1.0
    assert list(case.probe_queries) == ["p1-mcq", "p1-tf-yes", "p1-tf-no"]
    expected = dx.KNOWN_NOT_APPLIED if all(right.values()) else dx.NOT_KNOWN
    assert generic.label == expected
    assert generic.step("applied").status == "fail"
    marks = "; ".join(f"{'MCQ' if 'mcq' in q else 'TF'} {q} {'✓' if ok else '✗'}" for q, ok in right.items())
    assert generic.step("known").evidence == marks
    table = funnel_table(results)
    assert [(r["model"], r["n"], r[dx.APPLIED], r[expected]) for r in table.as_dicts()] == [
        ("demo:generic", 1, 0, 1),
        ("demo:oracle", 1, 1, 0),
    ]


def test_custom_context_without_the_gold_session_is_not_in_context(wb):
    run_id = run_once(wb, context="custom", method_options={"session_ids": ["maya-life-01", "maya-p2-e1"]})
    got = by_model(wb.diagnoses([run_id]))
    _, generic = got["demo:generic"]
    assert generic.label == dx.NOT_IN_CONTEXT
    assert generic.reason() == "in context: none of the 1 gold session(s) (maya-p1-e1) is among the 2 sent"
    _, oracle = got["demo:oracle"]  # the oracle is given the preference: applied, with the note
    assert oracle.label == dx.APPLIED and oracle.notes == (NOTE,)


def test_cupid_generated_probe_is_read_by_probe_recall(wb):
    run_id = run_once(wb, user="dana", query="q-consistent-1")
    (spec,) = wb.probe_specs(run_id)
    assert (spec.query_id, spec.judges) == ("probe:q-consistent-1", ["probe-recall"])
    (probe_id,) = asyncio.run(wb.run_probes([spec], wb.user("dana")))
    wb.flush()
    stored = load_run(wb.db, probe_id)
    assert {(j.kind, j.dimension, j.judge_model) for j in stored.judgments} == {
        ("probe", "recall", "heuristic:probe-recall")
    }
    got = by_model(wb.diagnoses([run_id]))
    _, generic = got["demo:generic"]
    case = built_case(wb, run_id, "demo:generic")
    assert [(p.query_id, p.kind) for p in case.probes] == [("probe:q-consistent-1", "open")]
    assert case.checklist and len(case.checklist) == 4
    assert generic.label == dx.NOT_KNOWN
    assert generic.reason() == "known: generated probe ✗: states 0 of 4 checklist items (0.00)"
    _, oracle = got["demo:oracle"]
    assert oracle.label == dx.APPLIED
    assert oracle.step("known") == dx.Step("known", "pass", "generated probe ✓: states 3 of 4 checklist items (0.75)")


def test_an_mcq_run_is_its_own_probe(wb):
    run_id = run_once(wb, query="p1-mcq", judges=[])
    assert wb.probe_specs(run_id) == []
    got = by_model(wb.diagnoses([run_id]))
    _, oracle = got["demo:oracle"]
    assert oracle.label == dx.APPLIED
    assert oracle.step("known").evidence.startswith("the answer is its own probe: choice accuracy 1")


def test_only_models_whose_answer_finished_are_probed(wb):
    run_id = run_once(wb, models=[ModelSpec(id="demo:flaky"), ModelSpec(id="demo:oracle")])
    specs = wb.probe_specs(run_id)
    assert {tuple(m.id for m in s.models) for s in specs} == {("demo:oracle",)}
    _, flaky = by_model(wb.diagnoses([run_id]))["demo:flaky"]
    assert flaky.label == "undetermined: no answer (error)"


def test_context_alias_no_history_is_not_in_context(wb):
    """`--context no-history` is an alias of "none" (core.history.configs); the spec stores it as typed."""
    run_id = run_once(wb, context="no-history")
    _, generic = by_model(wb.diagnoses([run_id]))["demo:generic"]
    assert generic.label == dx.NOT_IN_CONTEXT


def test_method_alias_wf_checks_the_workflow_step(wb):
    """`--method wf` is an alias of "workflow"; its intermediate step must be checked like workflow's."""
    run_id = run_once(wb, method="wf")
    assert load_run(wb.db, run_id).plan.method == "workflow"
    _, generic = by_model(wb.diagnoses([run_id]))["demo:generic"]
    assert generic.step("retrieved").status != "n/a"


def test_user_gone_leaves_in_context_unknown(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    path = tmp_path / "gone.db"
    with Workbench.open(Settings(db=path, demo_tokens_per_s=0), path) as wb:
        run_id = run_once(wb)
        asyncio.run(wb.run_probes(wb.probe_specs(run_id), wb.user("maya")))
        wb.flush()
        assert delete_user(wb.db, "maya")
    with Workbench.open(Settings(db=path, demo_tokens_per_s=0), path, sample_data=False) as wb:
        results = wb.diagnoses([run_id])
        assert all(built_case(wb, run_id, c.model, user=None).gold_sessions is None for c, _, _ in results)
    assert len(results) == 2
    for case, diagnosis, _ in results:
        assert case.preference is None
        assert diagnosis.step("in context") == dx.Step(
            "in context", "unknown", "the user is no longer stored: its gold evidence is unknown"
        )


def test_user_gone_still_reads_the_stored_probe_answers(tmp_path, monkeypatch):
    """The probe answers and their choice judgments are stored rows: a deleted user makes the gold
    evidence unknown, but the probes still say whether the model knew the preference."""
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    path = tmp_path / "gone.db"
    with Workbench.open(Settings(db=path, demo_tokens_per_s=0), path) as wb:
        run_id = run_once(wb)
        asyncio.run(wb.run_probes(wb.probe_specs(run_id), wb.user("maya")))
        wb.flush()
        with_user = by_model(wb.diagnoses([run_id]))["demo:oracle"][1].known
        delete_user(wb.db, "maya")
    with Workbench.open(Settings(db=path, demo_tokens_per_s=0), path, sample_data=False) as wb:
        _, oracle = by_model(wb.diagnoses([run_id]))["demo:oracle"]
    assert with_user == "pass"
    assert oracle.known == "pass"


def built_case(wb, run_id: str, model: str, user="stored"):
    """The case a diagnosis of ``model``'s answer is made from (the workbench keeps only its answer)."""
    from core.analysis.diagnosis_cases import cases_of

    run = load_run(wb.db, run_id)
    bundle = wb.user(run.spec.user_id) if user == "stored" else user
    probes = [load_run(wb.db, p) for p in probe_run_ids(wb.db, [run_id])[run_id]]
    (case,) = [c for c in cases_of(run, bundle, probes) if c.model == model]
    return case
