"""A grid of runs: users × queries × expression types × contexts × methods × seeds × models.

A grid expands into :class:`Cell`\\ s, one RunSpec with ONE model each, so every model's answer
is resumable on its own. A cell's key is the sha256 of its spec without run id and label: the
same case with the same model and parameters always has the same key, whichever grid or batch
name produced it. Method and context names are normalised (``zero_shot`` → ``zero-shot``) before
hashing, so aliases do not make new cells.

Grid file (TOML)::

    name = "fig5"                      # batch name (resume key); default: the file's stem
    users = ["maya", "priya"]          # or "*" (every imported user)
    queries = "*"                      # or a list of query ids or patterns ("*-restraint");
                                       # "*" leaves generated restraint probes out
    query_kinds = ["open"]             # optional filter: open, mcq, tf
    expression_types = [1, 2, 3, 4]    # omit for datasets without expression types
    contexts = ["simple", "normal"]
    methods = ["zero-shot", "reminder"]
    seeds = [0]
    turns = [0, 10, 100]               # prefeval-turns context only: PrefEval's inter turns
    evidence_depth = [0, 0.25, 0.5, 0.75, 1]  # optional position sweep (core.history.evidence_placement)
    repeats = 3                        # optional: answers per cell (sampling variance, flip rates)
    temperature = 0.7                  # optional: every model's sampling temperature (unless its own is set)
    filler_pools = ["sample-everyday"] # optional: filler pool ids (default: each user's own source's pool)
    models = ["demo:generic", "demo:retrieval"]   # or [[models]] tables: id, temperature, max_tokens …
    judges = ["rubric"]
    [method_options]                   # passed to every run (e.g. RAG's k)
    k = 5
    [concurrency]
    runs = 8                           # runs in flight at once (global cap)
    per_provider = 4                   # model calls in flight per provider

A key no table has (``judgs``, ``repeat``, ``[method_option]``, ``[concurrency] runz``, a
``[[models]]`` table's ``temprature``) is refused with the nearest valid one, and a value of the
wrong type is one line naming its key path (:func:`parse_grid`); ``[method_options]`` itself is
free-form (each method reads its own keys).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from core.formats.errors import describe, join_path
from core.providers.base import ModelParams, ModelSpec
from core.run.spec import RunSpec
from core.settings import unknown_key


class GridError(ValueError):
    """A grid that cannot be expanded (unknown method, empty axis, bad TOML …)."""


class Concurrency(BaseModel):
    runs: int = Field(default=8, ge=1, le=1024)
    per_provider: int = Field(default=4, ge=1, le=1024)


class Grid(BaseModel):
    name: str = ""
    users: list[str] | Literal["*"] = "*"
    queries: list[str] | Literal["*"] = "*"
    query_kinds: list[str] = Field(default_factory=list)
    expression_types: list[int | None] = Field(default_factory=lambda: list[int | None]([None]))
    contexts: list[str] = Field(default_factory=lambda: ["simple"])
    methods: list[str] = Field(default_factory=lambda: ["zero-shot"])
    seeds: list[int] = Field(default_factory=lambda: [0])
    #: prefeval-turns context: inter-turn counts to sweep (PrefEval's --inter_turns); ignored by
    #: other contexts, which get one cell each.
    turns: list[int] = Field(default_factory=list)
    turns_order: Literal["official", "shuffled"] = "official"
    #: Position sweep: depths 0…1 of the gold evidence in the history (RunSpec.evidence_depth);
    #: empty = the evidence stays where the context puts it. The file may call it ``evidence_depth``.
    evidence_depths: list[float] = Field(default_factory=list)
    #: Answers per cell: repeat 0, 1 … of the same prompt (RunSpec.repeat).
    repeats: int = Field(default=1, ge=1, le=100)
    #: Sampling temperature of every model that does not set its own (recorded in its params).
    temperature: float | None = Field(default=None, ge=0)
    #: Filler pools every cell draws from (RunSpec.filler_pools); None = each user's default.
    filler_pools: list[str] | None = None
    models: list[ModelSpec] = Field(min_length=1)
    judges: list[str] = Field(default_factory=list)
    method_options: dict = Field(default_factory=dict)
    #: After each cell, ask its models the query's knowledge probes (``core.run.probes``).
    probe: bool = False
    concurrency: Concurrency = Field(default_factory=Concurrency)

    @field_validator("models", mode="before")
    @classmethod
    def _models(cls, value: list[object] | None) -> list[object]:
        out: list[object] = []
        for m in value or []:
            if isinstance(m, str):
                out.append({"id": m})
            elif isinstance(m, dict) and "params" not in m:
                params = {k: v for k, v in m.items() if k in ModelParams.model_fields}
                rest = {k: v for k, v in m.items() if k not in ModelParams.model_fields}
                out.append({**rest, "params": params})
            else:
                out.append(m)
        return out

    @model_validator(mode="before")
    @classmethod
    def _depth_name(cls, data):
        if isinstance(data, dict) and "evidence_depth" in data and "evidence_depths" in data:
            raise ValueError("give the depths once: evidence_depth or evidence_depths, not both")
        if isinstance(data, dict) and "evidence_depth" in data:
            data = dict(data)
            depth = data.pop("evidence_depth")
            data["evidence_depths"] = depth if isinstance(depth, list) else [depth]
        return data

    @field_validator("evidence_depths")
    @classmethod
    def _depths(cls, value: list[float]) -> list[float]:
        bad = [d for d in value if not 0 <= d <= 1]
        if bad:
            raise ValueError(f"evidence depths are fractions 0…1 of the history (got {bad})")
        return list(dict.fromkeys(float(d) for d in value))

    @field_validator("expression_types", mode="before")
    @classmethod
    def _expr(cls, value):
        return [None if v in (None, 0, "none", "") else v for v in (value or [None])]


@dataclass(frozen=True)
class Cell:
    key: str
    spec: RunSpec

    @property
    def model(self) -> ModelSpec:
        return self.spec.models[0]

    @property
    def plan_key(self) -> str:
        """Cells with the same plan key share one prompt plan (only the model differs)."""
        s = self.spec
        raw = json.dumps(
            [s.user_id, s.query_id, s.expression_type, s.context, s.seed, s.method, s.method_options]
            + ([s.turns, s.turns_order] if s.turns is not None else [])
            + ([s.evidence_depth] if s.evidence_depth is not None else [])
            + ([s.filler_pools] if s.filler_pools is not None else []),
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(raw.encode()).hexdigest()


def cell_key(spec: RunSpec) -> str:
    """sha256 of the spec's canonical JSON without label (run ids are never part of a spec)."""
    data = spec.model_dump(mode="json", exclude={"label"})
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def load_grid(path: str | Path) -> Grid:
    p = Path(path)
    try:
        with p.open("rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise GridError(f"cannot read grid file {p}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"{p} is not valid TOML: {exc}") from None
    data.setdefault("name", p.stem)
    return parse_grid(data, str(p))


