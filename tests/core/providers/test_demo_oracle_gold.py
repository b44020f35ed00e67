"""demo:oracle is an upper bound wherever the query carries gold: a preference (sample users), or
only a gold answer (LoCoMo QA, imported through the locomo format). End to end: import → prepare →
engine with the real demo provider → the locomo F1 metric and demo:heuristic."""

from __future__ import annotations

import json

import pytest

from core.formats import load_path
from core.judges import judges_for
from core.providers import get_provider
from core.providers.base import ModelSpec
from core.run.engine import Engine
from core.run.prepare import prepare
from core.run.spec import JudgeScored, ResponseFinished, ResponseStarted, RunSpec
from core.settings import load_settings
from tests.cli_runner import unpaced_demo_models  # noqa: F401  (a fixture)
from tests.conftest import SAMPLE_DATA, dataset
from tests.core.formats.builders import locomo_sample


async def run_case(bundle, query_id: str, models: list[str], judges: list[str], method: str = "zero-shot"):
    """(model -> final ResponseFinished, model -> judgments) for one query."""
    settings = load_settings()
    spec = RunSpec(
        user_id=bundle.user.id,
        query_id=query_id,
        method=method,
        models=[ModelSpec(id=m) for m in models],
        judges=judges,
    )
    prepared = await prepare(spec, bundle, [], settings)
    events: list = []
    engine = Engine(lambda m: get_provider(m, settings), events.append, judges=judges_for(spec, settings))
    await engine.run(spec, prepared.plan, bundle)
    model_of = {e.response_id: e.model.id for e in events if isinstance(e, ResponseStarted)}
    finished = {model_of[e.response_id]: e for e in events if isinstance(e, ResponseFinished) and e.is_final_step}
    judged: dict[str, list] = {m: [] for m in models}
    for e in events:
        if isinstance(e, JudgeScored):
            judged[model_of[e.response_id]].append(e.judgment)
    return finished, judged


@pytest.fixture
def tiny_locomo(tmp_path):
    path = tmp_path / "locomo_tiny.json"
    path.write_text(json.dumps([locomo_sample()]), encoding="utf-8")
    result = load_path(path)
    assert result.format == "locomo"
    return result.bundles[0]


@pytest.mark.parametrize("method", ["zero-shot", "locomo-qa"])
async def test_oracle_answers_every_locomo_question_with_its_gold_answer(tiny_locomo, method, unpaced_demo_models):  # noqa: F811
    for query in tiny_locomo.queries:  # single-hop, temporal, adversarial (category 5)
        assert query.preference_id is None and not query.gold_preference and query.answer
        finished, judged = await run_case(
            tiny_locomo, query.id, ["demo:oracle", "demo:generic"], ["locomo", "demo:heuristic"], method
        )
        assert finished["demo:oracle"].status == "ok", finished["demo:oracle"].error
        assert finished["demo:oracle"].text == query.answer
        f1 = {m: next(j for j in js if j.kind == "locomo") for m, js in judged.items()}
        assert f1["demo:oracle"].score == 1.0, (query.id, f1["demo:oracle"])
        assert f1["demo:generic"].score < 1.0
        # No target preference: a verdict from the heuristic judge, not a parse failure.
        heur = {j.dimension: j for j in judged["demo:oracle"] if j.heuristic}
        assert all(j.parse_ok for j in heur.values())
        assert heur["awareness"].score is None and "no target preference" in heur["awareness"].rationale


async def test_oracle_still_refuses_a_query_without_any_gold(tiny_locomo, unpaced_demo_models):  # noqa: F811
    bundle = tiny_locomo.model_copy(deep=True)
    bundle.queries[0].answer = None
    finished, _ = await run_case(bundle, bundle.queries[0].id, ["demo:oracle"], [])
    assert finished["demo:oracle"].status == "error"
    assert "gold preference or gold answer" in (finished["demo:oracle"].error or "")


async def test_oracle_on_the_real_locomo_sample(unpaced_demo_models):  # noqa: F811
    bundle = load_path(dataset("locomo", "locomo10_conv-30.json")).bundles[0]
    by_category = {}
    for q in bundle.queries:
        by_category.setdefault(q.meta["category"], q)
    for category, query in sorted(by_category.items()):
        finished, judged = await run_case(bundle, query.id, ["demo:oracle"], ["locomo"], "locomo-qa")
        assert finished["demo:oracle"].status == "ok", (category, finished["demo:oracle"].error)
        assert judged["demo:oracle"][0].score == 1.0, (category, judged["demo:oracle"][0])


async def test_oracle_leans_towards_the_liked_side_of_a_preference(unpaced_demo_models):  # noqa: F811
    """priya g1: "Avoids self-paced, pre-recorded online courses …; learns through live …"."""
    priya = load_path(SAMPLE_DATA / "users" / "priya.json").bundles[0]
    finished, judged = await run_case(priya, "g1-open", ["demo:oracle"], ["demo:heuristic"])
    text = finished["demo:oracle"].text
    assert "Lean towards self-paced" not in text and "self-paced options" not in text
    alignment = next(j for j in judged["demo:oracle"] if j.dimension == "alignment")
    assert alignment.score == 5, alignment.rationale
