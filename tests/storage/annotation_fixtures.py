"""A stored demo batch for the annotation / agreement / judge-audit tests, and what they write into
it: batch ``b1`` (maya, open queries, expressions 1 and 2, normal context, three demo models judged by
the heuristic: 16 prompts × 3 models = 48 answers) built once per module by the real `prefscope`
commands, and a private copy of it per test.

The fixtures are imported into a test module (``# noqa: F401``) under their ``fixture_`` names and
requested by their pytest names (``built``, ``path``, ``db``), so a test's arguments shadow no
import. ``db`` comes in two kinds: a storage connection (:func:`fixture_db`, on ``path``) or a file
name for the CLI's ``--db`` (:func:`fixture_db_file`); a module imports one. A module that stores
more than b1 defines its own ``built`` with :func:`building_b1`, and the copies are of that one."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from core.judges.base import Judgment
from storage.analyses import save_human_judgment
from storage.db import open_db
from storage.export import RunFilter
from tests.storage.export_fixtures import judgment
from tests.storage.stored_batches import batch, build_env, new_db, rows

MODELS = ("demo:oracle", "demo:generic", "demo:violator")
B1 = (
    *("--user", "maya", "--query-kind", "open", "--expression", "1", "--expression", "2", "--context", "normal"),
    *(arg for m in MODELS for arg in ("--model", m)),
)
B1_ONLY = RunFilter(labels=["b1"], probes=False)


@contextmanager
def building_b1(tmp_path_factory, name: str) -> Iterator[str]:
    """A new database holding batch b1, in the env of a module-scoped build (more may be stored
    into it inside the ``with``)."""
    root = tmp_path_factory.mktemp(name)
    with build_env(root):
        path = new_db(root)
        batch(path, "b1", *B1)
        yield path


def copy_db(src: str, dst: Path) -> str:
    """A private copy of a database (SQLite's backup API: WAL content included)."""
    source, target = sqlite3.connect(src), sqlite3.connect(dst)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    return str(dst)


@pytest.fixture(scope="module", name="built")
def fixture_built(tmp_path_factory) -> str:
    """Batch b1 alone, built once per module."""
    with building_b1(tmp_path_factory, "b1") as path:
        return path


@pytest.fixture(name="path")
def fixture_path(built, tmp_path) -> str:
    """This test's own copy of the module's database."""
    return copy_db(built, tmp_path / "copy.db")


@pytest.fixture(name="db")
def fixture_db(path):
    """This test's copy, opened through storage (the storage tests' ``db``)."""
    with closing(open_db(path)) as conn:
        yield conn


@pytest.fixture(name="db")
def fixture_db_file(built, tmp_path) -> str:
    """This test's own copy of the module's database, as a file for ``--db`` (the CLI tests' ``db``)."""
    return copy_db(built, tmp_path / "copy.db")


def heuristic_scores(path: str, dimension: str = "alignment") -> dict[str, float]:
    """The heuristic's rubric score of each answer on ``dimension`` (the latest one), read with sqlite3."""
    return {
        rid: score
        for rid, score in rows(
            path,
            "SELECT response_id, score FROM judgments WHERE judge_model = 'demo:heuristic' AND kind = 'rubric' "
            "AND dimension = ? ORDER BY id",
            dimension,
        )
    }


def runs_of(path: str) -> dict[str, str]:
    """Response id -> its run id."""
    return dict(rows(path, "SELECT id, run_id FROM responses"))


def response_ids(path: str, n: int) -> list[tuple[str, str]]:
    """The first ``n`` answers by id, as (response id, run id)."""
    return rows(path, "SELECT id, run_id FROM responses ORDER BY id LIMIT ?", n)


def pair_judgment(judge: str, score: float | None, other: str, shown_first: int) -> Judgment:
    """A judge's pair verdict on (this answer, ``other``) shown in order ``shown_first`` (None: unread)."""
    return judgment(
        "pairwise",
        "preferred",
        score,
        judge=judge,
        parse_ok=score is not None,
        scale=(0.0, 1.0),
        extra={"other_response": other, "shown_first": shown_first},
    )


def save_human_pair_label(db, run_id: str, rid: str, other: str, score: float, annotator: str = "alice") -> None:
    """A human's pair label: ``score`` is the outcome of ``rid`` against ``other`` (1 won, 0.5 tie, 0 lost)."""
    save_human_judgment(
        db,
        run_id,
        rid,
        kind="pairwise",
        dimension="preferred",
        score=score,
        annotator=annotator,
        scale=(0.0, 1.0),
        extra={"other_response": other},
    )


def write_csv(path: Path, lines: list[str]) -> Path:
    """A labels CSV of these lines."""
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
