"""Independent renderings of CUPID's official prompts, built only from the reference files in
../shared/reference/cupid (kixlab/CUPID @ a8560cab) with Python's own ``str.format``: the
conformance tests compare prefscope's output with these."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

from tests.conftest import REPO, reference

COMMIT = "a8560cab293ae98be4fe260689d58bddf96b51ef"


def ref_text(*parts: str) -> str:
    return reference("cupid", *parts).read_text(encoding="utf-8")


def ref_yaml(*parts: str) -> dict[str, str]:
    return yaml.safe_load(ref_text(*parts))


def official_string(official: dict) -> str:
    """The official string a template table points at (a YAML key or a whole .txt file)."""
    parts = official["path"].split("/")
    return ref_yaml(*parts)[official["key"]] if "key" in official else ref_text(*parts)


def brace_convention(text: str, names: list[str]) -> str:
    """The official string after ``str.format`` with every placeholder mapped to itself."""
    return text.format(**{n: "{" + n + "}" for n in names})


def official_tables(path: Path) -> list[tuple[str, dict]]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [(k, v) for k, v in data.items() if isinstance(v, dict) and "official" in v]


METHOD_TEMPLATES = REPO / "core" / "benchmarks" / "cupid" / "templates.toml"
JUDGE_TEMPLATES = REPO / "core" / "benchmarks" / "cupid" / "prompts.toml"


def interaction_log(instance: dict) -> str:
    """``utils/formatting.py`` format_interaction_log, rebuilt from the three .txt pieces (their
    ``{i+1}`` is not a valid format field, hence ``replace``)."""
    header = ref_text("utils", "prompts", "interaction_log_session_header.txt")
    message = ref_text("utils", "prompts", "interaction_log_message.txt")
    separator = ref_text("utils", "prompts", "interaction_log_session_separator.txt")
    log = ""
    for i, session in enumerate(instance["prior_interactions"]):
        log += header.replace("{i+1}", str(i + 1))
        for m in session["dialogue"]:
            role = "User" if m["role"] == "user" else "AI Assistant"
            log += message.replace("{role_str}", role).replace("{content}", m["content"])
        log += separator
    return log.strip()
