"""Config mistakes are named: an unknown key in the TOML file or a PREFSCOPE_* variable with a
did-you-mean, an unknown theme with the key, and a config file that is not there does not stop
`prefscope paths` from saying where everything is."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tui.cli import main
from tui.cli.themes import theme_names


def invoke(tmp_path, *args, config=None):
    prefix = ["--db", str(tmp_path / "p.db")] + (["--config", str(config)] if config else [])
    return CliRunner().invoke(main, [*prefix, *args])


def config_file(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_unknown_key_is_named_with_a_did_you_mean(tmp_path):
    cfg = config_file(tmp_path, 'thme = "nord"\n[endpoints.local]\nbase_url = "http://127.0.0.1:1/v1"\napi_kye = "x"\n')
    result = invoke(tmp_path, "users", config=cfg)
    assert result.exit_code == 1, result.output
    out = " ".join(result.output.split())
    assert "unknown setting 'thme' (did you mean 'theme'?)" in out
    assert "unknown setting 'endpoints.local.api_kye' (did you mean 'api_key_env'?)" in out
    assert str(cfg) in out


def test_an_unknown_prefscope_variable_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFSCOPE_MODLES", '["demo:oracle"]')
    result = invoke(tmp_path, "users")
    assert result.exit_code == 1
    assert "unknown environment variable PREFSCOPE_MODLES (did you mean 'PREFSCOPE_MODELS'?)" in result.output


@pytest.mark.parametrize("source", ["file", "env"])
def test_an_unknown_theme_names_the_key_and_the_closest_theme(tmp_path, monkeypatch, source):
    cfg = None
    if source == "file":
        cfg = config_file(tmp_path, 'theme = "nrod"\n')
    else:
        monkeypatch.setenv("PREFSCOPE_THEME", "nrod")
    result = invoke(tmp_path, "users", config=cfg)
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    assert "setting 'theme': unknown theme 'nrod' (did you mean 'nord'?)" in out and "textual-dark" in out


def test_theme_names_read_from_source_match_textual():
    from textual.theme import BUILTIN_THEMES

    assert theme_names() == frozenset(BUILTIN_THEMES)


def test_paths_works_when_the_named_config_file_is_missing(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere" / "config.toml"
    monkeypatch.setenv("PREFSCOPE_CONFIG", str(missing))
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "p.db"), "paths"])
    assert result.exit_code == 0, result.output
    assert f"config    {missing}  (absent: no such file" in result.output
    assert f"database  {tmp_path / 'p.db'}" in result.output
    other = CliRunner().invoke(main, ["--db", str(tmp_path / "p.db"), "users"])
    assert other.exit_code == 1 and "no such config file" in other.output and "PREFSCOPE_CONFIG" in other.output


def test_paths_shows_an_invalid_config_and_still_the_database(tmp_path):
    cfg = config_file(tmp_path, 'db = "' + str(tmp_path / "mine.db") + '"\nthme = "nord"\n')
    result = CliRunner().invoke(main, ["--config", str(cfg), "paths"])
    assert result.exit_code == 0, result.output
    assert "invalid:" in result.output and "'thme'" in result.output
