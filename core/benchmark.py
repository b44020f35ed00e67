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

Discovery (:func:`installed`) is here too. It runs once per process, the first time a registry is
used (never on import, so ``prefscope --help`` and the TUI's start do not pay for it). The built-in
benchmarks (``core/benchmarks/<name>/``) are registered the same way as a third-party package, by a
line in ``pyproject.toml``::

    [project.entry-points."prefscope.benchmarks"]
    cupid = "core.benchmarks.cupid:BENCHMARK"

This module is the bottom floor of ``core`` (next to :mod:`core.registry`): it imports nothing
of prefscope's but the registry, so every layer may ask it; the benchmark packages themselves are
the top floor.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from core.registry import LAST, Entry

__all__ = [
    "BUILTIN",
    "GROUP",
    "Benchmark",
    "Entry",
    "FactorLabels",
    "ImportOption",
    "JudgeKind",
    "MethodInfo",
    "Profile",
    "ReportSection",
    "aliases",
    "entries",
    "find",
    "for_source",
    "installed",
    "prompt_file",
    "read_prompt_file",
    "report_section",
    "report_sections",
]


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
class ImportOption:
    """An option of ``prefscope import`` that one of the benchmark's formats reads: given, it reaches
    the format's ``load`` as the keyword ``keyword``."""

    flag: str
    keyword: str
    help: str
    #: The values it takes; empty: the path of an existing file.
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class FactorLabels:
    """Names for a report factor's raw values, for this benchmark's users only (LoCoMo's
    ``category`` 4 is shown as ``4 single-hop``). ``target`` is ``"module:attr"``, a dict raw
    value -> name."""

    factor: str
    target: str

    def load(self) -> dict[Any, str]:
        return dict(Entry(self.factor, self.target, "").load())


@dataclass(frozen=True)
class Profile:
    """The defaults a benchmark's users start from (``prompt`` and ``run`` on the command line, the
    TUI's run bar; :mod:`core.run.profile` applies them). A field left None keeps prefscope's own
    default; an option the operator gives always wins."""

    context: str | None = None
    method: str | None = None
    #: A judge kind. One that needs a model (``taxonomy``) is built with the configured judge model
    #: (``taxonomy:<model id>``), or replaced by the heuristic when none is configured.
    judge: str | None = None
    #: Factors its report is usually read by (``report --by``).
    factors: tuple[str, ...] = ()
    #: Inter turns for a context that takes them (``--turns``; PrefEval's ``--inter_turns``).
    turns: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"context": self.context, "method": self.method, "judge": self.judge}
        out["factors"] = list(self.factors)
        if self.turns is not None:  # only profiles that set it: the others list as before
            out["turns"] = self.turns
        return out


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
    #: Options ``prefscope import`` offers for its formats (LoCoMo: ``--user-speaker``).
    import_options: tuple[ImportOption, ...] = ()
    #: Value names of report factors for this benchmark's users (``report --by``, ``show``).
    factor_labels: tuple[FactorLabels, ...] = ()
    #: Prompt template families it brings: family name -> ``"package:file.toml"`` (method
    #: templates for :func:`core.methods.prompts.family`, judge prompts for
    #: :func:`core.judges.templates.family`).
    method_templates: tuple[tuple[str, str], ...] = ()
    judge_prompts: tuple[tuple[str, str], ...] = ()
    #: Its own answer formats (a plan's ``answer_format``, e.g. ``mcq-prefeval``), each an
    #: :class:`Entry` whose target is ``"module:function"``, ``function(JudgeInput) -> list[Judgment]``:
    #: how the ``choice`` judge scores a reply to such a plan, as the benchmark reads replies.
    answer_formats: tuple[Entry, ...] = ()
    #: ``"module:function"``, ``function(Session) -> list[str]``: texts its RAG method embeds from
    #: one of its users' sessions besides the turn units, so ``prefscope embed`` embeds them ahead
    #: (PrefEval: its per-message candidates). None: the turn units only.
    rag_texts: str | None = None
    profile: Profile | None = None
    #: A module with answers a real model gave, published with the benchmark (the workbench's f4
    #: case; :mod:`app.recorded_cases` says what it holds). None: it has none.
    recorded_case: str | None = None
    #: Protocol notes: a path (relative to the repository or absolute) or the text itself.
    protocol: str = ""

    def source_names(self) -> set[str]:
        """The ``User.source`` values its users carry: the names of its formats."""
        return {e.name for e in self.formats}

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


