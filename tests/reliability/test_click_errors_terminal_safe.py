"""Usage errors and click's own error lines naming a hostile file, id or option never reach the terminal
raw (issue 34, item 4): ``fail()`` shows its line through ``terminal_safe``, and so does every
``click.ClickException`` (``BadParameter``, ``UsageError`` …) the top-level group lets click print.
Each command runs in a pseudo-terminal and every byte it prints is searched."""

from __future__ import annotations

from tests.reliability.test_terminal_escapes_round_two import CLEAR, RLO, TITLE, assert_inert, in_a_terminal
from tests.storage.export_fixtures import db_with_tiny

HOSTILE = f"x{TITLE}{CLEAR}{RLO}y"


def shown_and_inert(*args: str, cwd=None) -> bytes:
    shown = in_a_terminal(*args, cwd=cwd)
    assert b"PWNED-TITLE" in shown, f"the hostile name is not named: {shown!r}"  # the line names it…
    assert_inert(shown)  # …and prints it as plain characters
    return shown


def test_an_import_of_a_missing_hostile_path_is_inert(tmp_path):
    shown_and_inert("--db", str(tmp_path / "i.db"), "import", str(tmp_path / HOSTILE / "users.json"))


def test_import_results_of_a_hostile_folder_is_inert(tmp_path):
    (tmp_path / HOSTILE).mkdir()
    shown_and_inert("--db", str(tmp_path / "i.db"), "import-results", str(tmp_path / HOSTILE))


def test_show_of_a_hostile_id_is_inert(tmp_path):
    db = db_with_tiny(tmp_path / "x.db")
    shown_and_inert("--db", str(db), "show", HOSTILE)


def test_a_hostile_database_path_and_a_hostile_option_are_inert(tmp_path):
    (tmp_path / HOSTILE).mkdir()  # a folder: click.Path(dir_okay=False) refuses it, naming it
    assert b"Error" in shown_and_inert("--db", str(tmp_path / HOSTILE), "users", "--bad-option")
    assert b"No such option" in shown_and_inert("--db", str(tmp_path / "x.db"), "users", f"--bad{HOSTILE}")


def test_a_hostile_grid_path_is_inert(tmp_path):
    shown_and_inert("--db", str(tmp_path / "b.db"), "batch", "--grid", str(tmp_path / f"{HOSTILE}.toml"))


def test_a_refused_hostile_output_file_is_inert(tmp_path):
    """``export --out`` refusals are ``click.ClickException``s whose message names the file."""
    db = db_with_tiny(tmp_path / "x.db")
    (tmp_path / f"{HOSTILE}.csv").write_text("old", encoding="utf-8")
    shown = shown_and_inert("--db", str(db), "export", "--out", str(tmp_path / f"{HOSTILE}.csv"))
    assert b"already exists" in shown
    shown = shown_and_inert("--db", str(db), "export", "--out", str(tmp_path / HOSTILE / "out.csv"))
    assert b"does not exist" in shown
    (tmp_path / f"{HOSTILE}.db").symlink_to(db)
    shown = shown_and_inert("--db", str(db), "export", "--out", str(tmp_path / f"{HOSTILE}.db"), "--force")
    assert b"refusing" in shown


def test_an_unknown_hostile_method_filter_is_inert(tmp_path):
    db = db_with_tiny(tmp_path / "x.db")
    shown_and_inert("--db", str(db), "report", "--method", HOSTILE)
