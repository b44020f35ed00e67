"""Opening the workbench: `prefscope` (no subcommand), `prefscope demo`, `prefscope serve`, and on a
paired comparison (`prefscope compare A B --tui`)."""

from __future__ import annotations

import click

from tui.cli.common import open_workbench
from tui.cli.errors import exit_quietly_on_damage, report_damage

DEMO_USER = "maya"


def _build(obj: dict, *, demo: bool, user: str | None = None):
    from core.settings import DEFAULT_DEMO_MODELS
    from tui.app import make_app
    from tui.cli.common import user_of

    workbench = open_workbench(obj)
    if user is not None:  # a full id or a unique prefix; an unknown one fails here, before the screen opens
        user = user_of(workbench, user).user.id
    # The demo opens on a RealPref-style sample user, so all four expression types are there.
    app = make_app(
        workbench.settings,
        workbench,
        models=list(DEFAULT_DEMO_MODELS) if demo else None,
        initial_user=user or (DEMO_USER if demo else None),
    )
    app.startup_notes = list(workbench.startup_notes)
    if demo:
        from tui.real_answers import prefeval_dir

        if prefeval_dir(workbench.settings.prefeval_dir) is not None:
            app.startup_notes.append("f4: answers a real model gave (PrefEval's recorded Mixtral 8x7B answers)")
    exit_quietly_on_damage(app)
    return app


def open_app(obj: dict, *, demo: bool, user: str | None = None) -> None:
    app = _build(obj, demo=demo, user=user)
    app.run()
    report_damage(app, app.workbench.db_path)


def paired_app(obj: dict, result):
    """The workbench opened on a paired comparison (``storage.compare.PairedResult``): its
    regressions and improvements over the main screen (esc goes back to it)."""
    from tui.screens.paired import PairedScreen

    app = _build(obj, demo=False)
    app.opening_screen = lambda: PairedScreen(app.workbench, result)
    return app


def open_paired(obj: dict, result) -> None:
    """`prefscope compare A B --tui`."""
    app = paired_app(obj, result)
    app.run()
    report_damage(app, app.workbench.db_path)


def annotate_app(obj: dict, queue: str, annotator: str | None):
    """The workbench in annotation mode on ``queue`` (``tui.screens.annotate``): only that screen,
    ``esc`` there quits. ``annotator`` None: the config's ``annotator``, else the screen asks for a
    name. Raises ``storage.annotation_queues.AnnotationError`` for an unknown queue or an unusable
    name, before anything opens."""
    from app.labels import check_annotator
    from tui.app import PrefscopeApp
    from tui.screens.annotate import AnnotateScreen

    wb = open_workbench(obj)
    try:
        wb.annotation_queue(queue)
        who = annotator or wb.settings.annotator
        if who is not None:
            annotator = check_annotator(who)
    except Exception:
        wb.close()
        raise
    app = PrefscopeApp(wb.settings, wb)
    app.main_screen = False
    app.startup_notes = list(wb.startup_notes)
    app.opening_screen = lambda: AnnotateScreen(wb, queue, annotator, exit_on_leave=True)
    exit_quietly_on_damage(app)
    return app


def open_annotate(obj: dict, queue: str, annotator: str | None) -> None:
    """`prefscope annotate QUEUE`: label the queue's items in the workbench (one red line for an
    unknown queue or annotator name)."""
    from app.labels import AnnotationError
    from tui.cli.common import fail

    try:
        app = annotate_app(obj, queue, annotator)
    except AnnotationError as exc:
        from core.text.terminal_safe import terminal_safe

        fail(terminal_safe(str(exc)))
    app.run()
    report_damage(app, app.workbench.db_path)


@click.command()
@click.option("--user", "user", default=None, help="Open on this user (an id or a unique prefix of one).")
@click.pass_obj
def demo(obj: dict, user: str | None) -> None:
    """Open the workbench on the sample users with the offline demo models."""
    open_app(obj, demo=True, user=user or obj.get("user"))


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
