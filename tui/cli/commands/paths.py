"""`prefscope paths`: where the database, config file, data directory, embedders and outputs are."""

from __future__ import annotations

from pathlib import Path

import click

from tui.cli.command_info import CommandInfo
from tui.cli.common import root_obj

COMMAND = CommandInfo(
    name="paths",
    help="Print where the database, config, cache and outputs folder live.",
    examples=("prefscope paths", "PREFSCOPE_CONFIG=~/lab.toml prefscope paths"),
    writes=False,
    order=90,
)


@click.command()
@click.pass_context
def paths(ctx: click.Context) -> None:
    """Print where the database, config file, data directory and outputs folder (f8 screenshots,
    exports without a path) are; also when the config file is missing or invalid: that is when you
    need this."""
    from app.outputs import outputs_dir
    from core.history.onnx_export import cache_root
    from core.settings import Settings, SettingsError, config_path, data_dir, load_settings

    obj = root_obj(ctx)
    config = Path(obj.get("config") or config_path()).expanduser()
    try:
        settings, problem = load_settings(obj.get("config"), db=obj.get("db")), None
    except SettingsError as exc:
        settings, problem = Settings(**({"db": obj["db"]} if obj.get("db") else {})), str(exc)
    db = Path(settings.db).expanduser()
    outputs = outputs_dir(settings)
    if not config.exists():
        named = obj.get("config") is not None  # by --config or PREFSCOPE_CONFIG
        state = "absent: no such file; other commands refuse to start until it exists" if named else "absent (defaults)"
    else:
        state = f"invalid: {problem}" if problem else "exists"
    rows = [
        ("database", db, f"{db.stat().st_size / 1e6:.1f} MB" if db.exists() else "not created yet"),
        ("config", config, state),
        ("data dir", data_dir(), "exists" if data_dir().exists() else "not created yet"),
        ("embedders", cache_root(), "exists" if cache_root().exists() else "not created yet (make install fills it)"),
        ("outputs", outputs, f"{'exists' if outputs.exists() else 'not created yet'}; f8 screenshots, exports"),
    ]
    for label, path, state in rows:  # plain lines: paths must stay whole for copy and paste
        click.echo(f"{label:<9} {path}  ({state})")
