"""Knowledge-probe runs (:mod:`core.run.probes`): their specs, running them through the real engine
with the real demo provider, the engine's ``judges=`` override, and how ``probe_of`` is dumped."""

from __future__ import annotations

import json

from core.judges import judges_for
from core.judges.heuristic import HeuristicJudge
from core.providers.base import ModelSpec
from core.providers.demo import DemoProvider
from core.run.engine import Engine
from core.run.grid import cell_key
from core.run.prepare import prepare
from core.run.probes import probe_label, probe_specs, run_probes
from core.run.spec import JudgeScored, ResponseFinished, RunFinished, RunSpec, RunStarted
from core.settings import Settings

MODELS = ["demo:generic", "demo:oracle"]
CHANGED = {"query_id", "models", "judges", "probe_of", "label"}


def spec_for(user: str = "maya", query: str = "p1-open", **kw) -> RunSpec:
    data = dict(
        user_id=user,
        query_id=query,
        expression_type=1 if user == "maya" else None,
        context="simple",
        seed=3,
        method="zero-shot",
        method_options={"k": 3},
        models=[ModelSpec(id=m) for m in MODELS],
        judges=["demo:heuristic"],
        label="b1",
    )
    return RunSpec(**{**data, **kw})


# -- specs -----------------------------------------------------------------------------------------
def test_data_probes_copy_the_spec_but_query_judges_link_and_label(maya):
    spec = spec_for()
    specs = probe_specs(spec, "run-x", maya)
    assert [s.query_id for s in specs] == ["p1-mcq", "p1-tf-yes", "p1-tf-no"]
    for s in specs:
        assert s.judges == []  # the choice parser scores them (always added)
        assert s.probe_of == "run-x"
        assert s.label == "probe:b1"
        assert s.models == spec.models
        assert s.model_dump(exclude=CHANGED) == spec.model_dump(exclude=CHANGED)
    assert spec.probe_of is None and spec.query_id == "p1-open"  # the probed spec is untouched


def test_a_generated_probe_is_judged_by_probe_recall(dana):
    (s,) = probe_specs(spec_for("dana", "q-consistent-1"), "run-d", dana)
    assert (s.query_id, s.judges, s.probe_of, s.label) == (
        "probe:q-consistent-1",
        ["probe-recall"],
        "run-d",
        "probe:b1",
    )


def test_models_filter_and_empty_cases(maya):
    spec = spec_for()
    (mcq, *_) = probe_specs(spec, "run-x", maya, models=["demo:oracle", "demo:absent"])
    assert [m.id for m in mcq.models] == ["demo:oracle"]
    assert probe_specs(spec, "run-x", maya, models=[]) == []
    assert probe_specs(spec, "run-x", maya, models=["demo:absent"]) == []
    assert probe_specs(spec_for(query="p1-mcq"), "run-x", maya) == []
    assert probe_label("") == "probe" and probe_label("b1") == "probe:b1"
    unlabelled = probe_specs(spec.model_copy(update={"label": ""}), "run-x", maya)
    assert {s.label for s in unlabelled} == {"probe"}


# -- the spec dump ---------------------------------------------------------------------------------
def test_probe_of_is_dumped_only_when_set():
    spec = spec_for()
    assert "probe_of" not in spec.model_dump()
    assert "probe_of" not in json.loads(spec.model_dump_json())
    linked = spec.model_copy(update={"probe_of": "run-x"})
    assert linked.model_dump()["probe_of"] == "run-x"
    assert RunSpec.model_validate_json(linked.model_dump_json()) == linked
    # a stored spec from before the field reads back the same and keeps its batch cell key
    old = json.loads(spec.model_dump_json())
    again = RunSpec.model_validate(old)
    assert again.probe_of is None and cell_key(again) == cell_key(spec)
    assert cell_key(linked) != cell_key(spec)


