"""Prompt-cache breakpoints: where a prompt's shared prefix ends, when the policy marks it, and how
the Anthropic request carries the mark (streamed through the real SDK to the loopback server)."""

from __future__ import annotations

import uuid

import pytest

from core.plan import Message, PromptPlan, PromptStep
from core.providers.anthropic_messages import AnthropicProvider
from core.providers.base import ModelSpec
from core.providers.events import Usage
from core.providers.prompt_cache import MIN_PREFIX_CHARS, USES, PrefixUses, announce, cache_cut
from core.settings import Settings
from tests.core.providers.conftest import collect
from tests.servers.script import Reply

EPHEMERAL = {"type": "ephemeral"}
MODEL = "anthropic:claude-haiku-4-5"


def history(chars: int = MIN_PREFIX_CHARS) -> list[Message]:
    """A system prompt and one past exchange, ``chars`` characters in all, unique to the test."""
    tag = uuid.uuid4().hex  # the process-wide counts never mix two tests' prefixes
    system = f"You are helpful. {tag}"
    turn = "x" * max(0, chars - len(system) - 5)
    return [
        Message(role="system", content=system),
        Message(role="user", content=turn),
        Message(role="assistant", content="Noted"),
    ]


def ask(prefix: list[Message], question: str = "What now?") -> list[Message]:
    return [*prefix, Message(role="user", content=question)]


# ---- cache_cut -------------------------------------------------------------------------------
def test_the_cut_is_the_last_message_before_the_final_user_message():
    messages = ask(history())
    assert cache_cut(messages) == 2
    # history ending in a user turn: that turn ends the prefix
    assert cache_cut([*history(MIN_PREFIX_CHARS + 10)[:2], Message(role="user", content="And?")]) == 1


def test_a_prefix_shorter_than_the_providers_minimum_is_not_cut():
    assert sum(len(m.content) for m in history()) == MIN_PREFIX_CHARS
    assert cache_cut(ask(history(MIN_PREFIX_CHARS))) == 2
    assert cache_cut(ask(history(MIN_PREFIX_CHARS - 1))) is None


def test_nothing_to_share_without_a_message_before_the_question():
    assert cache_cut([Message(role="user", content="x" * 10 * MIN_PREFIX_CHARS)]) is None
    assert cache_cut([Message(role="system", content="x" * 10 * MIN_PREFIX_CHARS)]) is None
    assert cache_cut([]) is None


def test_a_long_system_prompt_alone_is_a_prefix():
    messages = [Message(role="system", content="s" * MIN_PREFIX_CHARS), Message(role="user", content="Hi")]
    assert cache_cut(messages) == 0


# ---- policies ----------------------------------------------------------------------------------
def test_off_never_marks_and_always_marks_every_long_prefix_from_its_first_use():
    uses = PrefixUses()
    prefix = history()
    assert [uses.breakpoint("off", MODEL, ask(prefix)) for _ in range(3)] == [None, None, None]
    assert uses.breakpoint("always", MODEL, ask(history())) == 2
    assert uses.breakpoint("always", MODEL, ask(history(100))) is None, "too short to be cached"


def test_auto_marks_a_prefix_from_its_second_use_when_nobody_announced_it():
    uses = PrefixUses()
    prefix = history()
    marks = [uses.breakpoint("auto", MODEL, ask(prefix, q)) for q in ("one?", "two?", "three?")]
    assert marks == [None, 2, 2], "the same history before different questions is one prefix"


def test_auto_marks_the_first_use_of_a_prefix_announced_more_than_once():
    uses = PrefixUses()
    prefix = history()
    for q in ("one?", "two?"):
        uses.expect(MODEL, ask(prefix, q), f"cell-{q}")
    assert uses.breakpoint("auto", MODEL, ask(prefix, "one?")) == 2


def test_one_cell_announced_twice_is_still_one_use():
    uses = PrefixUses()
    prefix = history()
    uses.expect(MODEL, ask(prefix, "one?"), "cell-1")
    uses.expect(MODEL, ask(prefix, "one?"), "cell-1")  # the estimate, then the batch that sends it
    assert uses.breakpoint("auto", MODEL, ask(prefix, "one?")) is None


def test_one_announcement_is_not_a_reuse_until_the_prefix_is_sent_twice():
    uses = PrefixUses()
    prefix = history()
    uses.expect(MODEL, ask(prefix), "cell-1")
    assert uses.breakpoint("auto", MODEL, ask(prefix)) is None
    assert uses.breakpoint("auto", MODEL, ask(prefix)) == 2