def parse_grid(data: dict, source: str) -> Grid:
    """``data`` (a grid file's TOML, or the command line's axes) as a Grid, checked like the
    settings file: a GridError with one line per problem, each starting with ``source``: a key no
    table has (with the nearest valid one), or a value of the wrong type (its key path, what was
    expected, what was given)."""
    problems = _unknown_keys(data)
    try:
        grid = Grid.model_validate(data)
    except ValidationError as exc:
        problems += _wrong_values(exc)
    except ValueError as exc:
        problems.append(str(exc))
    else:
        if not problems:
            return grid
    raise GridError("\n".join(f"{source}: {line}" for line in problems))


def _unknown_keys(data: dict) -> list[str]:
    """``unknown key 'judgs' at the top level (did you mean 'judges'?) …``, one per misspelt key.
    ``[method_options]`` is free-form (each method reads its own), so its keys are not checked."""
    top = [*Grid.model_fields, "evidence_depth"]
    out = [f"unknown key {unknown_key((k,), top, where='at the top level')}" for k in data if k not in top]
    conc = data.get("concurrency")
    if isinstance(conc, dict):
        known = list(Concurrency.model_fields)
        out += [f"unknown key {unknown_key((k,), known, where='in [concurrency]')}" for k in conc if k not in known]
    models = data.get("models")
    for i, model in enumerate(models if isinstance(models, list) else [], 1):
        if not isinstance(model, dict):
            continue
        table = f"[[models]] #{i}" + (f" ({model['id']})" if isinstance(model.get("id"), str) else "")
        params = model.get("params")
        # Flat tables (id, temperature …) put ModelParams' keys beside the spec's; a params table holds them.
        known = list(ModelSpec.model_fields) + ([] if "params" in model else list(ModelParams.model_fields))
        out += [f"unknown key {unknown_key((k,), known, where=f'in {table}')}" for k in model if k not in known]
        if isinstance(params, dict):
            known = list(ModelParams.model_fields)
            where = f"in {table}'s params"
            out += [f"unknown key {unknown_key((k,), known, where=where)}" for k in params if k not in known]
    return out