# -- running them ----------------------------------------------------------------------------------
class Events(list):
    def __call__(self, event):
        self.append(event)

    def of(self, kind):
        return [e for e in self if isinstance(e, kind)]


async def _plan(spec: RunSpec, bundle):
    return (await prepare(spec, bundle, [], Settings(demo_tokens_per_s=0))).plan


def demo_engine(events: Events, judges=()) -> Engine:
    provider = DemoProvider(tokens_per_s=0)
    return Engine(lambda _spec: provider, events, judges=list(judges))


async def test_run_probes_end_to_end_with_the_demo_provider(maya):
    events = Events()
    # the engine's own judges (heuristic) must not score the probes: each probe run gets its own
    engine = demo_engine(events, judges=[HeuristicJudge()])
    specs = probe_specs(spec_for(), "run-x", maya)
    asked = []

    def judges_of(spec):
        asked.append(spec.query_id)
        return judges_for(spec)

    run_ids = await run_probes(engine, judges_of, _plan, specs, maya)
    assert len(run_ids) == 3 and len(set(run_ids)) == 3
    assert asked == ["p1-mcq", "p1-tf-yes", "p1-tf-no"]
    started = events.of(RunStarted)
    assert [e.run_id for e in started] == run_ids
    assert [(e.spec.query_id, e.spec.probe_of) for e in started] == [(s.query_id, "run-x") for s in specs]
    assert [e.plan.answer_format for e in started] == ["mcq", "tf", "tf"]
    assert [e.status for e in events.of(RunFinished)] == ["ok", "ok", "ok"]
    finals = [e for e in events.of(ResponseFinished) if e.is_final_step]
    assert len(finals) == 6 and {e.status for e in finals} == {"ok"}
    scored = events.of(JudgeScored)
    assert {(e.judgment.kind, e.judgment.dimension, e.judgment.judge_model) for e in scored} == {
        ("choice", "accuracy", "parser:choice")
    }
    assert len(scored) == 6
    model_of = {e.response_id: e.model.id for e in events if type(e).__name__ == "ResponseStarted"}
    oracle = [e.judgment.score for e in scored if model_of[e.response_id] == "demo:oracle"]
    assert oracle == [1.0, 1.0, 1.0]  # the oracle knows the preference


async def test_generated_probe_runs_score_with_probe_recall(dana):
    events = Events()
    specs = probe_specs(spec_for("dana", "q-consistent-1"), "run-d", dana)
    (run_id,) = await run_probes(demo_engine(events), judges_for, _plan, specs, dana)
    (started,) = events.of(RunStarted)
    assert started.run_id == run_id and started.spec.query_id == "probe:q-consistent-1"
    assert "Pieter Bosman (CFO)" in started.plan.steps[-1].messages[-1].content
    by_model = {}
    model_of = {e.response_id: e.model.id for e in events if type(e).__name__ == "ResponseStarted"}
    for e in events.of(JudgeScored):
        assert (e.judgment.kind, e.judgment.dimension) == ("probe", "recall")
        by_model[model_of[e.response_id]] = e.judgment.score
    assert set(by_model) == set(MODELS)
    assert by_model == {"demo:generic": 0.0, "demo:oracle": 0.75}


async def test_engine_judges_override(maya):
    spec = spec_for(query="p1-open", models=[ModelSpec(id="demo:oracle")])
    plan = await _plan(spec, maya)
    events = Events()
    engine = demo_engine(events, judges=[HeuristicJudge()])
    await engine.run(spec, plan, maya)
    assert {e.judgment.judge_model for e in events.of(JudgeScored)} == {"demo:heuristic"}
    events.clear()
    await engine.run(spec, plan, maya, judges=[])
    assert events.of(JudgeScored) == []
    await engine.run(spec, plan, maya, judges=judges_for(["probe-recall"]))
    assert {(e.judgment.kind, e.judgment.judge_model) for e in events.of(JudgeScored)} == {
        ("probe", "heuristic:probe-recall")
    }
