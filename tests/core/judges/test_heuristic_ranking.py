"""demo:heuristic ranks the demo models sensibly on EVERY open sample query, end to end: the ONE
prepare path → the engine streams the four offline demo models (the oracle and the violator get the
engine's gold hints) → the engine runs the judges on each final answer (``judge_answer``).

The oracle streams the hand-written answer that follows the preference, so on every dimension it
must score at least what the generic model (which ignores the history) and the retrieval model
(which quotes one earlier turn, then answers generically) score, and more on most queries. The
violator streams the answer that goes against the preference: never above the generic model, and
strictly below the oracle. Before the judge read words in place it scored the oracle BELOW the
others on 13 of the 30 open queries, for quoting what the user dislikes.
"""

from __future__ import annotations

import pytest

from core.formats import load_path
from core.judges import judges_for
from core.providers import get_provider
from core.providers.base import ModelSpec
from core.run.engine import Engine
from core.run.prepare import prepare
from core.run.spec import JudgeScored, ResponseStarted, RunSpec
from core.settings import load_settings
from tests.cli_runner import unpaced_demo_models  # noqa: F401  (a fixture)
from tests.conftest import SAMPLE_DATA

MODELS = ("demo:generic", "demo:retrieval", "demo:oracle", "demo:violator")
DIMENSIONS = ("awareness", "alignment", "quality")


async def heuristic_scores(bundle, query_id: str, pools) -> dict[str, dict[str, float]]:
    """model -> dimension -> demo:heuristic score for one query, default context and method."""
    settings = load_settings()
    spec = RunSpec(
        user_id=bundle.user.id,
        query_id=query_id,
        models=[ModelSpec(id=m) for m in MODELS],
        judges=["demo:heuristic"],
    )
    prepared = await prepare(spec, bundle, pools, settings)
    events: list = []
    engine = Engine(lambda m: get_provider(m, settings), events.append, judges=judges_for(spec, settings))
    await engine.run(spec, prepared.plan, bundle)
    model_of = {e.response_id: e.model.id for e in events if isinstance(e, ResponseStarted) and e.is_final_step}
    scores: dict[str, dict[str, float]] = {m: {} for m in MODELS}
    for e in events:
        if isinstance(e, JudgeScored) and e.response_id in model_of:
            j = e.judgment
            assert j.judge_model == "demo:heuristic" and j.parse_ok and j.score is not None, j
            scores[model_of[e.response_id]][j.dimension] = j.score
    assert all(sorted(s) == sorted(DIMENSIONS) for s in scores.values()), scores
    return scores


async def test_oracle_above_generic_and_retrieval_above_violator(unpaced_demo_models):  # noqa: F811
    users = load_path(SAMPLE_DATA / "users").bundles
    pools = load_path(SAMPLE_DATA / "filler").fillers
    cases = [(b, q.id) for b in users for q in b.queries if q.kind == "open"]
    assert len(cases) >= 25 and {b.user.id for b, _ in cases} >= {"maya", "priya", "tomasz"}

    wrong, strictly_above = [], 0
    for bundle, query_id in cases:
        s = await heuristic_scores(bundle, query_id, pools)
        oracle, violator = s["demo:oracle"], s["demo:violator"]
        for higher, lower in (("oracle", "generic"), ("oracle", "retrieval"), ("generic", "violator")):
            for d in DIMENSIONS:
                if s[f"demo:{higher}"][d] < s[f"demo:{lower}"][d]:
                    wrong.append(
                        f"{bundle.user.id}/{query_id} {d}: {higher} {s[f'demo:{higher}'][d]:g} "
                        f"< {lower} {s[f'demo:{lower}'][d]:g}"
                    )
        if sum(oracle.values()) <= sum(violator.values()):
            wrong.append(f"{bundle.user.id}/{query_id}: oracle {oracle} not above violator {violator}")
        if not oracle["awareness"] == oracle["alignment"] == 5:  # the README's tour says so
            wrong.append(f"{bundle.user.id}/{query_id}: oracle awareness/alignment {oracle}")
        best_other = max(sum(s[m].values()) for m in ("demo:generic", "demo:retrieval"))
        strictly_above += sum(oracle.values()) > best_other
    assert wrong == []
    assert strictly_above >= 0.9 * len(cases), f"oracle strictly ahead on only {strictly_above}/{len(cases)}"


@pytest.mark.parametrize("model", ["demo:generic", "demo:retrieval"])
async def test_maya_p6_is_judged_on_its_content_not_on_weeks(model, unpaced_demo_models):  # noqa: F811
    """p6's preference dislikes plans "locked in weeks ahead": the word "weeks" alone is no violation.
    Checked on the templated answers (what data without reference answers gets): the hand-written
    generic answer really does suggest a date poll, and is marked down for that."""
    maya = load_path(SAMPLE_DATA / "users" / "maya.json").bundles[0].model_copy(deep=True)
    maya.query("p6-open").meta.pop("reference_answers")
    s = await heuristic_scores(maya, "p6-open", [])
    assert s[model]["alignment"] >= 3
