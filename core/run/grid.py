"""A grid of runs: users × queries × expression types × contexts × methods × seeds × models.

A grid expands into :class:`Cell`\\ s, one RunSpec with ONE model each, so every model's answer
is resumable on its own. A cell's key is the sha256 of its spec without run id and label: the
same case with the same model and parameters always has the same key, whichever grid or batch
name produced it. Method and context names are normalised (``zero_shot`` → ``zero-shot``) before
hashing, so aliases do not make new cells.

Grid file (TOML)::

    name = "fig5"                      # batch name (resume key); default: the file's stem
    users = ["maya", "priya"]          # or "*" (every imported user)
    queries = "*"                      # or a list of query ids
    query_kinds = ["open"]             # optional filter: open, mcq, tf
    expression_types = [1, 2, 3, 4]    # omit for datasets without expression types
    contexts = ["simple", "normal"]
    methods = ["zero-shot", "reminder"]
    seeds = [0]
    turns = [0, 10, 100]               # prefeval-turns context only: PrefEval's inter turns
    filler_pools = ["sample-everyday"] # optional: filler pool ids (default: each user's own source's pool)
    models = ["demo:generic", "demo:retrieval"]   # or [[models]] tables: id, temperature, max_tokens …
    judges = ["rubric"]
    [method_options]                   # passed to every run (e.g. RAG's k)
    k = 5
    [concurrency]
    runs = 8                           # runs in flight at once (global cap)
    per_provider = 4                   # model calls in flight per provider
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from core.providers.base import ModelParams, ModelSpec
from core.run.spec import RunSpec


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
    try:
        return Grid.model_validate(data)
    except ValueError as exc:
        raise GridError(f"{p}: {exc}") from None


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
    for ``users = "*"``. A listed query id a user does not have is skipped for that user; a grid
    that expands to nothing is an error.
    """
    methods = _normalise(grid.methods, method_name, "method")
    contexts = _normalise(grid.contexts, context_name, "context")
    users = all_users() if grid.users == "*" else list(grid.users)
    if not users:
        raise GridError("the grid has no users (import some, or list them under users = [...])")
    label = grid.name or "batch"
    cells: dict[str, Cell] = {}
    for user in users:
        queries = queries_of(user)
        if grid.queries != "*":
            wanted = set(grid.queries)
            queries = [q for q in queries if q[0] in wanted]
        if grid.query_kinds:
            queries = [q for q in queries if q[1] in grid.query_kinds]
        for qid, _kind in queries:
            for expr in grid.expression_types:
                for ctx, turns in _context_turns(contexts, grid.turns):
                    for method in methods:
                        for seed in grid.seeds:
                            for model in grid.models:
                                spec = RunSpec(
                                    user_id=user,
                                    query_id=qid,
                                    expression_type=expr,
                                    context=ctx,
                                    seed=seed,
                                    turns=turns,
                                    turns_order=grid.turns_order,
                                    filler_pools=grid.filler_pools,
                                    method=method,
                                    method_options=dict(grid.method_options),
                                    models=[model],
                                    judges=list(grid.judges),
                                    label=label,
                                )
                                key = cell_key(spec)
                                cells.setdefault(key, Cell(key, spec))
    if not cells:
        raise GridError("the grid expands to no cells (check users, queries and query_kinds)")
    return list(cells.values())
