"""Prompt templates as data: ``core/methods/templates/<family>.toml``, each table with ``text``
(or example fields), ``source`` (citation) and ``verbatim`` (published text vs prefscope's own).

Placeholders are ``{name}`` and are filled by plain replacement of the names given, so braces in
published text (JSON schemas, ``{{output:step}}`` markers) pass through untouched.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources


@cache
def family(name: str) -> dict[str, dict]:
    """All templates of one family (one TOML file): a benchmark's (its ``method_templates``), else
    the generic ones in ``core/methods/templates/``."""
    from core.benchmark import prompt_file, read_prompt_file

    where = prompt_file("method", name)
    if where is not None:
        return tomllib.loads(read_prompt_file(where))
    text = resources.files("core.methods").joinpath("templates", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def where(name: str) -> str:
    """The file family ``name`` is read from, for messages."""
    from core.benchmark import prompt_file

    return prompt_file("method", name) or f"core/methods/templates/{name}.toml"


def template(family_name: str, key: str) -> dict:
    try:
        return family(family_name)[key]
    except KeyError:
        raise KeyError(f"no template {key!r} in {where(family_name)}") from None


def text(family_name: str, key: str, **values: object) -> str:
    """A template's text with ``{name}`` placeholders filled."""
    return fill(template(family_name, key)["text"], **values)


def fill(text: str, **values: object) -> str:
    """Replace every ``{name}`` of the given names in ONE pass, like ``str.format``: a value that
    itself contains ``{name}`` (user text in a log) is never substituted again."""
    if not values:
        return text
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
    return pattern.sub(lambda m: str(values[m[1]]), text)


def sources(family_name: str) -> dict[str, str]:
    """Template key -> citation (for the Prompt tab and the README)."""
    return {k: v.get("source", "") for k, v in family(family_name).items()}
