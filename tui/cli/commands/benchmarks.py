"""`prefscope benchmarks`: the installed benchmarks (entry-point group ``prefscope.benchmarks``)
with what each adds: formats, methods, judges, result formats, report sections, default profile.

Read from the registry alone (:mod:`core.benchmarks`): no database is opened.
"""

from __future__ import annotations

import json

import click

from tui.cli.command_info import CommandInfo

COMMAND = CommandInfo(
    name="benchmarks",
    help="List the installed benchmarks: formats, methods, judges, report sections, profile.",
    examples=("prefscope benchmarks", "prefscope benchmarks locomo --json"),
    writes=False,
    order=250,
    details="Entry-point group `prefscope.benchmarks`; `--json`.",
)


def _generic() -> dict[str, list[str]]:
    """The registry entries no benchmark contributes (prefscope's generic ones)."""
    from core import benchmark as benchmarks
    from core.formats import FORMATS
    from core.judges import JUDGES
    from core.results import RESULT_FORMATS

    out = {}
    for key, registry, attr in (
        ("formats", FORMATS, "formats"),
        ("judges", JUDGES, "judges"),
        ("result_formats", RESULT_FORMATS, "result_formats"),
    ):
        owned = {e.name for group in benchmarks.entries(attr) for e in group}
        out[key] = [name for name in registry if name not in owned]
    return out


def _line(values: list[str]) -> str:
    return ", ".join(values) or "—"


@click.command("benchmarks")
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON on stdout.")
def benchmarks(names, as_json) -> None:
    """List the installed benchmarks (NAMES: only these), each with its input formats, methods,
    judges, result formats, report sections and default profile. A package adds one through the
    entry-point group `prefscope.benchmarks` (see CONTRIBUTING.md, "Add a benchmark")."""
    from core import benchmark as registry

    chosen = registry.installed()
    if names:
        wanted = [n.strip().lower() for n in names]
        unknown = [n for n in wanted if registry.find(n) is None]
        if unknown:
            known = ", ".join(b.name for b in chosen)
            raise click.UsageError(f"unknown benchmark {', '.join(map(repr, unknown))}; installed: {known}")
        chosen = [b for b in chosen if b.name in wanted]
    if as_json:
        listing = {"benchmarks": [b.listing() for b in chosen]}
        if not names:
            listing["generic"] = _generic()
        click.echo(json.dumps(listing, ensure_ascii=False, indent=2))
        return
    for b in chosen:
        click.echo(f"{b.name}  {b.title}")
        click.echo(f"  citation         {b.citation}")
        click.echo(f"  formats          {_line([e.name for e in b.formats])}")
        click.echo(f"  methods          {_line([e.name for e in b.methods])}")
        click.echo(f"  judges           {_line([e.name for e in b.judges])}")
        click.echo(f"  result formats   {_line([e.name for e in b.result_formats])}")
        sections = [f"{s.name} (--{s.flag})" if s.flag else s.name for s in b.report_sections]
        click.echo(f"  report sections  {_line(sections)}")
        p = b.profile
        if p is None:
            click.echo("  default profile  —")
        else:
            values = (("context", p.context), ("method", p.method), ("judge", p.judge), ("turns", p.turns))
            parts = [f"{k} {v}" for k, v in values if v is not None]
            if p.factors:
                parts.append(f"by {','.join(p.factors)}")
            click.echo(f"  default profile  {' · '.join(parts) or '—'}")
        if b.protocol:
            click.echo(f"  protocol         {b.protocol}")
        click.echo()
    if not names:
        generic = _generic()
        click.echo("generic (no benchmark)")
        click.echo(f"  formats          {_line(generic['formats'])}")
        click.echo(f"  judges           {_line(generic['judges'])}")
        click.echo(f"  result formats   {_line(generic['result_formats'])}")
