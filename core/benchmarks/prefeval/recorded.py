"""PrefEval's recorded answers, the workbench's f4 case: Mixtral 8x7B's answers to the
travel_restaurant questions (reminder method, explicit preferences) after 0 to 68 inter turns,
published in PrefEval's ``SFT/`` folder (Zhao et al., 2025).

They are read from the PrefEval folder next to the project (``../shared/datasets/prefeval``, or
``prefeval_dir`` in the settings) and never copied into the repository (PrefEval's data is licensed
CC BY-NC 4.0). :mod:`app.recorded_cases` imports them; this module only says where they are.
"""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings

TITLE = "PrefEval's recorded Mixtral 8x7B answers"
#: Stored users of the case: the topic's benchmark users.
USER_PREFIX = "prefeval-travel_restaurant-"
#: Where PrefEval's own repository has these files.
SOURCE = "github.com/amazon-science/PrefEval (benchmark_dataset/)"
_TOPIC_FILE = Path("explicit_preference") / "travel_restaurant.json"


def locate(settings: Settings) -> Path | None:
    """The PrefEval folder holding ``SFT/`` and ``explicit_preference/``: the configured one (and
    only it, when set), else ``../shared/datasets/prefeval`` beside the working directory or beside
    the project."""
    project = Path(__file__).resolve().parents[3]
    configured = settings.prefeval_dir
    candidates = (
        [configured]
        if configured
        else [Path.cwd().parent / "shared/datasets/prefeval", project.parent / "shared/datasets/prefeval"]
    )
    return next((c for c in candidates if (c / "SFT").is_dir() and (c / _TOPIC_FILE).is_file()), None)


def missing_message(settings: Settings) -> str:
    where = settings.prefeval_dir or "../shared/datasets/prefeval"
    return (
        f"PrefEval's recorded answers are not at {where}: get PrefEval's data from {SOURCE} and put it "
        "there (or set prefeval_dir), or import any results with `prefscope import-results`. "
        "The demo models stay scripted."
    )


def users_file(root: Path) -> Path:
    """The benchmark users the answers belong to."""
    return root / _TOPIC_FILE


def filler_file(root: Path) -> Path:
    """PrefEval's inter-turn pool: its users' contexts draw on it (``prefeval-turns``, the profile's)."""
    return root / "filtered_inter_turns.json"


def results_path(root: Path) -> Path:
    """The recorded answers (a results folder :mod:`core.results` reads)."""
    return root / "SFT"


def shown_message(user_id: str, runs: int) -> str:
    """What the workbench says when it shows the case."""
    return (
        f"{runs} answers Mixtral 8x7B really gave {user_id} (PrefEval, reminder method, "
        f"0–68 inter turns; recorded, not generated here — CC BY-NC 4.0). space marks, c compares; "
        "ctrl+r runs the demo models on the same question."
    )
