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


ROUTER = """
[routers.gpt4o]
routing_strategy = "usage-based-routing-v2"
[[routers.gpt4o.deployments]]
model = "openai/gpt-4o"
api_key_env = "OPENAI_KEY_A"
rpm = 500
[[routers.gpt4o.deployments]]
model = "azure/gpt-4o-eu"
api_base = "https://eu.example.test"
tpm = 200000
"""


def test_routers_load_from_the_file_and_the_env(tmp_path, monkeypatch):
    cfg = tmp_path / "c.toml"
    cfg.write_text(ROUTER)
    router = load_settings(cfg).routers["gpt4o"]
    assert router.routing_strategy == "usage-based-routing-v2"
    assert [(d.model, d.api_key_env, d.rpm, d.tpm) for d in router.deployments] == [
        ("openai/gpt-4o", "OPENAI_KEY_A", 500, None),
        ("azure/gpt-4o-eu", None, None, 200000),
    ]
    monkeypatch.setenv("PREFSCOPE_ROUTERS", '{"r": {"deployments": [{"model": "openai/gpt-4o-mini"}]}}')
    env_router = load_settings().routers["r"]
    assert env_router.routing_strategy == "simple-shuffle" and env_router.deployments[0].api_base is None


def test_a_typo_inside_a_router_is_named_with_a_did_you_mean(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[routers.gpt4o]\nstrategy = "simple-shuffle"\n'
        '[[routers.gpt4o.deployments]]\nmodel = "openai/gpt-4o"\n'
        '[[routers.gpt4o.deployments]]\nmodle = "openai/gpt-4o"\napi_key = "sk-secret-in-the-file"\n'
    )
    with pytest.raises(SettingsError) as err:
        load_settings(cfg)
    msg = str(err.value)
    assert "'routers.gpt4o.strategy' (did you mean 'routing_strategy'?) (known: routing_strategy, deployments)" in msg
    assert "'routers.gpt4o.deployments.1.modle' (did you mean 'model'?)" in msg
    assert "'routers.gpt4o.deployments.1.api_key' (did you mean 'api_key_env'?)" in msg
    assert "sk-secret-in-the-file" not in msg


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[routers.r]\nrouting_strategy = "round-robin"\n[[routers.r.deployments]]\nmodel = "openai/gpt-4o"\n',
         "routers.r.routing_strategy"),
        ("[routers.r]\ndeployments = []\n", "routers.r.deployments"),
        ('[routers."my router"]\n[[routers."my router".deployments]]\nmodel = "openai/gpt-4o"\n', "routers.my router"),
        ('[[routers.r.deployments]]\nmodel = "openai/gpt-4o"\nrpm = 10\n[[routers.r.deployments]]\nmodel = "x/y"\n',
         "set rpm on every deployment or on none"),
    ],
)  # fmt: skip
def test_an_unusable_router_is_refused_naming_the_setting(tmp_path, text, expected):
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    with pytest.raises(SettingsError, match="setting 'routers") as err:
        load_settings(cfg)
    assert expected in str(err.value)


def test_a_choice_of_words_is_set_by_the_plain_word_in_the_environment(monkeypatch):
    monkeypatch.setenv("PREFSCOPE_EMBEDDING_BACKEND", "onnx-int8")
    monkeypatch.setenv("PREFSCOPE_PROMPT_CACHE", "off")
    s = load_settings()
    assert (s.embedding_backend, s.prompt_cache) == ("onnx-int8", "off")
    monkeypatch.setenv("PREFSCOPE_EMBEDDING_BACKEND", "gpu")
    with pytest.raises(ValueError, match="embedding_backend"):
        load_settings()
