"""demo:* – deterministic, offline, recognisably different behaviours."""

from __future__ import annotations

import pytest

from core.plan import Message
from core.providers.base import ModelSpec
from core.providers.demo import DemoProvider
from core.providers.events import Delta, Done, Error, Usage
from tests.core.providers.conftest import check_order, collect, text_of

HISTORY = [
    Message(role="user", content="I've been vegetarian for ten years and I never eat meat or fish."),
    Message(role="assistant", content="Thanks for telling me."),
    Message(role="user", content="My sister is visiting Lisbon in May for a conference."),
    Message(role="assistant", content="Lovely city."),
]
QUESTION = Message(role="user", content="Can you suggest a dinner restaurant for my anniversary, something to eat?")
MCQ = Message(
    role="user",
    content=(
        "Which dinner should I book for my anniversary?\n"
        "A) A steakhouse with dry-aged beef\n"
        "B) A seafood grill by the harbour\n"
        "C) A vegetarian tasting menu with seasonal vegetables\n"
        "D) A burger joint\n"
        "Answer with the letter."
    ),
)
GOLD = "The user is vegetarian and never eats meat or fish."


def fast() -> DemoProvider:
    return DemoProvider(tokens_per_s=0)


def spec(name: str) -> ModelSpec:
    return ModelSpec(id=f"demo:{name}")


@pytest.mark.parametrize("name", ["generic", "retrieval", "oracle"])
async def test_same_input_same_output(name):
    hints = {"gold_preference": GOLD}
    a = await collect(fast(), spec(name), HISTORY + [QUESTION], hints=hints)
    b = await collect(fast(), spec(name), HISTORY + [QUESTION], hints=hints)
    assert text_of(a) == text_of(b) and text_of(a)
    check_order(a)
    assert isinstance(a[-1], Done)
    usage = next(e for e in a if isinstance(e, Usage))
    assert usage.input_tokens > 0 and usage.output_tokens > 0


async def test_generic_ignores_the_history():
    with_history = await collect(fast(), spec("generic"), HISTORY + [QUESTION])
    without = await collect(fast(), spec("generic"), [QUESTION])
    assert text_of(with_history) == text_of(without)
    assert "vegetarian" not in text_of(with_history)


async def test_retrieval_leans_on_the_most_similar_earlier_turn():
    text = text_of(await collect(fast(), spec("retrieval"), HISTORY + [QUESTION]))
    assert text.startswith("Since you mentioned")
    assert "vegetarian" in text and "Lisbon" not in text


async def test_retrieval_reads_user_lines_inside_a_single_prompt():
    packed = Message(
        role="user",
        content=(
            "Conversation history:\nUser: I adore hiking in the Alps every summer.\nAssistant: Nice!\n"
            "User: I hate loud bars.\n\nWhere should I go for my next summer holiday?"
        ),
    )
    text = text_of(await collect(fast(), spec("retrieval"), [packed]))
    assert "hiking in the Alps" in text


async def test_the_three_models_differ():
    texts = {
        n: text_of(await collect(fast(), spec(n), HISTORY + [QUESTION], hints={"gold_preference": GOLD}))
        for n in ("generic", "retrieval", "oracle")
    }
    assert len(set(texts.values())) == 3
    assert GOLD in texts["oracle"]


async def test_mcq_oracle_picks_the_gold_answer_and_retrieval_the_overlapping_option():
    oracle = text_of(
        await collect(fast(), spec("oracle"), HISTORY + [MCQ], hints={"gold_preference": GOLD, "answer": "C"})
    )
    assert oracle.startswith("Answer: C)")
    no_answer = text_of(await collect(fast(), spec("oracle"), HISTORY + [MCQ], hints={"gold_preference": GOLD}))
    assert no_answer.startswith("Answer: C)")  # closest option to the preference
    retrieval = text_of(await collect(fast(), spec("retrieval"), HISTORY + [MCQ]))
    assert retrieval.startswith("Answer: C)")


