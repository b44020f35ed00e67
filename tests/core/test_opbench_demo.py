"""demo:overeager drags the user's stored preference into every answer; on a restraint query
demo:oracle answers the question alone (both demo models, offline)."""

from __future__ import annotations

from pathlib import Path

from core.benchmarks.opbench.methods import answer_messages
from core.formats import load_path
from core.providers.base import ModelSpec
from core.providers.demo import MODELS, DemoProvider
from core.providers.hints import gold_hints
from tests.core.providers.conftest import collect, text_of

FIXTURE = Path(__file__).parents[1] / "fixtures" / "opbench" / "handmade_overpersonalized.json"
MEMORY = (
    "Maren loves throwing stoneware bowls on the pottery wheel.\nMaren runs mountain trails every Saturday morning."
)


async def answer(model: str, query_id: str, memory: str | None = MEMORY) -> str:
    maren = load_path(FIXTURE).bundles[0]
    query = maren.query(query_id)
    events = await collect(
        DemoProvider(tokens_per_s=0),
        ModelSpec(id=model),
        answer_messages(query.text, "Maren", memory),
        hints=gold_hints(maren, query_id),
    )
    return text_of(events)


async def test_overeager_drags_the_memory_in_where_the_oracle_holds_back():
    assert "overeager" in MODELS and "over-personalization" in MODELS["overeager"]
    eager = await answer("demo:overeager", "irrelevance_easy-0")
    oracle = await answer("demo:oracle", "irrelevance_easy-0")
    assert "stoneware bowls" in eager and "pottery" not in oracle
    assert oracle == await answer("demo:generic", "irrelevance_easy-0")  # the question alone
    assert eager.endswith(oracle)  # the same answer, the stored preference dragged in before it


async def test_restraint_is_a_hint_and_overeager_needs_a_memory_to_drag():
    maren = load_path(FIXTURE).bundles[0]
    assert gold_hints(maren, "irrelevance_easy-0")["restraint"] is True
    assert gold_hints(maren, "sycophancy-0")["restraint"] is False
    # nothing stored in the prompt and no gold preference: nothing to drag in
    bare = await answer("demo:overeager", "irrelevance_easy-0", memory=None)
    assert "Since I know this about you" not in bare
