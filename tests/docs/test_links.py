"""Every relative link in README.md, CONTRIBUTING.md and the docs pages leads somewhere: the file
exists and, when the link names an anchor, the target has that heading. A docs page's anchors are
the ids its site page gets (Python-Markdown with mkdocs.yml's extensions); README.md and
CONTRIBUTING.md are read on GitHub, so theirs are GitHub's heading slugs."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import markdown
import pytest
import yaml

from tests.conftest import REPO

DOCS = REPO / "docs"
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\\\[|\\\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def linking_pages() -> list[Path]:
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted(DOCS.glob("**/*.md"))]


def links(text: str) -> list[str]:
    """The link and image targets of a Markdown text, outside code blocks and code spans."""
    prose = _CODE_SPAN.sub("", _FENCE.sub("", text))
    return [m.group(1) for m in _LINK.finditer(prose)]


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    """``page: target (why)`` for each relative link of ``page`` that leads nowhere (``page`` named
    relative to ``root``)."""
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: … are not checked here
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{page.relative_to(root)}: {target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{page.relative_to(root)}: {target} (no heading #{anchor} in {file.name})")
    return broken


@cache
def anchors(file: Path) -> frozenset[str]:
    text = file.read_text(encoding="utf-8")
    if file.is_relative_to(DOCS):
        html = markdown.Markdown(extensions=_site_extensions()).convert(text)
        return frozenset(re.findall(r'\bid="([^"]+)"', html))
    return frozenset(github_slugs(text))


def _site_extensions() -> list:
    """mkdocs.yml's Markdown extensions, as the site build loads them (name, or name with its config)."""
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    return [e if isinstance(e, str) else next(iter(e)) for e in config["markdown_extensions"]]


def github_slugs(text: str) -> list[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation but - and _
    dropped, spaces as hyphens; a repeated one gets -1, -2 …"""
    slugs: list[str] = []
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
        slug = re.sub(r"[^\w\- ]", "", words.lower()).replace(" ", "-")
        repeats = sum(1 for s in slugs if re.fullmatch(re.escape(slug) + r"(-\d+)?", s))
        slugs.append(f"{slug}-{repeats}" if repeats else slug)
    return slugs


@pytest.mark.parametrize("page", linking_pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_leads_somewhere(page):
    assert broken_links(page) == []


def test_a_missing_file_and_a_missing_heading_are_found(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## Known heading\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[fine](other.md#known-heading) [gone](missing.md) [no heading](other.md#unknown) "
        "[web](https://example.org) `[in code](missing.md)`\n\n```\n[in a block](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "page.md: missing.md (no such file)",
        "page.md: other.md#unknown (no heading #unknown in other.md)",
    ]


def test_github_slugs_follow_githubs_rules():
    text = "# prefscope\n## Add a benchmark: one folder plus one entry-point line\n## `max_field_mb` (MB)\n## Data\n## Data\n"
    assert github_slugs(text) == [
        "prefscope",
        "add-a-benchmark-one-folder-plus-one-entry-point-line",
        "max_field_mb-mb",
        "data",
        "data-1",
    ]
