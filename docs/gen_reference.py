"""Writes the docs pages generated from the code: the reference (docs/reference/: every command,
key binding, setting, table and exit code) and the benchmark pages (docs/benchmarks/), plus the
Benchmarks list of mkdocs.yml's nav. Never edit those by hand: change the code, then run

    python docs/gen_reference.py           # rewrite them
    python docs/gen_reference.py --check   # exit 1 naming each stale page (tests/docs/)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: docs/ is first on the path, the repository is not
    sys.path.insert(0, str(REPO))

COMMAND_LINE = "python docs/gen_reference.py"
#: Folders whose every page is generated: a page there that is no longer generated is stale.
GENERATED_DIRS = ("docs/reference", "docs/benchmarks")
MKDOCS = "mkdocs.yml"
NAV_START = "# benchmarks:start"
NAV_END = "# benchmarks:end"


def pages(*, commands: list | None = None, settings_model: type | None = None) -> dict[str, str]:
    """Every generated page, path relative to the repository → text. ``commands`` (as
    :func:`docs.reference_gen.cli.commands` gives them) and ``settings_model`` default to the code's."""
    from core.settings import Settings
    from docs.reference_gen import benchmarks, cli, exit_codes, keys, schema, settings
    from tui.cli import main

    listed = cli.commands() if commands is None else commands
    reference = [
        ("Command line", "cli.md", cli.SOURCE, cli.page(main, listed)),
        ("Keys", "keys.md", keys.SOURCE, keys.page(keys.holders())),
        ("Configuration", "configuration.md", settings.SOURCE, settings.page(settings_model or Settings)),
        ("Database schema", "database.md", schema.SOURCE, schema.page()),
        ("Exit codes", "exit-codes.md", exit_codes.SOURCE, exit_codes.page()),
    ]
    out = {"docs/reference/index.md": reference_index([(title, name, source) for title, name, source, _ in reference])}
    out.update({f"docs/reference/{name}": text for _, name, _, text in reference})
    found = benchmarks.builtin()
    out["docs/benchmarks/index.md"] = benchmarks.index_page(found)
    out.update({f"docs/benchmarks/{b.name}.md": benchmarks.page(b) for b in found})
    out[MKDOCS] = with_benchmark_nav(_read(MKDOCS), [(b.title, f"benchmarks/{b.name}.md") for b in found])
    return out


def reference_index(listed: list[tuple[str, str, str]]) -> str:
    """docs/reference/index.md: each reference page and what it is generated from."""
    from docs.reference_gen import markdown as md

    rows = [(f"[{title}]({name})", source) for title, name, source in listed]
    about = f"Every page here is generated from the code (`{COMMAND_LINE}`), so it lists everything there is."
    return md.page(
        "Reference",
        "the list of reference pages in docs/gen_reference.py",
        about,
        md.table(("page", "generated from"), rows),
    )


def with_benchmark_nav(mkdocs_yml: str, entries: list[tuple[str, str]]) -> str:
    """mkdocs.yml with the lines between the benchmarks markers replaced by one nav entry per page."""
    lines = mkdocs_yml.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip().startswith(NAV_START)]
    ends = [i for i, line in enumerate(lines) if line.strip() == NAV_END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise SystemExit(f"{MKDOCS} needs one `{NAV_START}` … `{NAV_END}` block in its nav")
    indent = lines[starts[0]][: len(lines[starts[0]]) - len(lines[starts[0]].lstrip())]
    nav = [f"{indent}- benchmarks/index.md\n", *(f"{indent}- {json.dumps(title)}: {path}\n" for title, path in entries)]
    return "".join([*lines[: starts[0] + 1], *nav, *lines[ends[0] :]])


def stale(generated: dict[str, str]) -> list[str]:
    """One line per page that differs from what the code generates now, or is no longer generated."""
    problems = [f"{path} is stale: run `{COMMAND_LINE}`" for path, text in generated.items() if _read(path) != text]
    for path in sorted(leftovers(generated)):
        problems.append(f"{path} is no longer generated: run `{COMMAND_LINE}` (it deletes the page)")
    return problems


def leftovers(generated: dict[str, str]) -> set[str]:
    """Pages in the generated folders that nothing generates any more (a removed benchmark)."""
    on_disk = {p.relative_to(REPO).as_posix() for d in GENERATED_DIRS for p in (REPO / d).glob("**/*.md")}
    return on_disk - generated.keys()


def write(generated: dict[str, str], say: Callable[[str], None] = print) -> None:
    for path, text in generated.items():
        target = REPO / path
        if _read(path) != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            say(f"wrote {path}")
    for path in sorted(leftovers(generated)):
        (REPO / path).unlink()
        say(f"deleted {path}")


def _read(path: str) -> str:
    target = REPO / path
    return target.read_text(encoding="utf-8") if target.is_file() else ""


def main(argv: list[str]) -> int:
    generated = pages()
    if "--check" in argv:
        problems = stale(generated)
        for line in problems:
            print(line, file=sys.stderr)
        return 1 if problems else 0
    write(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
