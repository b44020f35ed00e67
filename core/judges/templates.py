"""Judge prompt templates as data: ``core/judges/prompts/<family>.toml``.

Each table carries ``version`` (the prompt version id stored with every judgment, e.g.
``realpref-rubric-v1``; a file-level ``version`` is the default for its tables), ``source``
(citation) and ``verbatim`` (published text vs prefscope's own wording). ``{name}`` placeholders
are filled by plain replacement of the names given, so the braces of JSON examples pass through.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Template:
    family: str
    key: str
    version: str
    source: str
    verbatim: bool
    fields: dict

    def text(self, name: str, **values: object) -> str:
        try:
            return fill(self.fields[name], **values)
        except KeyError:
            raise KeyError(f"template {self.family}.{self.key} has no field {name!r}") from None


@cache
def family(name: str) -> dict:
    """One judge prompt family: a benchmark's (its ``judge_prompts``), else ``core/judges/prompts/``."""
    from core.benchmark import prompt_file, read_prompt_file

    where = prompt_file("judge", name)
    if where is not None:
        return tomllib.loads(read_prompt_file(where))
    raw = resources.files("core.judges").joinpath("prompts", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(raw)


def where(name: str) -> str:
    """The file family ``name`` is read from, for messages."""
    from core.benchmark import prompt_file

    return prompt_file("judge", name) or f"core/judges/prompts/{name}.toml"


def template(family_name: str, key: str) -> Template:
    data = family(family_name)
    if key not in data or not isinstance(data[key], dict):
        raise KeyError(f"no table [{key}] in {where(family_name)}")
    table = data[key]
    version = table.get("version") or data.get("version") or ""
    if not version:
        raise KeyError(f"{where(family_name)} [{key}] has no version id")
    return Template(family_name, key, version, table.get("source", ""), bool(table.get("verbatim", False)), dict(table))


def fill(text: str, **values: object) -> str:
    """Replace every ``{name}`` of the given names in ONE pass, like ``str.format``: a value that
    itself contains ``{name}`` (user text in a log) is never substituted again."""
    if not values:
        return text
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
    return pattern.sub(lambda m: str(values[m[1]]), text)
