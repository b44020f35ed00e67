"""Benchmark: database size of demo runs at Normal context, each distinct prompt message stored once.

    .venv/bin/python bench/storage_size.py [--method M ...] [--model demo:X ...]

1. Imports ``sample_data/users`` into a temporary database and runs ``prefscope batch --context
   normal --yes`` over every query (105) × the methods × the models, in a child process with demo
   models (no streaming delay). The defaults — zero-shot, reminder, fewshot-cot, np, self-critic
   (three steps) × demo:generic, demo:oracle — give 1,050 runs, 525 distinct prompts.
2. Size: the database after ``VACUUM``, against a baseline made in the same run from the same
   rows — a copy whose ``prompts`` holds every step's full message JSON, as before migration 011
   (read back through ``storage.prompt_messages``), the message table dropped, ``VACUUM`` too.
   Every step read back must hash to the ``prompts.sha256`` stored with it (byte-identical JSON).
3. Speed: the same steps written again into fresh databases, one transaction per run, the new way
   (``insert_prompt_step``) and the old way (the JSON per step); then read back both ways.

Goal: 1,050 demo runs at Normal under 25 MB. Never touches the configured database.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from _common import REPO, figure, line
from sqlite_utils import Database

from core.plan import Message, PromptStep
from storage.db import open_db
from storage.prompt_messages import insert_prompt_step, load_prompt_steps
from storage.transactions import transaction

GOAL_MB = 25.0
METHODS = ["zero-shot", "reminder", "fewshot-cot", "np", "self-critic"]
MODELS = ["demo:generic", "demo:oracle"]
#: ``prompts`` as migration 003 made it: each step's messages as one JSON list.
OLD_PROMPTS = """
CREATE TABLE prompts (
    run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_index INTEGER NOT NULL,
    step       TEXT NOT NULL,
    purpose    TEXT NOT NULL DEFAULT '',
    messages   TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    PRIMARY KEY (run_id, step_index)
)"""


def prefscope(tmp: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "PREFSCOPE_"))}
    env.update(
        PREFSCOPE_CONFIG=str(tmp / "config.toml"),
        PREFSCOPE_DEMO_TOKENS_PER_S="0",
        XDG_CACHE_HOME=str(tmp / "cache"),
        XDG_DATA_HOME=str(tmp / "data"),
        PYTHONPATH=str(REPO),
    )
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", "--db", str(tmp / "runs.db"), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"prefscope {' '.join(args[:2])} failed ({done.returncode}): {done.stderr[-1500:]}")


def old_json(messages: list[Message]) -> str:
    return json.dumps([m.model_dump() for m in messages], ensure_ascii=False)


def vacuumed_size(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.stat().st_size


def table_bytes(path: Path, names: tuple[str, ...]) -> int:
    """Pages of these tables and their indexes (``dbstat``)."""
    conn = sqlite3.connect(path)
    try:
        marks = ",".join("?" * len(names))
        (total,) = conn.execute(
            f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks}) OR name IN "
            f"(SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ({marks}))",
            [*names, *names],
        ).fetchone()
        return total or 0
    finally:
        conn.close()


def as_before_011(now: Path, out: Path, runs: dict[str, list[PromptStep]]) -> None:
    """A copy of ``now`` whose prompts are stored as before migration 011."""
    conn = sqlite3.connect(now)
    conn.execute("VACUUM INTO ?", [str(out)])
    conn.close()
    conn = sqlite3.connect(out)
    rows = conn.execute("SELECT run_id, step_index, sha256 FROM prompts").fetchall()
    conn.executescript("DROP TABLE prompts; DROP TABLE prompt_messages;" + OLD_PROMPTS)
    for run_id, index, sha in rows:
        step = runs[run_id][index]
        conn.execute(
            "INSERT INTO prompts VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_id, index, step.name, step.purpose, old_json(step.messages), step.tokens, sha),
        )
    conn.commit()
    conn.close()


def write_speed(tmp: Path, runs: dict[str, list[PromptStep]], rounds: int = 3) -> tuple[float, float]:
    """Median seconds to write every run's steps into a fresh database, the new way and the old way
    (alternating, so neither always writes to a warmer disk cache)."""
    new_s, old_s = [], []
    for i in range(rounds):
        new_s.append(_write_all(tmp / f"speed-new-{i}.db", runs, old=False))
        old_s.append(_write_all(tmp / f"speed-old-{i}.db", runs, old=True))
    return median(new_s), median(old_s)


def insert_old_way(db: Database, run_id: str, index: int, step: PromptStep) -> None:
    """What the recorder did before 011: the step's messages as one JSON text."""
    messages = old_json(step.messages)
    sha = hashlib.sha256(messages.encode()).hexdigest()
    db.conn.execute(
        "INSERT INTO prompts VALUES (?, ?, ?, ?, ?, ?, ?)",
        (run_id, index, step.name, step.purpose, messages, step.tokens, sha),
    )


