"""Reading the shell lines and the input files out of a docs page, for the test that runs them.

A page is read top to bottom as a list of steps: a fenced block with a title
(```toml title="fig5.toml"``) is a file the commands after it read; every line of a ```bash block
is one command (``\\`` continues it, a trailing ``# comment`` is dropped, ``# exit 3`` states the
exit code it ends with). What a command line may not contain, because a reader could not paste it
as it stands, is :func:`unrunnable`'s business.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

#: The fence languages whose lines are commands.
SHELL = frozenset({"bash", "sh", "shell", "console", "zsh"})
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
_TITLE = re.compile(r"""\btitle=(?:"([^"]*)"|'([^']*)'|(\S+))""")
_EXIT = re.compile(r"\bexit (\d+)\b")
#: A token that names a thing instead of being one: RUN_ID, NAME, FACTOR=VALUE.
_CAPS = re.compile(r"[A-Z][A-Z0-9_]+")
_OPERATORS = frozenset("|&;<>()")
_SNIPPET = re.compile(r'^[ \t]*--8<--[ \t]+"(?P<target>[^"]+)"[ \t]*$', re.MULTILINE)


@dataclass(frozen=True)
class Block:
    lang: str
    title: str | None
    #: The page line of the opening fence.
    line: int
    #: (page line, text) of each line inside the fences, the fence's indentation removed.
    lines: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class FileStep:
    """A titled block: written to the working folder before the commands after it run."""

    line: int
    name: str
    text: str


@dataclass(frozen=True)
class CommandStep:
    """One command line of a shell block."""

    line: int
    #: Which shell block of the page it is in (0-based), so a skipped line can skip the rest of it.
    block: int
    #: The command without its comment, continuation lines joined.
    code: str
    comment: str

    @property
    def expected_exit(self) -> int:
        found = _EXIT.search(self.comment)
        return int(found.group(1)) if found else 0


def page_lines(page: Path, base: Path) -> list[tuple[int, str]]:
    """(line number, text) of the page as the site shows it: a pymdownx.snippets line
    (``--8<-- "FILE"``, ``--8<-- "FILE:section"``; ``base`` is its base_path) is replaced by the
    lines it includes, each numbered as the snippet line."""
    out: list[tuple[int, str]] = []
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        snippet = _SNIPPET.match(line)
        out += [(n, included) for included in _included(base, snippet["target"])] if snippet else [(n, line)]
    return out


def _included(base: Path, target: str) -> list[str]:
    name, _, section = target.partition(":")
    lines = (base / name).read_text(encoding="utf-8").splitlines()
    if not section:
        return lines
    start = next(i for i, line in enumerate(lines) if f"--8<-- [start:{section}]" in line)
    end = next(i for i, line in enumerate(lines) if f"--8<-- [end:{section}]" in line)
    return lines[start + 1 : end]


def blocks(lines: list[tuple[int, str]]) -> list[Block]:
    """The fenced blocks of a page's numbered lines, indented ones (inside list items) included."""
    out: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i][1])
        if not opening:
            i += 1
            continue
        indent, fence, info = opening["indent"], opening["fence"], opening["info"].strip()
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body: list[tuple[int, str]] = []
        j = i + 1
        while j < len(lines) and not closing.match(lines[j][1]):
            body.append((lines[j][0], lines[j][1].removeprefix(indent)))
            j += 1
        lang = info.split()[0].lower() if info else ""
        title = _TITLE.search(info)
        name = next((g for g in title.groups() if g is not None), None) if title else None
        out.append(Block(lang, name, lines[i][0], tuple(body)))
        i = j + 1
    return out


def steps(lines: list[tuple[int, str]]) -> list[FileStep | CommandStep]:
    """The page's input files and command lines, in the order a reader meets them."""
    out: list[FileStep | CommandStep] = []
    shell_blocks = 0
    for block in blocks(lines):
        if block.title is not None:
            out.append(FileStep(block.line, block.title, "\n".join(text for _, text in block.lines) + "\n"))
        elif block.lang in SHELL:
            out += commands(block, shell_blocks)
            shell_blocks += 1
    return out


def commands(block: Block, index: int) -> list[CommandStep]:
    out: list[CommandStep] = []
    pending = ""
    start = 0
    for n, raw in block.lines:
        line = raw.rstrip()
        if not pending:
            start = n
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        code, comment = split_comment(pending + line.strip())
        pending = ""
        if code:
            out.append(CommandStep(start, index, code, comment))
    if pending:  # a block that ends on a continuation: the runner reports it as unrunnable
        out.append(CommandStep(start, index, pending.strip() + " \\", ""))
    return out


def split_comment(line: str) -> tuple[str, str]:
    """``(code, comment)``: a ``#`` that starts a word outside quotes starts the comment."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].strip(), line[i + 1 :].strip()
    return line.strip(), ""


def unrunnable(code: str) -> str | None:
    """Why ``code`` is not a command a reader could paste and run as it stands, or None."""
    if code.endswith("\\"):
        return "the block ends on a continuation line"
    if "…" in code or "..." in code.replace("../", ""):
        return "an ellipsis stands for something left out"
    try:
        argv = shlex.split(code)
        lexer = shlex.shlex(code, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        operators = [t for t in lexer if t and set(t) <= _OPERATORS]
    except ValueError as exc:
        return f"it does not parse as a shell line ({exc})"
    if operators or "$" in code or "`" in code:
        return "shell syntax (pipes, redirections, variables): the runner runs one plain command per line"
    for token in argv:
        if token.startswith("[") or token.endswith("]"):
            return f"{token!r} is an optional part in brackets: say it in the prose or show a second command"
        if "<" in token or ">" in token:
            return f"{token!r} is a placeholder in angle brackets"
        if any(_CAPS.fullmatch(part) for part in token.split("=")):
            return f"{token!r} is a placeholder: use a real name the page created, or show it as example output"
    return None


def argv(code: str) -> list[str]:
    return shlex.split(code)