def _wrong_values(exc: ValidationError) -> list[str]:
    """One ``key.path: expected …, got …`` line per wrong value. The branches of a union
    (``users``: a list or "*") are one problem: their expectations are joined with "or"."""
    by_path: dict[str, list[ErrorDetails]] = {}
    for error in exc.errors():
        # pydantic names a union's branch in the location ("list[str]", "literal['*']"): not a key.
        loc = [part for part in error["loc"] if isinstance(part, int) or part.isidentifier()]
        by_path.setdefault(join_path(loc), []).append(error)
    out = []
    for path, errors in by_path.items():
        said = [describe(e) for e in errors]
        if len(said) > 1 and all(", got " in s for s in said):
            given = said[0].rsplit(", got ", 1)[1]
            wanted = [s.rsplit(", got ", 1)[0] for s in said]
            wanted = wanted[:1] + [w.removeprefix("expected ") for w in wanted[1:]]
            said = [" or ".join(wanted) + f", got {given}"]
        out += [f"{path}: {s}" if path else s for s in said[:1]]
    return out


def _normalise(names: Iterable[str], resolve: Callable[[str], str], what: str) -> list[str]:
    out = []
    for n in names:
        try:
            out.append(resolve(n))
        except (KeyError, ValueError) as exc:
            raise GridError(f"unknown {what} {n!r}: {exc}") from None
    if not out:
        raise GridError(f"the grid has no {what}s")
    return list(dict.fromkeys(out))


def method_name(name: str) -> str:
    from core.methods import method_info

    return method_info(name).name


def context_name(name: str) -> str:
    from core.history.configs import config_named

    return config_named(name).name


def with_temperature(model: ModelSpec, temperature: float | None, *, override: bool = False) -> ModelSpec:
    """``model`` sampling at ``temperature``; a temperature of its own wins unless ``override``."""
    if temperature is None or (model.params.temperature is not None and not override):
        return model
    return model.model_copy(update={"params": model.params.model_copy(update={"temperature": temperature})})


def _context_turns(contexts: list[str], turns: list[int]) -> list[tuple[str, int | None]]:
    """(context, inter turns) pairs: the turns axis applies to prefeval-turns only."""
    out: list[tuple[str, int | None]] = []
    for ctx in contexts:
        if ctx == "prefeval-turns":
            out += [(ctx, n) for n in (turns or [0])]
        else:
            out.append((ctx, None))
    return out


def expand(
    grid: Grid,
    *,
    all_users: Callable[[], list[str]],
    queries_of: Callable[[str], list[tuple[str, str]]],
) -> list[Cell]:
    """Every cell of the grid, in a stable order, without duplicates.

    ``queries_of(user_id)`` gives that user's (query id, kind) pairs; ``all_users()`` the user ids
    for ``users = "*"``. A listed query id (or pattern, ``*-restraint``) a user does not have is
    skipped for that user; a grid that expands to nothing is an error.
    """
    methods = _normalise(grid.methods, method_name, "method")
    contexts = _normalise(grid.contexts, context_name, "context")
    users = all_users() if grid.users == "*" else list(grid.users)
    if not users:
        raise GridError("the grid has no users (import some, or list them under users = [...])")
    label = grid.name or "batch"
    models = [with_temperature(m, grid.temperature) for m in grid.models]
    depths: list[float | None] = list(grid.evidence_depths) or [None]
    cells: dict[str, Cell] = {}
    for user in users:
        queries = queries_of(user)
        if grid.queries != "*":
            queries = [q for q in queries if any(_id_matches(q[0], w) for w in grid.queries)]
        if grid.query_kinds:
            queries = [q for q in queries if q[1] in grid.query_kinds]
        for qid, _kind in queries:
            for expr in grid.expression_types:
                for (ctx, turns), depth, method, seed, model, repeat in itertools.product(
                    _context_turns(contexts, grid.turns), depths, methods, grid.seeds, models, range(grid.repeats)
                ):
                    spec = RunSpec(
                        user_id=user,
                        query_id=qid,
                        expression_type=expr,
                        context=ctx,
                        seed=seed,
                        turns=turns,
                        turns_order=grid.turns_order,
                        evidence_depth=depth,
                        filler_pools=grid.filler_pools,
                        method=method,
                        method_options=dict(grid.method_options),
                        models=[model],
                        judges=list(grid.judges),
                        label=label,
                        repeat=repeat,
                    )
                    key = cell_key(spec)
                    cells.setdefault(key, Cell(key, spec))
    if not cells:
        raise GridError("the grid expands to no cells (check users, queries and query_kinds)")
    return list(cells.values())


def _id_matches(query_id: str, wanted: str) -> bool:
    """A listed query id, or a shell-style pattern when it holds one of ``*?[`` (an id that holds
    one still matches itself)."""
    return query_id == wanted or (any(c in wanted for c in "*?[") and fnmatchcase(query_id, wanted))
