"""The filler pools are part of the RunSpec: recorded in the plan, pinned on re-run, and old
specs (without the field) dump, hash and load as before."""

from __future__ import annotations

import asyncio
import json

from core.formats import load_path
from core.model import FillerPool
from core.plan import PromptPlan
from core.run.grid import Grid, cell_key, expand
from core.run.prepare import prepare
from core.run.spec import RunSpec, pinned_spec
from core.settings import Settings
from tests.conftest import SAMPLE_DATA

OLD_SPEC = {
    "user_id": "maya",
    "query_id": "p1-open",
    "expression_type": 4,
    "context": "normal",
    "seed": 0,
    "method": "zero-shot",
    "method_options": {},
    "models": [{"id": "demo:generic"}],
    "judges": [],
    "force": False,
    "replay": False,
    "label": "",
}


def test_a_spec_without_pools_dumps_as_before():
    spec = RunSpec.model_validate(OLD_SPEC)
    assert spec.filler_pools is None
    assert "filler_pools" not in spec.model_dump(mode="json")
    assert RunSpec.model_validate(spec.model_dump(mode="json")) == spec


def test_named_pools_are_canonical_and_change_the_cell_key():
    a = RunSpec.model_validate({**OLD_SPEC, "filler_pools": ["b", "a", "b"]})
    b = RunSpec.model_validate({**OLD_SPEC, "filler_pools": ["a", "b"]})
    assert a.filler_pools == ["a", "b"] and cell_key(a) == cell_key(b)
    assert cell_key(a) != cell_key(RunSpec.model_validate(OLD_SPEC))


def test_grid_passes_its_pools_to_every_cell():
    grid = Grid(users=["maya"], contexts=["normal"], models=["demo:generic"], filler_pools=["sample-everyday"])
    cells = expand(grid, all_users=lambda: ["maya"], queries_of=lambda u: [("p1-open", "open")])
    assert [c.spec.filler_pools for c in cells] == [["sample-everyday"]]
    plain = expand(
        grid.model_copy(update={"filler_pools": None}), all_users=lambda: [], queries_of=lambda u: [("p1-open", "open")]
    )
    assert plain[0].key != cells[0].key and plain[0].plan_key != cells[0].plan_key


def test_pinned_spec_names_the_pools_the_plan_drew_from():
    spec = RunSpec.model_validate(OLD_SPEC)
    plan = PromptPlan.model_validate({"method": "zero-shot", "steps": [{"name": "answer", "messages": []}]})
    assert pinned_spec(spec, plan) is spec  # a run stored before plans recorded pools
    plan.filler_pools = ["sample-everyday"]
    assert pinned_spec(spec, plan).filler_pools == ["sample-everyday"]
    assert "filler_pools" in json.dumps(plan.model_dump(mode="json"))


def _prepare(spec: RunSpec, pools: list[FillerPool]):
    bundle = load_path(SAMPLE_DATA / "users" / "maya.json").bundles[0]
    return asyncio.run(prepare(spec, bundle, pools, Settings(), windows={"demo:generic": None})).plan


def test_prepare_records_the_resolved_pools_only_when_filler_is_drawn():
    sample = load_path(SAMPLE_DATA / "filler").fillers
    other = FillerPool.model_validate({**sample[0].model_dump(), "id": "zz-copy", "source": "otherbench"})
    normal = RunSpec.model_validate(OLD_SPEC)
    plan = _prepare(normal, [*sample, other])
    assert plan.filler_pools == ["sample-everyday"]
    assert _prepare(normal, sample).model_dump() == plan.model_dump()  # the other pool changes nothing
    simple = normal.model_copy(update={"context": "simple"})
    assert _prepare(simple, [*sample, other]).filler_pools == []
    named = normal.model_copy(update={"filler_pools": ["zz-copy"]})
    assert _prepare(named, [*sample, other]).filler_pools == ["zz-copy"]
