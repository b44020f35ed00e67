"""Grid sweeps: evidence depths (file key ``evidence_depth``), repeats and a grid-wide temperature
expand into one cell per depth × repeat with distinct keys; a plan is shared by the repeats of a
cell, never across depths; and a grid without them makes the cells (and keys) it made before."""

from __future__ import annotations

from collections import defaultdict

import pytest

from core.run.grid import Grid, GridError, expand, load_grid

#: The key the same one-cell grid produced before depths, repeats and temperature existed (the old
#: RunSpec dump, method "zero-shot", label left out), written down.
OLD_KEY = "a14938f537cc8a5a91092f330c0efb4ce9cfb5c4d1a88a072b2593f3ce9a56e1"
QUERIES = [("p1-open", "open"), ("p1-mcq", "mcq")]


def cells_of(grid: Grid):
    return expand(grid, all_users=lambda: ["maya"], queries_of=lambda u: list(QUERIES))


def write(tmp_path, body: str):
    path = tmp_path / "sweep.toml"
    path.write_text('users = ["maya"]\nmodels = ["demo:generic"]\n' + body)
    return path


def test_a_grid_without_sweeps_keeps_its_old_cell_key():
    grid = Grid(
        users=["maya"],
        queries=["p1-open"],
        expression_types=[1],
        contexts=["normal"],
        models=["demo:generic"],
        judges=["demo:heuristic"],
    )
    [cell] = cells_of(grid)
    assert cell.key == OLD_KEY
    assert cell.spec.evidence_depth is None and cell.spec.repeat == 0 and cell.model.params.temperature is None


@pytest.mark.parametrize(
    "body,expected",
    [
        ("evidence_depth = [0, 0.5, 1, 0.5, 0.0]\n", [0.0, 0.5, 1.0]),  # duplicates merged, order kept
        ("evidence_depth = 0.25\n", [0.25]),  # one value
        ("evidence_depths = [1, 0]\n", [1.0, 0.0]),
        ("", []),
    ],
)
def test_the_file_key_evidence_depth_is_accepted(tmp_path, body, expected):
    grid = load_grid(write(tmp_path, body))
    assert grid.evidence_depths == expected
    assert all(isinstance(d, float) for d in grid.evidence_depths)


@pytest.mark.parametrize(
    "body,message",
    [
        ("evidence_depth = [0, 1.5]\n", "0…1"),
        ("evidence_depth = -0.25\n", "0…1"),
        ("repeats = 0\n", "repeats"),
        ("repeats = 101\n", "repeats"),
        ("temperature = -1\n", "temperature"),
    ],
)
def test_out_of_range_sweeps_are_refused(tmp_path, body, message):
    with pytest.raises(GridError, match=message):
        load_grid(write(tmp_path, body))


def test_the_grid_temperature_goes_to_models_without_their_own(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(
        'users = ["maya"]\ntemperature = 0.7\n'
        '[[models]]\nid = "demo:generic"\n[[models]]\nid = "demo:oracle"\ntemperature = 0.2\n'
    )
    grid = load_grid(path)
    temps = {c.model.id: c.model.params.temperature for c in cells_of(grid)}
    assert temps == {"demo:generic": 0.7, "demo:oracle": 0.2}
    assert grid.models[0].params.temperature is None  # the grid itself is left as written
    plain = cells_of(grid.model_copy(update={"temperature": None}))
    assert {c.model.id: c.model.params.temperature for c in plain} == {"demo:generic": None, "demo:oracle": 0.2}
    # A temperature is part of what was asked: another cell.
    assert {c.key for c in plain} != {c.key for c in cells_of(grid)}


def test_cells_per_depth_and_repeat_with_plans_shared_only_across_repeats_and_models():
    grid = Grid(
        users=["maya"],
        expression_types=[1],
        contexts=["normal"],
        models=["demo:generic", "demo:forgetful"],
        evidence_depths=[0, 0.5, 1],
        repeats=3,
        temperature=0.8,
    )
    cells = cells_of(grid)
    # 2 queries × 3 depths × 2 models × 3 repeats
    assert len(cells) == 36 and len({c.key for c in cells}) == 36
    combos = {(c.spec.query_id, c.spec.evidence_depth, c.model.id, c.spec.repeat) for c in cells}
    assert len(combos) == 36
    assert {c.spec.repeat for c in cells} == {0, 1, 2}
    assert {c.spec.evidence_depth for c in cells} == {0.0, 0.5, 1.0}

    by_plan = defaultdict(set)
    for c in cells:
        by_plan[c.plan_key].add((c.spec.query_id, c.spec.evidence_depth))
    # One plan per query × depth: the repeats and the models of a cell share it, depths never do.
    assert len(by_plan) == 6 and all(len(v) == 1 for v in by_plan.values())

    # Repeat 0 is the cell the same grid without repeats makes (same key).
    once = cells_of(grid.model_copy(update={"repeats": 1}))
    assert {c.key for c in once} == {c.key for c in cells if c.spec.repeat == 0}


def test_without_a_depth_axis_one_cell_and_one_plan_per_case():
    grid = Grid(users=["maya"], expression_types=[1], models=["demo:generic"], repeats=2)
    cells = cells_of(grid)
    assert len(cells) == 4 and {c.spec.evidence_depth for c in cells} == {None}
    assert len({c.plan_key for c in cells}) == 2
    depth0 = cells_of(grid.model_copy(update={"evidence_depths": [0.0]}))
    assert not {c.plan_key for c in cells} & {c.plan_key for c in depth0}  # depth 0 is not "no depth"


def test_listed_queries_take_patterns_and_plain_ids_match_exactly():
    queries = [("p1-open", "open"), ("p1-mcq", "mcq"), ("p1-open-restraint", "open"), ("p1-open[x]", "open")]
    grid = Grid(users=["maya"], queries=["*-restraint", "p1-mcq", "p1-open[x]"], models=["demo:generic"])
    cells = expand(grid, all_users=lambda: ["maya"], queries_of=lambda u: queries)
    assert {c.spec.query_id for c in cells} == {"p1-open-restraint", "p1-mcq", "p1-open[x]"}
