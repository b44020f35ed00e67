"""`prefscope serve`: the workbench in a browser through textual-serve, behind a token off loopback."""

from __future__ import annotations

import click

from tui.cli.command_info import CommandInfo

COMMAND = CommandInfo(
    name="serve",
    help="Serve the workbench in a browser (textual-serve).",
    examples=("prefscope serve", "prefscope serve --host 0.0.0.0 --port 8080  # prints the URL with its token"),
    writes=True,
    order=20,
    details="Loopback by default.",
)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--token",
    envvar="PREFSCOPE_SERVE_TOKEN",
    default=None,
    help="Required in the URL (?token=); off loopback one is generated when not given. [env PREFSCOPE_SERVE_TOKEN]",
)
@click.pass_obj
def serve(obj: dict, host: str, port: int, token: str | None) -> None:
    """Serve the workbench in a browser (textual-serve), for demos."""
    import shlex
    import sys

    from tui.serve_guard import GuardedServer, is_loopback, serve_token

    token, generated = serve_token(host, token)
    args = [sys.executable, "-m", "tui.cli"]
    if obj.get("db"):
        args += ["--db", obj["db"]]
    if obj.get("config"):
        args += ["--config", obj["config"]]
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    if token:
        url += f"?token={token}"
    if not is_loopback(host):
        click.echo(
            f"serving on {host}: anyone who can reach this port and has the token drives the workbench "
            "(the API keys in this environment, every stored run)",
            err=True,
        )
    if generated:
        click.echo("no --token given: generated one for this session", err=True)
    click.echo(f"prefscope is served at {url}  (Ctrl+C to stop)", err=True)
    server = GuardedServer(" ".join(shlex.quote(a) for a in args), host=host, port=port, title="prefscope", token=token)
    server.serve()
