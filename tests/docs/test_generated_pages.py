"""The docs pages generated from the code (docs/reference/, docs/benchmarks/, mkdocs.yml's Benchmarks
list) are current. The generator documents whatever the code holds, so adding a command, a setting,
a key binding or a migration without regenerating the pages makes the check fail, naming the page."""

from __future__ import annotations

import shutil
import subprocess
import sys

import click
from textual.binding import Binding

from core.settings import Settings
from docs import gen_reference
from docs.reference_gen import cli, keys
from tests.conftest import REPO
from tests.tui.conftest import child_env
from tui.cli.command_info import CommandInfo

STALE = "is stale: run `python docs/gen_reference.py`"


class SettingsWithANewKey(Settings):
    #: A knob added to the settings without regenerating the docs.
    undocumented_knob: int = 7


@click.command("undocumented-cmd")
@click.option("--knob", type=int, default=3, show_default=True, help="Turn the knob.")
def undocumented_cmd(knob: int) -> None:
    """Do what nobody has documented yet."""


UNDOCUMENTED = CommandInfo(
    "undocumented-cmd", "Do a thing.", ("prefscope undocumented-cmd --knob 4",), writes=False, order=999
)


def test_the_pages_do_not_depend_on_which_commands_ran_before():
    """The group gives a command the global --db/--config when it loads it (commands are module
    singletons): a CLI test that ran first must not change the generated page."""
    from tui.cli import COMMANDS, main

    before = gen_reference.pages()
    ctx = click.Context(main)
    for name in COMMANDS:
        main.get_command(ctx, name)
    assert gen_reference.pages() == before


def test_the_committed_pages_are_current():
    assert gen_reference.stale(gen_reference.pages()) == []


def test_the_check_command_passes_on_the_committed_pages(tmp_path):
    done = subprocess.run(
        [sys.executable, "docs/gen_reference.py", "--check"],
        cwd=REPO,
        env=child_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_a_setting_added_without_regenerating_makes_the_configuration_page_stale():
    generated = gen_reference.pages(settings_model=SettingsWithANewKey)

    assert gen_reference.stale(generated) == [f"docs/reference/configuration.md {STALE}"]
    page = generated["docs/reference/configuration.md"]
    assert "### `undocumented_knob`" in page
    assert "A knob added to the settings without regenerating the docs." in page
    assert "`PREFSCOPE_UNDOCUMENTED_KNOB`" in page
    assert "- Default: `7`" in page


def test_a_command_added_without_regenerating_makes_the_cli_page_stale():
    generated = gen_reference.pages(commands=[*cli.commands(), (UNDOCUMENTED, undocumented_cmd)])

    assert gen_reference.stale(generated) == [f"docs/reference/cli.md {STALE}"]
    page = generated["docs/reference/cli.md"]
    assert "## `prefscope undocumented-cmd`" in page
    assert "prefscope undocumented-cmd [OPTIONS]" in page
    assert "| `--knob INTEGER` | Turn the knob. Default: `3`. |" in page
    assert "prefscope undocumented-cmd --knob 4" in page


def test_a_key_binding_added_without_regenerating_makes_the_keys_page_stale(monkeypatch):
    found = keys.holders()
    new = Binding("f9", "nothing", "Nothing", id="undocumented.key", tooltip="A key nobody documented")
    monkeypatch.setattr(keys, "holders", lambda: [*found, keys.Holder("tui.screens.help", "NewScreen", (new,), None)])
    generated = gen_reference.pages()

    assert gen_reference.stale(generated) == [f"docs/reference/keys.md {STALE}"]
    assert "| `f9` | `undocumented.key` | A key nobody documented | yes |" in generated["docs/reference/keys.md"]


def test_a_migration_added_without_regenerating_makes_the_schema_page_stale(monkeypatch):
    import storage.migrations as migrations

    known = migrations.discover()

    def up(db) -> None:
        db.execute("CREATE TABLE undocumented_things (id TEXT PRIMARY KEY,\n note TEXT  -- what nobody wrote down\n)")

    added = migrations.Migration(known[-1].version + 1, "m999_undocumented", up)
    monkeypatch.setattr(migrations, "discover", lambda package=None: [*known, added])
    generated = gen_reference.pages()

    assert gen_reference.stale(generated) == [f"docs/reference/database.md {STALE}"]
    page = generated["docs/reference/database.md"]
    assert "## `undocumented_things`" in page
    assert "Created by `m999_undocumented`." in page
    assert "| `note` | TEXT | what nobody wrote down |" in page


def test_check_exits_1_naming_the_stale_page(monkeypatch, capsys):
    real = gen_reference.pages
    monkeypatch.setattr(gen_reference, "pages", lambda: real(settings_model=SettingsWithANewKey))

    assert gen_reference.main(["--check"]) == 1
    assert capsys.readouterr().err.strip() == f"docs/reference/configuration.md {STALE}"


def test_writing_regenerates_a_stale_page_and_deletes_one_nothing_generates(tmp_path, monkeypatch):
    """On a copy of the docs: a hand edit is overwritten, a retired benchmark's page removed."""
    shutil.copytree(REPO / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("__pycache__", "*.png"))
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    monkeypatch.setattr(gen_reference, "REPO", tmp_path)
    (tmp_path / "docs/reference/exit-codes.md").write_text("# Exit codes\n\nEdited by hand.\n", encoding="utf-8")
    (tmp_path / "docs/benchmarks/retired.md").write_text("# Retired\n", encoding="utf-8")
    generated = gen_reference.pages()

    assert gen_reference.stale(generated) == [
        f"docs/reference/exit-codes.md {STALE}",
        "docs/benchmarks/retired.md is no longer generated: run `python docs/gen_reference.py` (it deletes the page)",
    ]
    said: list[str] = []
    gen_reference.write(generated, said.append)
    assert said == ["wrote docs/reference/exit-codes.md", "deleted docs/benchmarks/retired.md"]
    assert gen_reference.stale(generated) == []
    assert not (tmp_path / "docs/benchmarks/retired.md").exists()


def test_the_benchmark_nav_lists_one_page_per_benchmark():
    nav = gen_reference.with_benchmark_nav(
        "nav:\n  - Benchmarks:\n      # benchmarks:start\n      - old.md\n      # benchmarks:end\n  - Other: x.md\n",
        [("LoCoMo", "benchmarks/locomo.md"), ("Re-Centering", "benchmarks/recentering.md")],
    )
    assert nav == (
        "nav:\n  - Benchmarks:\n      # benchmarks:start\n      - benchmarks/index.md\n"
        '      - "LoCoMo": benchmarks/locomo.md\n      - "Re-Centering": benchmarks/recentering.md\n'
        "      # benchmarks:end\n  - Other: x.md\n"
    )
