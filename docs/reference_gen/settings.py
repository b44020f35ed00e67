"""docs/reference/configuration.md: every setting of :class:`core.settings.Settings` and of the
tables inside it (endpoints, routers), with its type, default, constraints, environment variable
and the doc comment (``#:``) above its field."""

from __future__ import annotations

import ast
import inspect
import json
import os
import textwrap
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from unittest import mock

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from core import settings as core_settings
from docs.reference_gen import markdown as md

SOURCE = "`core.settings.Settings` (its fields and their `#:` comments)"

_TYPE_NAMES = {str: "text", int: "integer", float: "number", bool: "true or false", Path: "a file path"}
_BOUNDS = {"gt": ">", "ge": "≥", "lt": "<", "le": "≤", "min_length": "length ≥ {}", "max_length": "length ≤ {}"}


def page(model: type[BaseModel]) -> str:
    sections = [
        *md.help_text(core_settings.__doc__ or ""),
        "Settings go at the top level of the TOML file (`prefscope paths` prints where it is); the tables "
        "(`[endpoints.NAME]`, `[routers.NAME]`) are described after them.",
        "## Settings",
        *(_field_section(model, name, field, env=True) for name, field in model.model_fields.items()),
        *(_table_section(where, table) for where, table in _tables(model, "")),
        _other_env_section(),
    ]
    return md.page("Configuration", SOURCE, *sections)


def _field_section(model: type[BaseModel], name: str, field: FieldInfo, *, env: bool, where: str = "") -> str:
    """One setting under a heading of its name (a table's: its whole TOML path, so each heading's
    anchor is unique and the same on GitHub as on the site, with no explicit ids)."""
    title = f"{where.strip('[]')}.{name}" if where else name
    facts = [f"- Type: {_type_name(field.annotation)}", f"- Default: {_default(field)}"]
    bounds = _constraints(field)
    if bounds:
        facts.append(f"- Allowed: {bounds}")
    if env:
        facts.append(f"- Environment: {_env_line(model, name)}")
    doc = " ".join(filter(None, [field.description, doc_comment(model, name)]))
    return "\n\n".join(filter(None, [f"### `{title}`", md.text(doc), "\n".join(facts)]))


def doc_comment(model: type[BaseModel], name: str) -> str:
    """The ``#:`` comment lines right above the field ``name`` in the class that declares it."""
    owner = next(c for c in model.__mro__ if name in vars(c).get("__annotations__", {}))
    lines, _ = inspect.getsourcelines(owner)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            above = []
            for line in reversed(lines[: node.lineno - 1]):
                if not line.strip().startswith("#:"):
                    break
                above.insert(0, line.strip().removeprefix("#:").strip())
            return " ".join(above)
    return ""


def _type_name(annotation: Any) -> str:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type_name(args[0])
    if origin is Literal:
        return "one of " + ", ".join(md.code(json.dumps(a)) for a in args)
    if origin in (Union, types.UnionType):
        given = [a for a in args if a is not type(None)]
        named = " or ".join(_type_name(a) for a in given)
        return f"{named}, or unset" if len(given) < len(args) else named
    if origin is list:
        return f"a list of {_type_name(args[0])}"
    if origin is dict:
        return f"a table: {_type_name(args[0])} → {_type_name(args[1])}"
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return _TYPE_NAMES.get(annotation, md.code(getattr(annotation, "__name__", str(annotation))))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "none (required)"
    value = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
    if value is None:
        return "unset"
    if isinstance(value, Path):
        return _path_default(value)
    return md.code(json.dumps(value, ensure_ascii=False))


def _path_default(value: Path) -> str:
    """A default under the data directory, said without this machine's path to it."""
    try:
        inside = value.relative_to(core_settings.data_dir())
    except ValueError:
        return md.code(json.dumps(str(value)))
    return f"{md.code(inside.as_posix())} in the data directory (`prefscope paths` prints it)"


def _constraints(field: FieldInfo) -> str:
    said = []
    for item in field.metadata:
        for attr, form in _BOUNDS.items():
            bound = getattr(item, attr, None)
            if bound is not None:
                said.append(form.format(bound) if "{}" in form else f"{form} {bound}")
        if getattr(item, "pattern", None):
            said.append(f"matches {md.code(item.pattern)}")
    return ", ".join(said)


def _env_line(model: type[BaseModel], name: str) -> str:
    var = f"{core_settings.ENV_PREFIX}{name.upper()}"
    return f"{md.code(var)} ({'JSON' if _env_is_json(var) else 'the value as it is'})"


def _env_is_json(var: str) -> bool:
    """Whether core.settings reads ``var`` as JSON (lists, tables) or as the plain value: asked of
    :func:`core.settings.env_values` itself, with a value that is no JSON."""
    with mock.patch.dict(os.environ, {var: "not-json"}, clear=True):
        try:
            core_settings.env_values()
        except ValueError:
            return True
    return False


def _tables(model: type[BaseModel], prefix: str) -> list[tuple[str, type[BaseModel]]]:
    """Every model nested in ``model``'s fields, with where it goes in the TOML file:
    ``[endpoints.NAME]``, ``[[routers.NAME.deployments]]``."""
    found = []
    for name, field in model.model_fields.items():
        for where, nested in _nested(field.annotation, f"{prefix}{name}"):
            found.append((where, nested))
            found += _tables(nested, where.strip("[]") + ".")
    return found


def _nested(annotation: Any, path: str) -> list[tuple[str, type[BaseModel]]]:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is dict and inspect.isclass(args[1]) and issubclass(args[1], BaseModel):
        return [(f"[{path}.NAME]", args[1])]
    if origin is list and inspect.isclass(args[0]) and issubclass(args[0], BaseModel):
        return [(f"[[{path}]]", args[0])]
    return []


def _table_section(where: str, table: type[BaseModel]) -> str:
    fields = [_field_section(table, n, f, env=False, where=where) for n, f in table.model_fields.items()]
    head = f"## {table.__name__}"
    about = f"{md.text(md.first_sentence(table.__doc__))} In the file: {md.code(where)}."
    return "\n\n".join([head, about, *fields])


def _other_env_section() -> str:
    names = ", ".join(md.code(core_settings.ENV_PREFIX + n) for n in sorted(core_settings.OTHER_ENV))
    why = _module_comment("OTHER_ENV")
    return f"## Other environment variables\n\n{md.text(why)}: {names}. Any other `PREFSCOPE_*` variable is refused by name."


def _module_comment(name: str) -> str:
    """The ``#:`` comment above a module-level assignment of core.settings."""
    lines = inspect.getsource(core_settings).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name} ="))
    above = []
    for line in reversed(lines[:start]):
        if not line.startswith("#:"):
            break
        above.insert(0, line.removeprefix("#:").strip())
    return " ".join(above).rstrip(".:")