GROUP = "prefscope.benchmarks"
#: The built-in benchmarks, each a package ``core.benchmarks.<name>`` with its ``BENCHMARK``.
BUILTIN = (
    "realpref",
    "interpref",
    "cupid",
    "prefeval",
    "locomo",
    "longmemeval",
    "personamem",
    "personamem-v2",
    "personamem-v3",
    "op-bench",
    "recentering",
)
#: A built-in whose registry name is no Python package name: the package it lives in.
_PACKAGE = {"personamem-v2": "personamem_v2", "personamem-v3": "personamem_v3", "op-bench": "opbench"}


def package_of(name: str) -> str:
    """The package under ``core.benchmarks`` of a built-in benchmark's registry name."""
    return _PACKAGE.get(name, name)


_installed: list[Benchmark] | None = None
_lock = threading.Lock()


def _entry_points() -> list[metadata.EntryPoint]:
    """The group's entry points, one per name (the first distribution on the path wins)."""
    found: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=GROUP):
        found.setdefault(ep.name, ep)
    return list(found.values())


def _load(ep_name: str, value: str) -> Benchmark | None:
    module, _, attr = value.partition(":")
    try:
        loaded = getattr(importlib.import_module(module.strip()), attr.strip() or "BENCHMARK")
    except Exception as exc:  # a broken third-party package must not take prefscope down
        warnings.warn(f"benchmark {ep_name!r} ({value}) could not be loaded: {exc}", stacklevel=3)
        return None
    if not isinstance(loaded, Benchmark):
        warnings.warn(f"benchmark {ep_name!r} ({value}) is not a core.benchmark.Benchmark; skipped", stacklevel=3)
        return None
    return loaded


def installed() -> list[Benchmark]:
    """Every registered benchmark, built-ins first (in :data:`BUILTIN` order), then the others by name.

    A built-in whose entry point is missing (prefscope run from a checkout whose metadata is
    stale) is still loaded from its package, so the registries never lose it."""
    global _installed
    with _lock:
        if _installed is None:
            points = {ep.name: ep.value for ep in _entry_points()}
            for name in BUILTIN:
                points.setdefault(name, f"core.benchmarks.{package_of(name)}:BENCHMARK")
            order = {name: i for i, name in enumerate(BUILTIN)}
            names = sorted(points, key=lambda n: (order.get(n, len(order)), n))
            loaded = [_load(name, points[name]) for name in names]
            _installed = [b for b in loaded if b is not None]
        return _installed


def find(name: str) -> Benchmark | None:
    key = name.strip().lower()
    return next((b for b in installed() if b.name == key), None)


def for_source(source: str) -> Benchmark | None:
    """The benchmark whose format reads users of this ``User.source`` (None: sample, native,
    chat logs, or a source no installed benchmark reads)."""
    return next((b for b in installed() if source in b.source_names()), None)


def prompt_file(kind: str, family: str) -> str | None:
    """Where a benchmark keeps prompt family ``family``: ``"package:file.toml"`` from its
    ``method_templates`` (kind ``"method"``) or ``judge_prompts`` (``"judge"``); None if none does."""
    attr = "method_templates" if kind == "method" else "judge_prompts"
    for b in installed():
        for name, where in getattr(b, attr):
            if name == family:
                return where
    return None


def read_prompt_file(where: str) -> str:
    """The text of ``"package:relative/path.toml"`` (a :func:`prompt_file` answer)."""
    from importlib import resources

    package, _, relative = where.partition(":")
    return resources.files(package).joinpath(*relative.split("/")).read_text(encoding="utf-8")


def entries(attr: str) -> list[Iterable]:
    """``[benchmark.<attr> for each installed benchmark]``, for the registries to merge."""
    return [getattr(b, attr) for b in installed()]


def aliases(attr: str) -> dict[str, str]:
    """The benchmarks' ``<attr>`` alias pairs as one dict (an earlier benchmark's alias wins)."""
    out: dict[str, str] = {}
    for b in installed():
        for alias, name in getattr(b, attr):
            out.setdefault(alias, name)
    return out


def report_section(name: str) -> ReportSection:
    """The registered report section called ``name`` (``report --section NAME``)."""
    for _, section in report_sections():
        if section.name == name:
            return section
    known = ", ".join(s.name for _, s in report_sections())
    raise KeyError(f"no report section {name!r}; installed: {known}")


def report_sections() -> list[tuple[Benchmark, ReportSection]]:
    """Every benchmark's report sections, by :attr:`ReportSection.order` (ties: benchmark order)."""
    pairs = [(b, s) for b in installed() for s in b.report_sections]
    return sorted(pairs, key=lambda pair: pair[1].order)
