"""Real `prefscope batch` processes on one database, and what a batch stored (reliability probes)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

from storage.db import open_db
from tests.storage.export_fixtures import REPO

#: maya's 32 queries × expression types 1 and 2 × one demo model = 64 cells.
CELLS = 64


def batch_cmd(db_path, name: str) -> list[str]:
    return [
        sys.executable, "-m", "tui.cli", "--db", str(db_path), "batch", "--name", name, "--user", "maya",
        "--expression", "1", "--expression", "2", "--model", "demo:generic", "--runs", "4", "--yes",
    ]  # fmt: skip


def start_batch(db_path, name: str, **env: str) -> subprocess.Popen:
    full = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200", **env}
    return subprocess.Popen(
        batch_cmd(db_path, name), cwd=REPO, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


def stored_answers(db_path, label: str) -> Counter:
    """cell spec -> final answers stored ok for it (a cell stored twice shows as 2)."""
    db = open_db(db_path)
    try:
        rows = db.execute(
            "SELECT r.spec FROM responses p JOIN runs r ON r.id = p.run_id "
            "WHERE r.label = ? AND p.is_final = 1 AND p.status = 'ok'",
            [label],
        ).fetchall()
    finally:
        db.close()
    return Counter(spec for (spec,) in rows)


def cell_statuses(db_path, batch: str) -> Counter:
    db = open_db(db_path)
    try:
        return Counter(s for (s,) in db.execute("SELECT status FROM batch_cells WHERE batch = ?", [batch]))
    finally:
        db.close()
