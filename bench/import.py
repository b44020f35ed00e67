"""Benchmark: import throughput and the cost of loading one long user from SQLite.

    .venv/bin/python bench/import.py

Prints rows/s for importing ``sample_data/`` (whatever native files are there) and the PrefEval
subset in ``../shared/datasets/prefeval`` (skipped when absent or when its importer is not
built), then the time to load one synthetic ~250K-token user (~400 sessions) from the database
into ``UserBundle`` as a ratio to ``json.loads`` of the same bundle's native JSON text.
Target: ratio <= 3. Runs in a temporary directory; never touches the configured database.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _common import figure  # noqa: E402

from core.formats import FormatError, load_path  # noqa: E402
from core.formats.base import ImportResult  # noqa: E402
from core.formats.native import dump_bundle, parse  # noqa: E402
from core.model import Preference, Query, Session, Turn, User, UserBundle  # noqa: E402
from storage.db import open_db  # noqa: E402
from storage.users import load_user, save_import  # noqa: E402

SAMPLE_DATA = REPO / "sample_data"
PREFEVAL = REPO.parent / "shared" / "datasets" / "prefeval"
TARGET_RATIO = 3.0

WORDS = (
    "the a we I you it to of and in that for on with as was but they this my your what about would "
    "could really think maybe restaurant trip weekend morning coffee book project garden family "
    "friend weather quiet music plan recipe train museum budget deadline meeting running"
).split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 22))]
    return " ".join(words).capitalize() + rng.choice(".?!")


def text(rng: random.Random, n_chars: int) -> str:
    parts, size = [], 0
    while size < n_chars:
        s = sentence(rng)
        parts.append(s)
        size += len(s) + 1
    return " ".join(parts)


def synthetic_user(sessions: int = 400, target_tokens: int = 250_000, seed: int = 7) -> UserBundle:
    """~target_tokens (at ~4 characters a token) over `sessions` sessions of 4-10 turns."""
    rng = random.Random(seed)
    chars_per_session = target_tokens * 4 // sessions
    prefs = [Preference(id=f"p{i}", text=f"Preference {i}", evidence={1: [], 4: []}) for i in range(10)]
    out: list[Session] = []
    day = dt.date(2010, 1, 1)
    for i in range(sessions):
        n_turns = rng.randint(4, 10)
        turns = [
            Turn(
                role="user" if t % 2 == 0 else "assistant",
                content=text(rng, chars_per_session // n_turns * (1 if t % 2 == 0 else 2) * 2 // 3),
            )
            for t in range(n_turns)
        ]
        if i % 40 == 0:
            p = prefs[(i // 40) % len(prefs)]
            kind, expr, pids = "preference", 1, [p.id]
            p.evidence[1].append(f"s{i}")
        else:
            kind, expr, pids = ("filler" if i % 3 else "life_event"), None, []
        out.append(
            Session(
                id=f"s{i}",
                date=day + dt.timedelta(days=7 * i),
                kind=kind,
                expression_type=expr,
                preference_ids=pids,
                turns=turns,
            )
        )
    queries = [Query(id=f"q{i}", kind="open", text=f"Question {i}?", preference_id=f"p{i}") for i in range(10)]
    bundle = UserBundle(user=User(id="bench-250k", name="Bench"), sessions=out, preferences=prefs, queries=queries)
    return UserBundle.model_validate(bundle.model_dump())  # re-validate after the evidence edits


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def interleaved(a, b, rounds: int) -> tuple[float, float]:
    """Best times of two functions measured alternately, so both see the same machine load."""
    times_a, times_b = [], []
    for _ in range(rounds):
        times_a.append(best_of(a, 1))
        times_b.append(best_of(b, 1))
    return min(times_a), min(times_b)


def bench_import(label: str, result: ImportResult, db_path: Path) -> None:
    db = open_db(db_path)
    start = time.perf_counter()
    summary = save_import(db, result)
    elapsed = time.perf_counter() - start
    db.close()
    print(
        f"import {label:<22} {summary.rows:>8} rows in {elapsed * 1000:8.1f} ms  = {summary.rows / elapsed:>10,.0f} rows/s"
        f"  ({len(summary.users_added) + len(summary.users_replaced)} users, {summary.sessions} sessions,"
        f" {summary.turns} turns)"
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="prefscope-bench-") as folder:
        run(Path(folder))


def run(tmp: Path) -> None:
    files = sorted(SAMPLE_DATA.rglob("*.json"))
    if files:
        result = ImportResult(format="native")
        for f in files:
            result.extend(load_path(f, format="native"))
        bench_import("sample_data/", result, tmp / "sample.db")
    else:
        print("import sample_data/          skipped: no native files yet")
    if PREFEVAL.exists():
        try:
            bench_import("PrefEval subset", load_path(PREFEVAL), tmp / "prefeval.db")
        except FormatError as exc:
            print(f"import PrefEval subset      skipped: {exc}")
    else:
        print("import PrefEval subset      skipped: ../shared/datasets/prefeval absent")

    bundle = synthetic_user()
    raw = dump_bundle(bundle)
    chars = sum(len(t.content) for s in bundle.sessions for t in s.turns)
    n_turns = sum(len(s.turns) for s in bundle.sessions)
    bench_import("synthetic 250K user", ImportResult(format="native", bundles=[bundle]), tmp / "long.db")
    db = open_db(tmp / "long.db")  # opened after the import closed (and checkpointed) its connection
    assert load_user(db, bundle.user.id) == bundle, "round trip changed the bundle"
    t_json, t_load = interleaved(lambda: json.loads(raw), lambda: load_user(db, bundle.user.id), rounds=30)
    t_validate = best_of(lambda: parse("bench", json.loads(raw)), 5)
    print(
        f"synthetic user: {len(bundle.sessions)} sessions, {n_turns} turns, {chars:,} chars (~{chars // 4:,} tokens),"
        f" native JSON {len(raw) / 1e6:.2f} MB"
    )
    print(f"json.loads(native JSON)            {t_json * 1000:8.2f} ms")
    print(f"load_user from SQLite              {t_load * 1000:8.2f} ms")
    print(f"(native parse + validation          {t_validate * 1000:8.2f} ms, for reference)")
    ratio = t_load / t_json
    verdict = "OK" if ratio <= TARGET_RATIO else "ABOVE TARGET"
    print(f"ratio load_user / json.loads       {ratio:8.2f}x  (target <= {TARGET_RATIO:.0f}x: {verdict})")
    figure(
        "load a 250K-token user from SQLite ÷ json.loads",
        f"≤ {TARGET_RATIO:.0f}×",
        f"{ratio:.2f}× ({t_load * 1000:.0f} ms)",
        f"json.loads {t_json * 1000:.0f} ms",
    )
    db.close()


if __name__ == "__main__":
    main()