def _write_all(path: Path, runs: dict[str, list[PromptStep]], *, old: bool) -> float:
    db = open_db(path)
    if old:
        db.conn.execute("DROP TABLE prompts")
        db.conn.execute(OLD_PROMPTS)
    with transaction(db):
        db.conn.executemany(
            "INSERT INTO runs (id, created_at, user_id, query_id, context, seed, method, spec, plan) "
            "VALUES (?, '', '', '', '', 0, '', '{}', '{}')",
            [(r,) for r in runs],
        )
    t0 = time.perf_counter()
    for run_id, steps in runs.items():
        with transaction(db):  # one run, one transaction: as a writer job
            for i, step in enumerate(steps):
                (insert_old_way if old else insert_prompt_step)(db, run_id, i, step)
    seconds = time.perf_counter() - t0
    db.close()
    return seconds


def read_speed(tmp: Path, runs: dict[str, list[PromptStep]]) -> tuple[float, float]:
    """Seconds to read every run's steps back, the new way and the old way (what load_run did)."""
    new = open_db(tmp / "speed-new-0.db")
    t0 = time.perf_counter()
    for run_id in runs:
        load_prompt_steps(new, run_id)
    new_s = time.perf_counter() - t0
    new.close()
    old = sqlite3.connect(tmp / "speed-old-0.db")
    t0 = time.perf_counter()
    for run_id in runs:
        [
            PromptStep(name=s[0], purpose=s[1], tokens=s[2], messages=[Message(**m) for m in json.loads(s[3])])
            for s in old.execute(
                "SELECT step, purpose, tokens, messages FROM prompts WHERE run_id = ? ORDER BY step_index", [run_id]
            )
        ]
    old_s = time.perf_counter() - t0
    old.close()
    return new_s, old_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--method", action="append", help=f"prompting method (repeatable; default {METHODS})")
    parser.add_argument("--model", action="append", help=f"demo model (repeatable; default {MODELS})")
    args = parser.parse_args()
    methods, models = args.method or METHODS, args.model or MODELS
    print(f"bench/storage_size.py — every sample query × {len(methods)} methods × {len(models)} models, Normal")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "config.toml").write_text("", encoding="utf-8")
        prefscope(tmp, "import", str(REPO / "sample_data" / "users"))
        grid = [a for m in methods for a in ("--method", m)] + [a for m in models for a in ("--model", m)]
        t0 = time.perf_counter()
        prefscope(tmp, "batch", "--context", "normal", *grid, "--runs", "64", "--per-provider", "64", "--yes")
        batch_s = time.perf_counter() - t0

        db = open_db(tmp / "runs.db")
        run_ids = [r for (r,) in db.execute("SELECT id FROM runs ORDER BY created_at, id")]
        runs = {r: load_prompt_steps(db, r) for r in run_ids}
        digests = dict(((r, i), sha) for r, i, sha in db.execute("SELECT run_id, step_index, sha256 FROM prompts"))
        (distinct_prompts,) = db.execute("SELECT count(DISTINCT sha256) FROM prompts").fetchone()
        (messages,) = db.execute("SELECT count(*) FROM prompt_messages").fetchone()
        db.close()
        mismatched = sum(
            hashlib.sha256(old_json(s.messages).encode()).hexdigest() != digests[(r, i)]
            for r, steps in runs.items()
            for i, s in enumerate(steps)
        )
        n, steps = len(runs), sum(len(s) for s in runs.values())

        now_bytes = vacuumed_size(tmp / "runs.db")
        as_before_011(tmp / "runs.db", tmp / "before.db", runs)
        base_bytes = vacuumed_size(tmp / "before.db")
        now_prompt = table_bytes(tmp / "runs.db", ("prompts", "prompt_messages"))
        base_prompt = table_bytes(tmp / "before.db", ("prompts",))
        write_new, write_old = write_speed(tmp, runs)
        read_new, read_old = read_speed(tmp, runs)

    mb = 1e6
    line("runs (batch through the CLI, demo models)", f"{n:,}", f"{batch_s:.1f} s")
    line("prompt steps · distinct steps · distinct messages", f"{steps:,} · {distinct_prompts} · {messages:,}")
    line("steps whose messages read back differently", f"{mismatched}", "must be 0")
    line("database after VACUUM (MB)", f"{now_bytes / mb:.1f}", f"goal < {GOAL_MB:g} for 1,050 runs")
    line("  same rows, prompts as full JSON per step (MB)", f"{base_bytes / mb:.1f}", "baseline, this run")
    line("database bytes per run", f"{now_bytes / n:,.0f}", f"baseline {base_bytes / n:,.0f}")
    line("prompt tables bytes per run", f"{now_prompt / n:,.0f}", f"baseline {base_prompt / n:,.0f}")
    line("write a run's prompt (ms, median of 3)", f"{write_new / n * 1e3:.2f}", f"baseline {write_old / n * 1e3:.2f}")
    line("read a run's prompt back (ms)", f"{read_new / n * 1e3:.2f}", f"baseline {read_old / n * 1e3:.2f}")
    figure(
        f"database MB, {n:,} demo runs at Normal",
        f"< {GOAL_MB:g} MB (1,050 runs)",
        f"{now_bytes / mb:.1f}",
        f"{base_bytes / mb:.1f}",
    )
    figure(
        "database bytes per demo run at Normal",
        f"< {GOAL_MB * mb / 1050:,.0f}",
        f"{now_bytes / n:,.0f}",
        f"{base_bytes / n:,.0f}",
    )
    figure(
        "write a run's prompt (ms)",
        "not slower in a meaningful way",
        f"{write_new / n * 1e3:.2f}",
        f"{write_old / n * 1e3:.2f}",
    )


if __name__ == "__main__":
    main()
