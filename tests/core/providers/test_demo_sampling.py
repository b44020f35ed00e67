"""Temperature sampling of the demo models: at 0 or unset they are deterministic; at T > 0 retrieval,
forgetful, oracle and violator answer as demo:generic with probability min(T, 1) / 2, drawn afresh
per call from the provider's random generator (seedable: ``DemoProvider(rng=random.Random(seed))``)."""

from __future__ import annotations

import math
import random

import pytest

from core.plan import Message
from core.providers.base import ModelParams, ModelSpec
from core.providers.demo import DemoProvider
from tests.core.providers.conftest import collect, text_of

HISTORY = [
    Message(role="user", content="I've been vegetarian for ten years and I never eat meat or fish."),
    Message(role="assistant", content="Thanks for telling me."),
    Message(role="user", content="My sister is visiting Lisbon in May for a conference."),
    Message(role="assistant", content="Lovely city."),
    Message(role="user", content="Can you suggest a dinner restaurant for my anniversary, something to eat?"),
]
HINTS = {"gold_preference": "The user is vegetarian and never eats meat or fish."}
SAMPLED = ["retrieval", "forgetful", "oracle", "violator"]
CALLS = 300


def spec(model: str, temperature: float | None) -> ModelSpec:
    return ModelSpec(id=f"demo:{model}", params=ModelParams(temperature=temperature))


async def texts(model: str, temperature: float | None, n: int, rng: random.Random | None) -> list[str]:
    provider = DemoProvider(tokens_per_s=0, rng=rng)
    return [text_of(await collect(provider, spec(model, temperature), HISTORY, hints=HINTS)) for _ in range(n)]


async def one(model: str) -> str:
    [text] = await texts(model, None, 1, None)
    return text


@pytest.mark.parametrize("model", SAMPLED)
@pytest.mark.parametrize("temperature", [0.4, 1.0, 2.5])
async def test_the_generic_share_is_min_t_1_over_2(model, temperature):
    own, generic = await one(model), await one("generic")
    assert own != generic
    got = await texts(model, temperature, CALLS, random.Random(7))
    assert set(got) <= {own, generic} and len(set(got)) == 2
    share = got.count(generic) / CALLS
    p = min(temperature, 1.0) / 2
    assert abs(share - p) <= 4 * math.sqrt(p * (1 - p) / CALLS)
    # Exactly the draws of the same seed: one per call, generic when it falls below p.
    replay = random.Random(7)
    assert [t == generic for t in got] == [replay.random() < p for _ in range(CALLS)]


@pytest.mark.parametrize("model", SAMPLED)
@pytest.mark.parametrize("temperature", [0, 0.0, None])
async def test_at_zero_or_unset_nothing_changes(model, temperature):
    own = await one(model)
    assert await texts(model, temperature, 100, random.Random(7)) == [own] * 100


@pytest.mark.parametrize("model", ["generic", "slow"])
async def test_models_without_a_behaviour_to_lose_never_change(model):
    assert set(await texts(model, 1.0, 50, random.Random(3))) == {await one(model)}


async def test_the_same_seed_gives_the_same_sequence_another_seed_another():
    a = await texts("oracle", 0.7, 60, random.Random(11))
    b = await texts("oracle", 0.7, 60, random.Random(11))
    c = await texts("oracle", 0.7, 60, random.Random(12))
    assert a == b and a != c


async def test_a_sampled_forgetful_that_keeps_its_own_behaviour_still_forgets():
    """Without the preference in its span it answers generically whatever the draw."""
    hidden = [Message(role="user", content="Tell me about printing presses. " * 3000), HISTORY[-1]]
    provider = DemoProvider(tokens_per_s=0, rng=random.Random(5))
    generic = text_of(await collect(provider, spec("generic", None), hidden, hints=HINTS))
    got = {text_of(await collect(provider, spec("forgetful", 1.0), hidden, hints=HINTS)) for _ in range(20)}
    assert got == {generic}
