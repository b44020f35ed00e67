"""Prompting methods: method name → builder of a :class:`core.plan.PromptPlan`.

One module per family (``realpref``, ``interpref``, ``cupid``, ``prefeval``, ``recentering``);
templates are data files in ``templates/`` with their citation. Builders are imported on first
use, so importing this package is cheap and never touches torch.

    from core.methods import plan, METHODS
    p = plan("rag", ctx, query, k=5, retriever="bm25")
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.history.types import BuiltContext
    from core.model import Query
    from core.plan import PromptPlan


@dataclass(frozen=True)
class MethodInfo:
    name: str
    family: str
    description: str
    citation: str
    target: str  # "module:function"
    steps: int = 1
    uses_history: bool = True


METHODS: dict[str, MethodInfo] = {
    m.name: m
    for m in [
        MethodInfo(
            "zero-shot",
            "RealPref",
            "History, then the question; no help.",
            "RealPref §4 (Methods)",
            "realpref:zero_shot",
        ),
        MethodInfo(
            "reminder",
            "RealPref",
            "One reminder sentence before the question.",
            "RealPref App. C.2",
            "realpref:reminder",
        ),
        MethodInfo(
            "fewshot-cot",
            "RealPref",
            "Reminder + 3 worked examples + closing instruction.",
            "RealPref App. C.2",
            "realpref:fewshot_cot",
        ),
        MethodInfo(
            "rag",
            "RealPref",
            "Reminder + top-k history turns most similar to the question.",
            "RealPref App. C.2",
            "realpref:rag",
        ),
        MethodInfo(
            "np", "InterPref", "No prompt: the vanilla model with the history.", "InterPref §4.3", "interpref:no_prompt"
        ),
        MethodInfo(
            "td",
            "InterPref",
            "Task-description system prompt.",
            "InterPref §4.3, Fig. 14",
            "interpref:task_description",
        ),
        MethodInfo(
            "cot",
            "InterPref",
            "Task description + persona-then-answer reasoning.",
            "InterPref §4.3, Fig. 14",
            "interpref:chain_of_thought",
        ),
        MethodInfo(
            "workflow",
            "InterPref",
            "Two calls: relevant preferences from history, then answer.",
            "InterPref §4.3, App. E",
            "interpref:workflow",
            steps=2,
        ),
        MethodInfo(
            "cupid-generate", "CUPID", "Response from the interaction log.", "CUPID §4, Fig. 22", "cupid:generation"
        ),
        MethodInfo(
            "cupid-infer", "CUPID", "Infer the user's preference (≤30 words).", "CUPID §4, Fig. 21", "cupid:inference"
        ),
        MethodInfo(
            "summary-memory",
            "CUPID",
            "Summarise every session, then answer from the summaries.",
            "CUPID §4.2.3, Figs 23+22",
            "cupid:summary_memory",
            steps=2,
        ),
        MethodInfo(
            "self-critic",
            "PrefEval",
            "Answer, critique against preferences, revise.",
            "PrefEval (Zhao et al. 2025); prompts ours",
            "prefeval:self_critic",
            steps=3,
        ),
        MethodInfo(
            "recentering",
            "Re-Centering",
            "Extract attributes → select relevant → generate.",
            "Re-Centering §3–6",
            "recentering:pipeline",
            steps=3,
        ),
        MethodInfo(
            "generic",
            "Re-Centering",
            "The query alone, without history (generic response).",
            "Re-Centering §6",
            "recentering:generic",
            uses_history=False,
        ),
    ]
}

_ALIASES = {
    "zero_shot": "zero-shot",
    "zeroshot": "zero-shot",
    "fewshot": "fewshot-cot",
    "few-shot-cot": "fewshot-cot",
    "fewshot_cot": "fewshot-cot",
    "few-shot": "fewshot-cot",
    "no-prompt": "np",
    "wf": "workflow",
    "generation": "cupid-generate",
    "cupid_generate": "cupid-generate",
    "inference": "cupid-infer",
    "cupid_infer": "cupid-infer",
    "summary_memory": "summary-memory",
    "self_critic": "self-critic",
    "re-centering": "recentering",
    "pipeline": "recentering",
    "no-history": "generic",
}


class UnknownMethod(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def method_info(name: str) -> MethodInfo:
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in METHODS:
        raise UnknownMethod(f"unknown method {name!r}; expected one of {', '.join(METHODS)}")
    return METHODS[key]


def builder(name: str):
    info = method_info(name)
    module, func = info.target.split(":")
    return getattr(importlib.import_module(f"core.methods.{module}"), func)


def plan(name: str, ctx: BuiltContext, query: Query, options=None, **kwargs) -> PromptPlan:
    """The exact messages ``name`` sends for this context and query, with token counts.

    ``options`` is a :class:`core.methods.base.MethodOptions`; keyword arguments override its fields.
    """
    from core.methods.base import MethodOptions

    opts = options or MethodOptions()
    for key, value in kwargs.items():
        if not hasattr(opts, key):
            raise TypeError(f"unknown method option {key!r}")
        setattr(opts, key, value)
    return builder(name)(ctx, query, opts)


def list_methods() -> list[MethodInfo]:
    return list(METHODS.values())


__all__ = ["METHODS", "MethodInfo", "UnknownMethod", "builder", "list_methods", "method_info", "plan"]