def test_prefixes_are_counted_per_model_and_per_content():
    uses = PrefixUses()
    prefix = history()
    uses.breakpoint("auto", MODEL, ask(prefix))
    assert uses.breakpoint("auto", "anthropic:claude-sonnet-4-5", ask(prefix)) is None, "another model's cache"
    assert uses.breakpoint("auto", MODEL, ask(history())) is None, "another history"
    assert uses.breakpoint("auto", MODEL, ask(prefix)) == 2


def test_short_prompts_are_neither_announced_nor_marked():
    uses = PrefixUses()
    short = history(200)
    for i in range(3):
        uses.expect(MODEL, ask(short), f"cell-{i}")
    assert [uses.breakpoint(p, MODEL, ask(short)) for p in ("auto", "always")] == [None, None]


def test_announce_tells_the_process_wide_counts_the_steps_known_before_sending():
    prefix = history()
    for q in ("one?", "two?"):
        later = PromptStep(
            name="revise", messages=[*ask(prefix, q)[:-1], Message(role="user", content="{{output:answer}}")]
        )
        announce(
            MODEL,
            PromptPlan(method="m", steps=[PromptStep(name="answer", messages=ask(prefix, q)), later]),
            f"cell-{q}",
        )
    assert USES.breakpoint("auto", MODEL, ask(prefix, "one?")) == 2


# ---- the Anthropic request ---------------------------------------------------------------------
def marks(kwargs: dict) -> list[str]:
    """Where a request's cache_control blocks are: "system" or "messages[i]"."""
    found = []
    system = kwargs.get("system")
    if isinstance(system, list) and any("cache_control" in b for b in system):
        found.append("system")
    for i, m in enumerate(kwargs["messages"]):
        if isinstance(m["content"], list) and any("cache_control" in b for b in m["content"]):
            found.append(f"messages[{i}]")
    return found


def test_the_mark_goes_on_the_last_turn_before_the_question_as_a_text_block():
    provider = AnthropicProvider(prompt_cache="always")
    prefix = history()
    kwargs = provider.request_kwargs(ModelSpec(id=MODEL), ask(prefix), stream=False)
    assert marks(kwargs) == ["messages[1]"]  # the system message is not in messages
    assert kwargs["messages"][1]["content"] == [{"type": "text", "text": "Noted", "cache_control": EPHEMERAL}]
    assert kwargs["messages"][0] == {"role": "user", "content": prefix[1].content}
    assert kwargs["system"] == prefix[0].content
    assert "stream" not in kwargs


def test_a_system_prompt_ending_the_prefix_is_marked_in_system():
    provider = AnthropicProvider(prompt_cache="always")
    messages = [Message(role="system", content="s" * MIN_PREFIX_CHARS), Message(role="user", content="Hi")]
    kwargs = provider.request_kwargs(ModelSpec(id=MODEL), messages)
    assert marks(kwargs) == ["system"]
    assert kwargs["system"] == [{"type": "text", "text": "s" * MIN_PREFIX_CHARS, "cache_control": EPHEMERAL}]
    assert kwargs["messages"] == [{"role": "user", "content": "Hi"}] and kwargs["stream"] is True


@pytest.mark.parametrize(("policy", "expected"), [("off", [[], []]), ("auto", [[], ["messages[1]"]])])
def test_the_settings_policy_reaches_the_provider(policy, expected):
    provider = AnthropicProvider.from_settings(Settings(prompt_cache=policy), None)
    assert provider.prompt_cache == policy
    prefix = history()
    got = [marks(provider.request_kwargs(ModelSpec(id=MODEL), ask(prefix, q))) for q in ("one?", "two?")]
    assert got == expected


async def test_a_streamed_request_carries_the_mark_and_its_usage_counts_the_cache(anthropic_server):
    # 5,000 prompt tokens: 4,000 read from the cache, 500 written, 500 plain (as Anthropic reports them apart)
    anthropic_server.script(Reply.text("Fine.", usage=(5000, 7), cache_read=4000, cache_write=500))
    spec = ModelSpec(id=MODEL, base_url=anthropic_server.base_url)
    events = await collect(AnthropicProvider(prompt_cache="always"), spec, ask(history()))
    usage = next(e for e in events if isinstance(e, Usage))
    assert (usage.input_tokens, usage.output_tokens) == (5000, 7), "input_tokens counts every prompt token"
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (4000, 500)
    body = anthropic_server.requests[0].body
    assert marks(body) == ["messages[1]"]
