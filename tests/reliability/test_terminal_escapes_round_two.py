"""Escape sequences, bidi overrides and line breaks from data never reach a real terminal (issue 34,
item 4): an export printed on a terminal, an import error naming a hostile file, ids in `users` and
`runs`. Each command runs in a pseudo-terminal, as a researcher would see it, and every byte it
prints is searched; an export redirected to a file stays verbatim."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from core.formats.base import ImportResult
from core.model import UserBundle
from core.text.terminal_safe import one_line, terminal_safe
from storage.db import open_db
from storage.users import save_import
from tests.storage.export_fixtures import Writer, db_with_tiny, tiny_bundle

TITLE = "\x1b]0;PWNED-TITLE\x07"  # would set the window title
CLEAR = "\x1b[2J\x1b[41m"  # would clear the screen and paint it red
RLO = "\u202e"  # right-to-left override: the rest of the line reads backwards
ANSWER = f"fine{TITLE} then{CLEAR} a NUL\x00 and {RLO}gnp.exe"

_OUR_SGR = re.compile(rb"\x1b\[[0-9;]*m")  # our own colours (the red error line)
#: What may not reach the terminal: C0 but \t \n \r, DEL, C1 (as UTF-8) and the bidi controls.
_FORBIDDEN = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def in_a_terminal(*args: str, cwd: Path | None = None) -> bytes:
    """Every byte ``prefscope ARGS`` writes to a pseudo-terminal (stdout and stderr)."""
    master, slave = os.openpty()
    env = {**os.environ, "COLUMNS": "200", "LINES": "50", "TERM": "xterm-256color"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", *args], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=120)
    os.close(master)
    return out


def assert_inert(output: bytes) -> None:
    text = _OUR_SGR.sub(b"", output).replace(b"\r\n", b"\n")
    found = _FORBIDDEN.search(text)
    assert found is None, f"{found.group()!r} reached the terminal: {output!r}"
    assert b"\x1b" not in text, f"an escape sequence reached the terminal: {output!r}"


def test_the_sanitiser_shows_bidi_controls_and_one_line_fields_escaped():
    assert terminal_safe(f"a{RLO}b") == "a\\u202eb"
    assert terminal_safe("a\u2066b\u2069") == "a\\u2066b\\u2069"
    assert terminal_safe("two\nlines\tok") == "two\nlines\tok"
    assert one_line("evil\nfake row\t1") == "evil\\x0afake row\\x091"


def test_an_export_printed_on_a_terminal_is_inert_and_a_redirected_one_verbatim(tmp_path):
    db = db_with_tiny(tmp_path / "x.db")
    w = Writer(db)
    run_id, _ = w.run(text=ANSWER)
    w.close()
    shown = in_a_terminal("--db", str(db), "export", "--runs", run_id)
    assert b"fine" in shown and b"rows" in shown
    assert_inert(shown)
    assert b"\\x1b]0;PWNED-TITLE\\x07" in shown and b"\\u202e" in shown  # shown, not acted on

    redirected = subprocess.run(
        [sys.executable, "-m", "tui.cli", "--db", str(db), "export", "--runs", run_id, "--format", "jsonl"],
        capture_output=True,
        timeout=120,
    )
    assert redirected.returncode == 0, redirected.stderr
    assert json.loads(redirected.stdout.decode().splitlines()[0])["text"] == ANSWER


def test_an_import_error_naming_a_hostile_file_is_one_inert_line(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / f"x{TITLE}{CLEAR}{RLO}.json").write_text("{not json", encoding="utf-8")
    shown = in_a_terminal("--db", str(tmp_path / "i.db"), "import", str(folder), "--format", "native")
    assert b"PWNED-TITLE" in shown  # the file is named
    assert shown.strip(), "the import said nothing"
    assert_inert(shown)


def test_ids_with_line_breaks_and_escapes_print_no_row_of_their_own(tmp_path):
    hostile = f"u1{TITLE}\nFAKE-ROW 9 9 9"
    data = tiny_bundle().model_dump()
    data["user"] |= {"id": hostile, "name": f"Eve{RLO}"}
    db = tmp_path / "h.db"
    conn = open_db(db)
    try:
        save_import(
            conn, ImportResult(format="native", bundles=[UserBundle.model_validate(data)], fillers=[], notes=[])
        )
    finally:
        conn.close()
    w = Writer(db)
    w.run(user=hostile, text="ok")
    w.close()
    for command in ("users", "runs"):
        shown = in_a_terminal("--db", str(db), command)
        assert_inert(shown)
        lines = [line for line in shown.decode("utf-8", "replace").splitlines() if "FAKE-ROW" in line]
        assert len(lines) == 1 and "\\x0a" in lines[0], f"{command}: {shown!r}"
