"""Answers a real model gave, published with a benchmark (the workbench's f4 case): found through
the registry (:attr:`core.benchmark.Benchmark.recorded_case`), imported once as runs.

A case is a module with ``TITLE``, ``USER_PREFIX`` (its stored users' ids start so),
``locate(settings) -> Path | None`` (its data folder, None when absent),
``missing_message(settings)``, ``users_file(root)``, ``results_path(root)`` and
``shown_message(user_id, runs)``, and optionally ``filler_file(root)`` (the filler pool its users'
contexts draw on) (see ``core/benchmarks/prefeval/recorded.py``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from core.benchmark import installed


@dataclass(frozen=True)
class RecordedAnswers:
    user_id: str
    #: Recorded answers stored for this user.
    runs: int
    #: Runs added by this call (0 when they were imported before).
    added: int
    source: Path


def recorded_case() -> ModuleType | None:
    """The first installed benchmark's recorded case (None: no benchmark brings one)."""
    for bench in installed():
        if bench.recorded_case:
            return importlib.import_module(bench.recorded_case)
    return None


def load_recorded_answers(db: Any, case: ModuleType, root: Path) -> RecordedAnswers:
    """Import the case's users (unless stored) and its recorded answers (adds nothing the second
    time); the user with the most recorded answers."""
    from core.formats import load_path
    from core.results import load_results
    from storage.imported_runs import save_imported
    from storage.users import save_import

    like = f"{case.USER_PREFIX}%"
    stored = db.execute("SELECT count(*) FROM users WHERE id LIKE ?", [like]).fetchone()[0]
    if not stored:  # re-importing would replace the users, and with them runs already linked to them
        save_import(db, load_path(case.users_file(root)))
    filler = case.filler_file(root) if hasattr(case, "filler_file") else None
    if filler is not None and filler.is_file():  # the users' default context needs it (ctrl+r after f4)
        pools = load_path(filler)
        known = {pool_id for (pool_id,) in db.execute("SELECT id FROM filler_pools")}
        if any(pool.id not in known for pool in pools.fillers):
            save_import(db, pools)
    results = case.results_path(root)
    summary = save_imported(db, load_results(results))
    row = db.execute(
        """
        SELECT r.user_id, count(*) AS n FROM runs r JOIN responses p ON p.run_id = r.id
        WHERE p.provider = 'imported' AND r.user_id LIKE ?
        GROUP BY r.user_id ORDER BY n DESC, r.user_id LIMIT 1
        """,
        [like],
    ).fetchone()
    if row is None:
        raise LookupError(f"no recorded answer in {results} matches a user of {case.USER_PREFIX}*")
    return RecordedAnswers(row[0], row[1], len(summary.runs_added), root)
