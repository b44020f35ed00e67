"""demo:forgetful reads only the last FORGETFUL_SPAN_CHARS characters of its prompt: a user turn
there that states the gold preference makes it answer as demo:oracle, anything else as
demo:generic. So a position sweep shows it: the same evidence helps at depth 1 and is lost at 0."""

from __future__ import annotations

from core.formats.native import load_file
from core.plan import Message
from core.providers.base import ModelSpec
from core.providers.demo import FORGETFUL_SPAN_CHARS, DemoProvider, last_chars
from core.providers.hints import gold_hints
from core.run.prepare import prepare
from core.run.spec import RunSpec
from core.settings import load_settings
from tests.conftest import SAMPLE_DATA
from tests.core.providers.conftest import check_order, collect, text_of

PREFERENCE = Message(role="user", content="I've been vegetarian for ten years and I never eat meat or fish.")
QUESTION = Message(role="user", content="Can you suggest a dinner restaurant for my anniversary, something to eat?")
GOLD = {"gold_preference": "The user is vegetarian and never eats meat or fish."}
CHAT = "Tell me something about the history of printing presses in Europe, please. "


def padding(chars: int) -> list[Message]:
    """User/assistant pairs of unrelated chat totalling exactly ``chars`` characters."""
    out: list[Message] = []
    left = chars
    while left > 0:
        role = "user" if len(out) % 2 == 0 else "assistant"
        piece = (CHAT * 40)[: min(left, 2000)]
        out.append(Message(role=role, content=piece))
        left -= len(piece)
    return out


async def answer(model: str, messages: list[Message], hints=None) -> str:
    events = await collect(DemoProvider(tokens_per_s=0), ModelSpec(id=f"demo:{model}"), messages, hints=hints)
    check_order(events)
    return text_of(events)


async def as_oracle_or_generic(messages: list[Message], hints=GOLD) -> str:
    got = await answer("forgetful", messages, hints)
    oracle, generic = await answer("oracle", messages, hints), await answer("generic", messages, hints)
    assert oracle != generic  # else the test could not tell them apart
    if got == oracle:
        return "oracle"
    assert got == generic, got
    return "generic"


# -- last_chars ------------------------------------------------------------------------------------
def test_last_chars_keeps_everything_that_fits():
    msgs = [Message(role="user", content="abc"), Message(role="assistant", content="de"), QUESTION]
    assert last_chars(msgs, 10_000) == msgs


def test_last_chars_cuts_the_message_crossing_the_line_to_its_tail():
    msgs = [
        Message(role="system", content="S" * 50),
        Message(role="user", content="0123456789"),
        Message(role="assistant", content="abcd"),
        Message(role="user", content="xyz"),
    ]
    kept = last_chars(msgs, 12)
    assert [(m.role, m.content) for m in kept] == [("user", "56789"), ("assistant", "abcd"), ("user", "xyz")]
    assert sum(len(m.content) for m in kept) == 12
    assert last_chars(msgs, 7) == msgs[2:]  # the line falls exactly between two messages


def test_last_chars_always_keeps_the_last_message_whole():
    long = Message(role="user", content="q" * 100)
    assert last_chars([Message(role="user", content="earlier"), long], 10) == [long]
    assert last_chars([], 10) == []


# -- what it answers -------------------------------------------------------------------------------
async def test_a_preference_near_the_end_is_applied_as_the_oracle_would():
    assert await as_oracle_or_generic([PREFERENCE, Message(role="assistant", content="Noted."), QUESTION]) == "oracle"


async def test_a_preference_beyond_the_span_is_forgotten():
    history = [PREFERENCE, *padding(FORGETFUL_SPAN_CHARS), QUESTION]
    assert await as_oracle_or_generic(history) == "generic"
    # demo:retrieval still finds it: the prompt holds it, only the forgetful reader lost it.
    assert "vegetarian" in await answer("retrieval", history)


async def test_the_span_boundary_is_exact():
    after = FORGETFUL_SPAN_CHARS - len(PREFERENCE.content) - len(QUESTION.content)
    inside = [PREFERENCE, *padding(after), QUESTION]  # the preference's first character is the span's first
    assert sum(len(m.content) for m in inside) == FORGETFUL_SPAN_CHARS
    assert await as_oracle_or_generic(inside) == "oracle"
    # One character more after it: the reader gets the preference's tail ("'ve been vegetarian …"),
    # which still states it; the whole preference pushed out of the span: forgotten.
    cut = [PREFERENCE, *padding(after + 1), QUESTION]
    assert await as_oracle_or_generic(cut) == "oracle"
    out = [PREFERENCE, *padding(after + len(PREFERENCE.content)), QUESTION]
    assert await as_oracle_or_generic(out) == "generic"


async def test_only_user_turns_count_and_no_gold_means_generic():
    said_by_assistant = [Message(role="assistant", content=PREFERENCE.content), QUESTION]
    assert await as_oracle_or_generic(said_by_assistant) == "generic"
    # Without a gold preference it cannot tell what to look for: a generic answer, not an error.
    got = await answer("forgetful", [PREFERENCE, QUESTION])
    assert got == await answer("generic", [PREFERENCE, QUESTION])


async def test_a_position_sweep_on_maya_shows_the_forgetting(maya):
    """maya p1-open, normal context (~42K tokens, far more than the span), expression 1: the gold
    session moved to depth 1 is read, at depth 0 or 0.5 it is lost."""
    pool = load_file(SAMPLE_DATA / "filler" / "everyday.json").fillers[0]
    hints = gold_hints(maya, "p1-open")
    seen = {}
    for depth in (0, 0.5, 1):
        spec = RunSpec(
            user_id="maya",
            query_id="p1-open",
            expression_type=1,
            context="normal",
            evidence_depth=depth,
            models=[ModelSpec(id="demo:forgetful")],
        )
        plan = (await prepare(spec, maya, [pool], load_settings())).plan
        messages = plan.steps[-1].messages
        assert sum(len(m.content) for m in messages) > 2 * FORGETFUL_SPAN_CHARS
        seen[depth] = await as_oracle_or_generic(messages, hints)
    assert seen == {0: "generic", 0.5: "generic", 1: "oracle"}


def test_it_is_listed_among_the_demo_models():
    assert DemoProvider.label(ModelSpec(id="demo:forgetful")).startswith("demo:forgetful (demo: applies the preference")
