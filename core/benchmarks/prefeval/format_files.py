"""PrefEval's release on disk: the format's name, where each form's files live, and which files of a
form folder are strays (not a topic file, or no explicit file for their topic)."""

from __future__ import annotations

import re
from pathlib import Path

#: The format's name, the registry's key (the descriptor's ``formats`` entry loads format.py, which imports it).
NAME = "prefeval"

#: folder (relative to the benchmark root) -> PrefEval form, in the order sessions are built.
FORM_DIRS = {
    "explicit_preference": "explicit",
    "implicit_preference/persona-driven": "persona-driven",
    "implicit_preference/choice-based": "choice-based",
    "mcq_options": "mcq",
}
INTER_TURNS = "filtered_inter_turns.json"
#: A topic file name: PrefEval's topics are lower-case words joined by "_".
VALID_TOPIC = re.compile(r"^[a-z0-9_]+$")


def why_stray(f: Path, form: str, explicit: Path) -> str | None:
    """Why a form file of a folder is not a topic file, or None."""
    if VALID_TOPIC.match(f.stem):
        if form == "explicit" or not explicit.is_dir() or (explicit / f.name).is_file():
            return None
        why = f"stray file: no explicit_preference/{f.name} for topic {f.stem!r}, not imported"
    else:
        why = stray_reason(f.stem)
    twin = next((g for g in sorted(f.parent.glob("*.json")) if g != f and _same_bytes(f, g)), None)
    return why + (f"; looks like a copy of {twin.name}" if twin else "")


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def stray_reason(stem: str) -> str:
    return f"stray file: {stem!r} is not a PrefEval topic name (lower-case letters, digits and _), not imported"
