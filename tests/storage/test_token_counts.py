"""Token counts kept on disk (``storage.token_counts``, plugged into core's counting by the
application): a later process counting the same texts never loads the tokenizer, and a cache file
that cannot be used never stops counting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEXTS = [f"turn {i}: I only eat dinner after midnight, never before" for i in range(50)] + ["", "x"]

COUNT = f"""
import json, sys
from core.history.tokens import count_many, count_tokens, use_count_cache
from storage.token_counts import COUNT_FILE
use_count_cache(COUNT_FILE)
counts = count_many({TEXTS!r})
counts.append(count_tokens({TEXTS[3]!r}))
print(json.dumps({{"counts": counts, "tiktoken": "tiktoken" in sys.modules}}))
"""


def _count(env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", COUNT], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def child_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PREFSCOPE_TOKEN_CACHE"}
    return env | {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}


def test_a_second_process_counts_from_the_store_without_loading_the_tokenizer(child_env, tmp_path):
    first = _count(child_env)
    assert first["tiktoken"] is True
    assert (tmp_path / "cache" / "prefscope" / "token-counts.sqlite").is_file()
    second = _count(child_env)
    assert second["counts"] == first["counts"]
    assert second["tiktoken"] is False


def test_a_new_text_is_still_encoded(child_env):
    _count(child_env)
    code = (
        "import sys; from core.history.tokens import count_tokens, use_count_cache;"
        " from storage.token_counts import COUNT_FILE; use_count_cache(COUNT_FILE);"
        " print(count_tokens('a text never seen'), 'tiktoken' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=child_env, capture_output=True, text=True)
    assert done.stdout.split() == ["4", "True"], done.stderr


@pytest.mark.parametrize("broken", ["garbage", "folder", "off"])
def test_an_unusable_store_never_stops_counting(child_env, tmp_path, broken):
    store = tmp_path / "store.sqlite"
    if broken == "garbage":
        store.write_bytes(b"not a database at all " * 100)
    elif broken == "folder":
        store.mkdir()
    child_env["PREFSCOPE_TOKEN_CACHE"] = "off" if broken == "off" else str(store)
    expected = _count(child_env | {"PREFSCOPE_TOKEN_CACHE": "off"})["counts"]
    assert _count(child_env)["counts"] == expected
    if broken == "garbage":
        assert store.read_bytes().startswith(b"not a database")  # never overwritten
    if broken == "off":
        assert not (tmp_path / "cache" / "prefscope").exists()


PROMPT = """
import sys
sys.argv = ["prefscope", "--db", sys.argv[1], "prompt", "maya", "p1-open"]
from tui.cli import main
try:
    main()
except SystemExit:
    pass
print("@@tiktoken", "tiktoken" in sys.modules, file=sys.stderr)
"""


def test_the_workbench_keeps_counts_so_a_second_prompt_never_loads_the_tokenizer(child_env, tmp_path):
    db = str(tmp_path / "p.db")
    runs = [
        subprocess.run([sys.executable, "-c", PROMPT, db], cwd=REPO, env=child_env, capture_output=True, text=True)
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr[-800:]
    assert runs[0].stdout == runs[1].stdout
    assert "maya" in runs[0].stdout.lower()
    loaded = [r.stderr.strip().splitlines()[-1] for r in runs]
    assert loaded == ["@@tiktoken True", "@@tiktoken False"]
