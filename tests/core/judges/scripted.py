"""A scripted stand-in for the JUDGE MODEL's answers (not for the provider layer, which is tested
against loopback servers in tests/core/providers): it records every call and answers from a function
of the messages, so a test states exactly what the judge model said."""

from __future__ import annotations

from collections.abc import Callable

from core.plan import Message
from core.providers.base import ModelSpec
from core.providers.calls import Completion


class ScriptedJudgeModel:
    def __init__(self, answer: Callable[[ModelSpec, list[Message]], str | Completion]):
        self.answer = answer
        self.calls: list[tuple[ModelSpec, list[Message]]] = []

    async def __call__(self, spec: ModelSpec, messages: list[Message]) -> Completion:
        self.calls.append((spec, messages))
        out = self.answer(spec, messages)
        return out if isinstance(out, Completion) else Completion(out)


def user_text(messages: list[Message]) -> str:
    return "\n".join(m.content for m in messages if m.role == "user")


def all_text(messages: list[Message]) -> str:
    return "\n".join(m.content for m in messages)
