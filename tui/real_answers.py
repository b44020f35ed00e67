"""The demo's real case: answers a real model gave, recorded by PrefEval (Zhao et al., 2025).

PrefEval publishes Mixtral 8x7B's answers to its travel_restaurant questions (reminder method,
explicit preferences) after 0 to 68 inter turns, in its ``SFT/`` folder. They are read from the
PrefEval folder next to the project (``../shared/datasets/prefeval``, or ``prefeval_dir`` in the
settings), imported once as runs of ``imported:mistral8x7b``, and never copied into the repository
(PrefEval's data is licensed CC BY-NC 4.0).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TOPIC = "travel_restaurant"
#: Where PrefEval's own repository has these files.
SOURCE = "github.com/amazon-science/PrefEval (benchmark_dataset/)"


@dataclass(frozen=True)
class RealAnswers:
    user_id: str
    #: Recorded answers stored for this user (one per inter-turn depth).
    runs: int
    #: Runs added by this call (0 when they were imported before).
    added: int
    source: Path


def prefeval_dir(configured: Path | None = None) -> Path | None:
    """The PrefEval folder holding ``SFT/`` and ``explicit_preference/``: the configured one (and
    only it, when set), else ``../shared/datasets/prefeval`` beside the working directory or beside
    the project."""
    project = Path(__file__).resolve().parents[1]
    candidates = (
        [configured]
        if configured
        else [Path.cwd().parent / "shared/datasets/prefeval", project.parent / "shared/datasets/prefeval"]
    )
    return next((c for c in candidates if (c / "SFT").is_dir() and _benchmark(c).is_file()), None)


def missing_message(configured: Path | None = None) -> str:
    where = configured or "../shared/datasets/prefeval"
    return (
        f"PrefEval's recorded answers are not at {where}: get PrefEval's data from {SOURCE} and put it "
        "there (or set prefeval_dir), or import any results with `prefscope import-results`. "
        "The demo models stay scripted."
    )


def _benchmark(root: Path) -> Path:
    return root / "explicit_preference" / f"{TOPIC}.json"


def load_real_answers(db, root: Path) -> RealAnswers:
    """Import the topic's benchmark users (unless stored) and Mixtral's recorded answers (adds
    nothing the second time); the benchmark user with the most recorded answers."""
    from core.formats import load_path
    from core.results import load_results
    from storage.imported_runs import save_imported
    from storage.users import save_import

    stored = db.execute("SELECT count(*) FROM users WHERE id LIKE ?", [f"prefeval-{TOPIC}-%"]).fetchone()[0]
    if not stored:  # re-importing would replace the users, and with them runs already linked to them
        save_import(db, load_path(_benchmark(root)))
    summary = save_imported(db, load_results(root / "SFT"))
    row = db.execute(
        """
        SELECT r.user_id, count(*) AS n FROM runs r JOIN responses p ON p.run_id = r.id
        WHERE p.provider = 'imported' AND r.user_id LIKE ?
        GROUP BY r.user_id ORDER BY n DESC, r.user_id LIMIT 1
        """,
        [f"prefeval-{TOPIC}-%"],
    ).fetchone()
    if row is None:
        raise LookupError(f"no recorded answer in {root / 'SFT'} matches a {TOPIC} user")
    return RealAnswers(row[0], row[1], len(summary.runs_added), root)
