"""Fixtures for the core tests: a small RealPref-style user, a CUPID-style user, a filler pool.

Golden files live in ``golden/``; regenerate them after an intended prompt change with
``PREFSCOPE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/core/methods`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.formats import load_path

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "methods" / "golden"
UPDATE_GOLDEN = os.environ.get("PREFSCOPE_UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="session")
def mara():
    return load_path(FIXTURES / "mara.json").bundles[0]


@pytest.fixture(scope="session")
def cupid_user():
    return load_path(FIXTURES / "cupid.json").bundles[0]


@pytest.fixture(scope="session")
def filler_pool():
    return load_path(FIXTURES / "filler.json").fillers[0]


def check_golden(name: str, data: dict) -> None:
    """Compare ``data`` with ``golden/<name>.json`` (or write it when PREFSCOPE_UPDATE_GOLDEN=1)."""
    path = GOLDEN / f"{name}.json"
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if UPDATE_GOLDEN or not path.exists():
        if not UPDATE_GOLDEN:
            pytest.fail(f"missing golden file {path.name}: run with PREFSCOPE_UPDATE_GOLDEN=1 to create it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{path.name} differs from the golden file (PREFSCOPE_UPDATE_GOLDEN=1 regenerates it)"
