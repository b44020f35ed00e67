"""Prompting methods: method name → builder of a :class:`core.plan.PromptPlan`.

Each benchmark brings its methods (``core/benchmarks/<name>/methods.py``) and their templates
(``templates.toml``, data files with their citation); the shared pieces (plan building, history
rendering, answer formats) are here. Builders are imported on first use, so importing this
package is cheap and never touches torch.

    from core.methods import plan, METHODS
    p = plan("rag", ctx, query, k=5, retriever="bm25")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.benchmark import MethodInfo
from core.registry import Registry, merged

if TYPE_CHECKING:
    from core.history.types import BuiltContext
    from core.model import Query
    from core.plan import PromptPlan


def _gather() -> tuple[list[MethodInfo], dict[str, str]]:
    from core import benchmark as benchmarks

    return merged(benchmarks.entries("methods")), benchmarks.aliases("method_aliases")


#: Every method of the installed benchmarks (:mod:`core.benchmarks`), in their listed order
#: (RealPref, InterPref, CUPID, PrefEval, Re-Centering, LoCoMo, LongMemEval, PersonaMem, installed
#: ones; ``generic`` last). Filled on first use.
METHODS: Registry[MethodInfo] = Registry.deferred(_gather)


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
