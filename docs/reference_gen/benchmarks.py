"""docs/benchmarks/: one page per built-in benchmark from its registry entry (``BENCHMARK`` in
core/benchmarks/<name>/__init__.py), followed by its hand-written protocol notes (PROTOCOL.md beside
it), and an index page listing them."""

from __future__ import annotations

import re
from pathlib import Path

from core.benchmark import BUILTIN, Benchmark, find
from docs.reference_gen import markdown as md

REPO = Path(__file__).resolve().parents[2]
SOURCE = "`BENCHMARK` in {folder}/ and its protocol notes"


def builtin() -> list[Benchmark]:
    """The built-in benchmarks in their listing order (a package installed on this machine only is
    not documented here: the pages must not depend on the machine)."""
    found = [find(name) for name in BUILTIN]
    return [b for b in found if b is not None]


def index_page(benchmarks: list[Benchmark]) -> str:
    rows = [
        (f"[{md.text(b.title)}]({b.name}.md)", md.text(b.citation), ", ".join(md.code(m.name) for m in b.methods))
        for b in benchmarks
    ]
    about = (
        "Every built-in benchmark: what it imports, its methods with their citations, its judges, report "
        "sections and default profile, then its protocol notes (what matches the official code, what "
        "differs on purpose). `prefscope benchmarks NAME` prints the same registry entry."
    )
    return md.page(
        "Benchmarks", "`BENCHMARK` in core/benchmarks/*/", about, md.table(("benchmark", "source", "methods"), rows)
    )


def page(b: Benchmark) -> str:
    sections = [
        f"{md.text(b.citation)}. Registry name {md.code(b.name)}: `prefscope benchmarks {b.name}`.",
        _formats(b),
        _methods(b),
        _judges(b),
        _result_formats(b),
        _report_sections(b),
        _profile(b),
        _factor_labels(b),
        _protocol(b),
    ]
    return md.page(md.text(b.title), SOURCE.format(folder=_folder(b)), *sections)


def _folder(b: Benchmark) -> str:
    """The benchmark's package folder: where its protocol notes lie (a registry name such as
    ``op-bench`` is not always its folder's name)."""
    notes = Path(b.protocol)
    if b.protocol.endswith(".md") and len(notes.parts) > 1:
        return notes.parent.as_posix()
    return f"core/benchmarks/{b.name}"


def _formats(b: Benchmark) -> str:
    if not b.formats:
        return ""
    rows = [(md.code(e.name), md.text(e.description)) for e in b.formats]
    parts = ["## Formats", "`prefscope import PATH` detects them.", md.table(("format", "what it reads"), rows)]
    if b.import_options:
        options = [
            (md.code(o.flag), md.code("|".join(o.choices)) if o.choices else "a file path", md.text(o.help))
            for o in b.import_options
        ]
        parts += [
            "Options of `prefscope import` for these formats:",
            md.table(("option", "value", "what it does"), options),
        ]
    return "\n\n".join(parts)


def _methods(b: Benchmark) -> str:
    if not b.methods:
        return ""
    rows = [
        (
            md.code(m.name),
            md.text(m.description),
            md.text(m.citation),
            str(m.steps),
            "yes" if m.uses_history else "no",
        )
        for m in b.methods
    ]
    parts = ["## Methods", md.table(("method", "what it does", "citation", "model calls", "reads the history"), rows)]
    if b.method_aliases:
        aliases = ", ".join(f"{md.code(alias)} → {md.code(name)}" for alias, name in b.method_aliases)
        parts.append(f"Other names: {aliases}.")
    return "\n\n".join(parts)


def _judges(b: Benchmark) -> str:
    if not b.judges:
        return ""
    rows = [
        (
            md.code(j.name),
            md.text(j.description),
            f"yes (`{j.name}:MODEL`)" if j.needs_model else "no",
            "each answer" if j.per_response else "two answers (`prefscope pairwise`)",
        )
        for j in b.judges
    ]
    return "## Judges\n\n" + md.table(("judge", "what it scores", "needs a judge model", "scores"), rows)


def _result_formats(b: Benchmark) -> str:
    if not b.result_formats:
        return ""
    rows = [(md.code(e.name), md.text(e.description)) for e in b.result_formats]
    head = "## Result formats\n\nAnswers produced elsewhere, imported as runs by `prefscope import-results PATH`."
    return head + "\n\n" + md.table(("format", "what it reads"), rows)


def _report_sections(b: Benchmark) -> str:
    if not b.report_sections:
        return ""
    rows = [
        (
            md.code(s.name),
            md.text(s.title),
            md.text(s.description),
            " ".join(filter(None, [md.code(s.judge_kind), md.code(s.dimension) if s.dimension else ""])),
            f"with {md.code('--' + s.flag)}" if s.flag else "when it applies",
        )
        for s in b.report_sections
    ]
    head = "## Report sections\n\nTables `prefscope report` prints for this benchmark's judgments (`--section NAME`: one of them)."
    return head + "\n\n" + md.table(("section", "title", "what it shows", "judgments read", "printed"), rows)


def _profile(b: Benchmark) -> str:
    if b.profile is None:
        return ""
    p = b.profile
    facts = [
        ("context", p.context),
        ("method", p.method),
        ("judge", p.judge),
        ("report factors (`report --by`)", ",".join(p.factors) or None),
        ("inter turns (`--turns`)", None if p.turns is None else str(p.turns)),
    ]
    lines = [f"- {what}: {md.code(value) if value else 'prefscope default'}" for what, value in facts]
    head = (
        "## Default profile\n\nWhere `prompt`, `run` and the workbench's run bar start for this benchmark's "
        "users (`--profile none`: prefscope's own defaults); an option given always wins."
    )
    return head + "\n\n" + "\n".join(lines)


def _factor_labels(b: Benchmark) -> str:
    if not b.factor_labels:
        return ""
    parts = ["## Factor values"]
    for labels in b.factor_labels:
        names = ", ".join(f"{md.code(str(raw))} {md.text(name)}" for raw, name in labels.load().items())
        parts.append(f"{md.code(labels.factor)}: {names}.")
    return "\n\n".join(parts)


def _protocol(b: Benchmark) -> str:
    """The hand-written notes, headings one level down under "Protocol notes"; their own title dropped."""
    if not b.protocol:
        return ""
    path = Path(b.protocol) if Path(b.protocol).is_absolute() else REPO / b.protocol
    notes = path.read_text(encoding="utf-8") if path.suffix == ".md" and path.is_file() else b.protocol
    notes = _demoted(re.sub(r"\A# .*\n+", "", notes))
    where = (
        f" (from {md.code(path.relative_to(REPO).as_posix())})" if path.is_relative_to(REPO) and path.is_file() else ""
    )
    return f"## Protocol notes\n\nHand-written{where}.\n\n{notes.strip()}"


def _demoted(notes: str) -> str:
    """Every heading one level down, outside fenced code blocks."""
    lines, fenced = [], False
    for line in notes.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        lines.append("#" + line if not fenced and re.match(r"#+ ", line) else line)
    return "\n".join(lines)
