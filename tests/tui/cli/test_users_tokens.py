"""`prefscope users` and `prefscope show` give a user the same number of tokens (one definition:
``core.history.tokens.session_tokens`` summed over the user's sessions)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_runner import cli
from tests.conftest import dataset

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data"


def _shown_tokens(db: str, user: str) -> int:
    head = " ".join(cli(db, "show", user).split("\n")[:3])
    return int(re.search(r"sessions · ([\d,]+)t", head).group(1).replace(",", ""))


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "u.db")
    cli(path, "import", str(SAMPLE))
    return path


def test_users_lists_the_tokens_show_counts(db):
    listed = json.loads(cli(db, "users", "--json"))
    assert listed["tokens_estimated"] is None
    for user in listed["users"]:
        assert user["tokens"] == _shown_tokens(db, user["id"]), user["id"]
    table = cli(db, "users")
    maya = next(line for line in table.splitlines() if line.startswith("maya "))
    assert f"{_shown_tokens(db, 'maya'):,}" in maya.split()
    assert "tokens" in table.splitlines()[1].split()


def test_a_prefeval_user_has_one_token_count(tmp_path):
    path = str(tmp_path / "p.db")
    cli(path, "import", str(dataset("prefeval")))
    user = "prefeval-travel_restaurant-000"
    listed = {u["id"]: u["tokens"] for u in json.loads(cli(path, "users", "--json"))["users"]}
    assert listed[user] == _shown_tokens(path, user)


def test_too_much_text_to_count_shows_the_estimate_labelled(db, monkeypatch):
    monkeypatch.setattr("app.owner_tokens.COUNT_CHARS", 10)
    listed = json.loads(cli(db, "users", "--json"))
    assert "too many to count" in listed["tokens_estimated"]
    table = cli(db, "users")
    assert "~t" in table.splitlines()[1].split() and "~t = characters / 4" in table