async def test_mcq_generic_is_a_deterministic_letter():
    a = text_of(await collect(fast(), spec("generic"), HISTORY + [MCQ]))
    b = text_of(await collect(fast(), spec("generic"), [MCQ]))
    assert a == b and a[len("Answer: ")] in "ABCD"


async def test_engine_shaped_hints_are_understood():
    """The engine passes query_kind, options as a list and answer 'yes'/'no' or a letter."""
    options = [
        "A steakhouse with dry-aged beef",
        "A seafood grill by the harbour",
        "A vegetarian tasting menu with seasonal vegetables",
        "A burger joint",
    ]
    hints = {"gold_preference": GOLD, "query_kind": "mcq", "options": options, "answer": "C"}
    assert text_of(await collect(fast(), spec("oracle"), [MCQ], hints=hints)).startswith("Answer: C)")
    # A step that does not show the options (e.g. a workflow's summary step) still gets prose.
    summary = Message(role="user", content="Summarise what you know about my food preferences.")
    assert not text_of(await collect(fast(), spec("oracle"), [summary], hints=hints)).startswith("Answer:")
    tf = Message(role="user", content="Would a steakhouse be a good choice for me? Answer yes or no.")
    for gold, word in (("no", "No"), ("yes", "Yes")):
        out = text_of(
            await collect(
                fast(), spec("oracle"), [tf], hints={"query_kind": "tf", "answer": gold, "gold_preference": GOLD}
            )
        )
        assert out.startswith(f"Answer: {word}")


async def test_oracle_without_gold_is_a_config_error():
    events = await collect(fast(), spec("oracle"), [QUESTION])
    assert isinstance(events[-1], Error) and events[-1].kind == "config"


async def test_flaky_fails_mid_stream_with_partial_text():
    events = await collect(fast(), spec("flaky"), [QUESTION])
    check_order(events)
    assert text_of(events) and isinstance(events[-1], Error)
    assert events[-1].kind == "transport" and events[-1].before_first_byte is False


async def test_unknown_demo_model():
    events = await collect(fast(), spec("nope"), [QUESTION])
    assert events[-1].kind == "config" and "demo:generic" in events[-1].message


async def test_pacing_follows_tokens_per_second_and_slow_is_slower():
    sleeps: list[float] = []
    clock = [100.0]

    async def fake_sleep(s):
        sleeps.append(s)
        clock[0] += s

    def make():
        return DemoProvider(tokens_per_s=50, sleep=fake_sleep, clock=lambda: clock[0])

    events = await collect(make(), spec("generic"), [QUESTION])
    deltas = [e for e in events if isinstance(e, Delta)]
    assert len(sleeps) == len(deltas) and all(abs(s - 1 / 50) < 1e-9 for s in sleeps)
    sleeps.clear()
    await collect(make(), spec("slow"), [QUESTION])
    assert sleeps[0] > 0.1 and all(abs(s - 8 / 50) < 1e-9 for s in sleeps[1:])


def test_demo_is_free_and_labelled():
    p = DemoProvider()
    assert p.cost_usd(spec("generic"), Usage(100, 100)) == 0.0
    assert "demo" in p.label(spec("retrieval"))
    assert spec("generic").is_demo


async def test_demo_models_answer_in_the_choice_tags_a_prefeval_prompt_asks_for():
    asked = Message(
        role="user", content=MCQ.content + "\nGive me your answer in this exact format: <choice>[A/B/C/D]</choice>"
    )
    plain = text_of(await collect(fast(), spec("oracle"), HISTORY + [MCQ], hints={"gold_preference": GOLD}))
    tagged = text_of(await collect(fast(), spec("oracle"), HISTORY + [asked], hints={"gold_preference": GOLD}))
    assert "<choice>" not in plain
    assert tagged == "<choice>C</choice>"  # the vegetarian option, in the asked format
