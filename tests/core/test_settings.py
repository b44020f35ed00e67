"""Settings precedence (defaults < TOML < PREFSCOPE_* env < flags) and clear errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from core.settings import SettingsError, load_settings
from tui.cli import main


def test_file_then_env_then_flags(tmp_path, monkeypatch):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'models = ["demo:generic"]\ndemo_tokens_per_s = 5\njudge = "demo:heuristic"\n'
        '[endpoints.vllm]\nbase_url = "http://127.0.0.1:8000/v1"\n'
    )
    s = load_settings(cfg)
    assert s.models == ["demo:generic"] and s.demo_tokens_per_s == 5.0
    assert s.endpoints["vllm"].base_url == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "7")
    monkeypatch.setenv("PREFSCOPE_MODELS", '["demo:oracle", "demo:slow"]')
    s = load_settings(cfg)
    assert s.demo_tokens_per_s == 7.0 and s.models == ["demo:oracle", "demo:slow"]
    assert load_settings(cfg, demo_tokens_per_s=9).demo_tokens_per_s == 9.0
    assert str(load_settings(cfg, db=tmp_path / "x.db").db).endswith("x.db")


def test_defaults_without_any_file(monkeypatch):
    monkeypatch.delenv("PREFSCOPE_DB", raising=False)
    s = load_settings()
    assert s.models == ["demo:generic", "demo:retrieval", "demo:oracle"] and s.judge == "demo:heuristic"
    assert s.db.name == "prefscope.db"


def test_bad_inputs_name_their_source(tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text("models = [unclosed\n")
    with pytest.raises(SettingsError, match="bad.toml: invalid TOML"):
        load_settings(bad)
    with pytest.raises(SettingsError, match="no such config file"):
        load_settings(tmp_path / "missing.toml")
    monkeypatch.setenv("PREFSCOPE_MODELS", "demo:oracle")
    with pytest.raises(SettingsError, match="PREFSCOPE_MODELS must be JSON"):
        load_settings()
    monkeypatch.delenv("PREFSCOPE_MODELS")
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "fast")
    with pytest.raises(SettingsError, match="demo_tokens_per_s"):
        load_settings()


def test_cli_reports_a_bad_config_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("models = [unclosed\n")
    result = CliRunner().invoke(main, ["--config", str(bad), "runs"])
    assert result.exit_code == 1 and "invalid TOML" in result.output
