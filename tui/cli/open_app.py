"""Opening the workbench: `prefscope` (no subcommand) and `prefscope demo`, in annotation mode
(`prefscope annotate QUEUE`), and on a paired comparison (`prefscope compare A B --tui`)."""

from __future__ import annotations

from tui.cli.common import open_workbench
from tui.cli.errors import exit_quietly_on_damage, report_damage

DEMO_USER = "maya"


def _build(obj: dict, *, demo: bool, user: str | None = None):
    from core.settings import DEFAULT_DEMO_MODELS
    from tui.app import make_app
    from tui.cli.common import user_of

    workbench = open_workbench(obj, check_later=True)
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
        from app.recorded_cases import recorded_case

        case = recorded_case()
        if case is not None and case.locate(workbench.settings) is not None:
            app.startup_notes.append(f"f4: answers a real model gave ({case.TITLE})")
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
