"""Prompting methods: method name → builder of a :class:`core.plan.PromptPlan`.

One module per family (``realpref``, ``interpref``, ``cupid``, ``prefeval``, ``recentering``);
templates are data files in ``templates/`` with their citation. Builders are imported on first
use, so importing this package is cheap and never touches torch.

    from core.methods import plan, METHODS
    p = plan("rag", ctx, query, k=5, retriever="bm25")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.registry import Entry, Registry

if TYPE_CHECKING:
    from core.history.types import BuiltContext
    from core.model import Query
    from core.plan import PromptPlan


@dataclass(frozen=True)
class MethodInfo(Entry):
    family: str = ""
    citation: str = ""
    steps: int = 1
    uses_history: bool = True


def _m(name: str, target: str, family: str, description: str, citation: str, **kw) -> MethodInfo:
    return MethodInfo(name, f"core.methods.{target}", description, family, citation, **kw)


#: One line per method: name, builder ("module:function" in core.methods), family, description, citation.
_ENTRIES = [
    _m("zero-shot", "realpref:zero_shot", "RealPref", "History, then the question; no help.", "RealPref §4 (Methods)"),
    _m("reminder", "realpref:reminder", "RealPref", "One reminder sentence before the question.", "RealPref App. C.2"),
    _m(
        "fewshot-cot",
        "realpref:fewshot_cot",
        "RealPref",
        "Reminder + 3 worked examples + closing instruction.",
        "RealPref App. C.2",
    ),
    _m(
        "rag",
        "realpref:rag",
        "RealPref",
        "Reminder + top-k history turns most similar to the question.",
        "RealPref App. C.2",
    ),
    _m("np", "interpref:no_prompt", "InterPref", "No prompt: the vanilla model with the history.", "InterPref §4.3"),
    _m("td", "interpref:task_description", "InterPref", "Task-description system prompt.", "InterPref §4.3, Fig. 14"),
    _m(
        "cot",
        "interpref:chain_of_thought",
        "InterPref",
        "Task description + persona-then-answer reasoning.",
        "InterPref §4.3, Fig. 14",
    ),
    _m(
        "workflow",
        "interpref:workflow",
        "InterPref",
        "Two calls: relevant preferences from history, then answer.",
        "InterPref §4.3, App. E",
        steps=2,
    ),
    _m(
        "cupid-generate",
        "cupid:generation",
        "CUPID",
        "Response from the interaction log.",
        "CUPID repo response_generator.yaml @a8560ca",
    ),
    _m(
        "cupid-infer",
        "cupid:inference",
        "CUPID",
        "Infer the user's preference (≤30 words).",
        "CUPID repo preference_inferrer.yaml @a8560ca",
    ),
    _m(
        "summary-memory",
        "cupid:summary_memory",
        "CUPID",
        "Summarise every session, then answer from the summaries.",
        "CUPID §4.2.3, Figs 23+22",
        steps=2,
    ),
    _m("prefeval-zero-shot", "prefeval:zero_shot", "PrefEval", "Question + 300-word limit.", "PrefEval @50795054 §3.2"),
    _m("prefeval-remind", "prefeval:remind", "PrefEval", "Question + PrefEval's reminder.", "PrefEval @50795054 §2.3"),
    _m("prefeval-cot", "prefeval:cot", "PrefEval", "PrefEval's 5 CoT examples + question.", "PrefEval @50795054 §2.3"),
    _m("prefeval-rag", "prefeval:rag", "PrefEval", "Top-5 messages block + question.", "PrefEval @50795054 §3.4"),
    _m(
        "self-critic",
        "prefeval:self_critic",
        "PrefEval",
        "Answer, critique against preferences, revise.",
        "PrefEval @50795054 §3.5",
        steps=3,
    ),
    _m(
        "recentering",
        "recentering:pipeline",
        "Re-Centering",
        "Extract attributes → select relevant → generate.",
        "Re-Centering §3–6",
        steps=3,
    ),
    _m(
        "locomo-qa",
        "locomo:qa",
        "LoCoMo",
        "LoCoMo's own QA prompt over the dated conversation.",
        "LoCoMo code @9228632",
    ),
    _m(
        "longmemeval",
        "longmemeval:direct",
        "LongMemEval",
        "LongMemEval's reader prompt over the dated sessions (JSON), direct answer.",
        "LongMemEval code @9e0b455",
    ),
    _m(
        "longmemeval-cot",
        "longmemeval:step_by_step",
        "LongMemEval",
        "LongMemEval's reader prompt, step by step (its default 'con' reading).",
        "LongMemEval code @9e0b455",
    ),
    _m(
        "personamem",
        "personamem:as_sent",
        "PersonaMem",
        "PersonaMem's MCQ prompt: the context's messages as they are, then question + instruction + options.",
        "PersonaMem code @041d82ac",
    ),
    _m(
        "personamem-merged",
        "personamem:merged",
        "PersonaMem",
        "PersonaMem's MCQ prompt with system messages merged (what it sends to models named with 'o').",
        "PersonaMem code @041d82ac",
    ),
    _m(
        "generic",
        "recentering:generic",
        "Re-Centering",
        "The query alone, without history (generic response).",
        "Re-Centering §6",
        uses_history=False,
    ),
]

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
    "prefeval-selfcritic": "self-critic",
    "prefeval_selfcritic": "self-critic",
    "re-centering": "recentering",
    "pipeline": "recentering",
    "no-history": "generic",
}


METHODS: Registry[MethodInfo] = Registry(_ENTRIES, _ALIASES)


class UnknownMethod(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def method_info(name: str) -> MethodInfo:
    info = METHODS.find(name)
    if info is None:
        raise UnknownMethod(f"unknown method {name!r}; expected one of {METHODS.names()}")
    return info


def builder(name: str):
    return method_info(name).load()


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
