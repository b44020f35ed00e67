"""A benchmark is one typed object: :class:`Benchmark`, what it adds to prefscope's registries.

Each benchmark (built-in or a ``pip install``-ed package) exposes one :class:`Benchmark` through
the entry-point group ``prefscope.benchmarks``; :mod:`core.benchmarks` gathers them and the
registries (:data:`core.formats.FORMATS`, :data:`core.methods.METHODS`, :data:`core.judges.JUDGES`,
:data:`core.results.RESULT_FORMATS`) merge their entries with the generic ones, by
:attr:`core.registry.Entry.order`. Like :class:`core.registry.Entry`, a descriptor holds strings
(``"module:attr"`` targets), never imports, so reading it costs nothing::

    BENCHMARK = Benchmark(
        name="toy",
        title="Toy",
        citation="Doe et al. 2026",
        formats=(Entry("toy", "toy_benchmark.format", "Toy questions (toy.json)"),),
        methods=(MethodInfo("toy-ask", "toy_benchmark.method:ask", "Ask it.", "Toy", "Doe §2"),),
        judges=(JudgeKind("toy-exact", "toy_benchmark.judge:ExactJudge", "Exact match.", needs_model=False),),
        report_sections=(ReportSection("toy", "Toy accuracy", "toy-exact", "accuracy", "toy_benchmark.report:table"),),
        profile=Profile(method="toy-ask", judge="toy-exact"),
    )

This module is the bottom floor of ``core`` (next to :mod:`core.registry`): it imports nothing
of prefscope's but the registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.registry import LAST, Entry

__all__ = ["Benchmark", "Entry", "JudgeKind", "MethodInfo", "Profile", "ReportSection"]


@dataclass(frozen=True)
class MethodInfo(Entry):
    """A prompting method: ``target`` is a builder ``(ctx, query, options) -> PromptPlan``."""

    family: str = ""
    citation: str = ""
    steps: int = 1
    uses_history: bool = True


@dataclass(frozen=True)
class JudgeKind(Entry):
    """A judge: ``target`` is a :class:`core.judges.base.Judge` class."""

    #: An LLM judge: built with a judge model id (``<kind>:<model id>``).
    needs_model: bool = True
    #: Scores one answer (False: pairwise, which compares two and has its own command).
    per_response: bool = True


@dataclass(frozen=True)
class ReportSection:
    """A table ``prefscope report`` prints for a benchmark's judgments.

    ``target`` is ``"module:function"``, called as ``function(rows, factors) -> ReportTable`` with
    the stored judgments of ``judge_kind`` (and ``dimension``; None: every dimension) of the listed
    runs as :class:`core.analysis.report.JudgmentRow` (``extra`` filled) and the report's factors.
    The section applies when the listed runs have judgments of that kind and dimension.
    """

    name: str
    title: str
    judge_kind: str
    dimension: str | None
    target: str
    description: str = ""
    #: Factors to group by; None: the report's ``--by``.
    factors: tuple[str, ...] | None = None
    #: None: printed whenever it applies and has rows. A name: printed only with ``--<flag>``
    #: (``report --cupid`` / ``--interpref`` for today's built-in sections).
    flag: str | None = None
    #: Position among all sections (lower first; ties by benchmark order).
    order: float = LAST

    def load(self) -> Any:
        return Entry(self.name, self.target, self.title).load()


@dataclass(frozen=True)
class Profile:
    """The defaults a benchmark's users start from (declared and listed; applied in a later step).
    A field left None keeps prefscope's own default."""

    context: str | None = None
    method: str | None = None
    judge: str | None = None
    #: Factors its report is usually read by (``report --by``).
    factors: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"context": self.context, "method": self.method, "judge": self.judge, "factors": list(self.factors)}


@dataclass(frozen=True)
class Benchmark:
    """Everything one benchmark adds. Every target is a string; nothing here is imported until used."""

    #: Short id (the entry point's name; lower case, no spaces).
    name: str
    title: str
    citation: str
    #: Input format readers (``core.formats``-style modules: ``detect`` / ``load``).
    formats: tuple[Entry, ...] = ()
    methods: tuple[MethodInfo, ...] = ()
    #: Other names of its methods: alias -> method name.
    method_aliases: tuple[tuple[str, str], ...] = ()
    judges: tuple[JudgeKind, ...] = ()
    #: Result-file importers ("bring your own results": ``core.results``-style modules).
    result_formats: tuple[Entry, ...] = ()
    report_sections: tuple[ReportSection, ...] = ()
    profile: Profile | None = None
    #: Protocol notes: a path (relative to the repository or absolute) or the text itself.
    protocol: str = ""

    def listing(self) -> dict[str, Any]:
        """A JSON-ready summary (``prefscope benchmarks --json``)."""
        return {
            "name": self.name,
            "title": self.title,
            "citation": self.citation,
            "formats": [e.name for e in self.formats],
            "methods": [e.name for e in self.methods],
            "judges": [e.name for e in self.judges],
            "result_formats": [e.name for e in self.result_formats],
            "report_sections": [s.name for s in self.report_sections],
            "profile": self.profile.as_dict() if self.profile else None,
            "protocol": self.protocol,
        }
