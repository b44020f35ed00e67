"""`prefscope annotate`: build an annotation queue, label it blind in the workbench, see who has
done what, or bring in labels made elsewhere (`--import FILE.csv`).

The queue and its labels are :mod:`app.annotation`'s (``storage.annotation_queues`` /
``storage.annotation_labels``); the labelling screen is ``tui.screens.annotate``.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from tui.cli.command_info import CommandInfo
from tui.cli.common import console, fail, open_workbench
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="annotate",
    help="Label answers blind as a named annotator (queues), or import labels from a CSV.",
    examples=(
        "prefscope annotate lab1 --batch fig5 --sample 30 --annotator ann",
        "prefscope annotate --import labels.csv",
    ),
    writes=True,
    order=220,
)


@click.command("annotate")
@click.argument("queue_name", metavar="QUEUE", required=False)
@click.option(
    "--kind",
    type=click.Choice(["answer", "pair", "relevance", "attribute"]),
    default="answer",
    show_default=True,
    help="What to label: an answer's rubric scores, the better of two answers, a turn's relevance, an attribute.",
)
@click.option("--batch", "batches", multiple=True, help="Build from this batch's answers (repeatable).")
@click.option("--run", "run_ids", multiple=True, help="Build from this run's answers (repeatable; id or prefix).")
@click.option("--where", "where", multiple=True, help="Only answers with FACTOR=VALUE, e.g. model=demo:oracle.")
@click.option("--disagree", is_flag=True, help="Only answers two judges scored --gap or more apart on --metric.")
@click.option("--metric", default="rubric:alignment", show_default=True, help="kind:dimension for --disagree.")
@click.option("--gap", type=float, default=1.0, show_default=True, help="Score gap that counts as disagreement.")
@click.option("--sample", type=click.IntRange(1), default=None, help="Keep a random sample of N items.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample, the order and pair sides.")
@click.option("--not-blind", "not_blind", is_flag=True, help="Show models and judge scores while labelling.")
@click.option("--annotator", default=None, help="Who labels (default: `annotator` in the config, else asked).")
@click.option("--status", is_flag=True, help="Print the queue's size and each annotator's progress; do not open it.")
@click.option("--no-open", "no_open", is_flag=True, help="Build the queue and stop.")
@click.option(
    "--import",
    "import_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Import labels from a CSV: response_id, annotator, dimension, score[, note].",
)
@click.pass_obj
def annotate(
    obj,
    queue_name,
    kind,
    batches,
    run_ids,
    where,
    disagree,
    metric,
    gap,
    sample,
    seed,
    not_blind,
    annotator,
    status,
    no_open,
    import_path,
) -> None:
    """Label answers blind, as one of several named annotators. A new QUEUE is built from the filter
    (--batch, --run, --where, --disagree, --sample), shuffled, and opened in the workbench; an
    existing one resumes where the annotator stopped. Without QUEUE: the queues that exist."""
    from app.labels import AnnotationError, QueueSpec, check_annotator

    wb = open_workbench(obj, sample_data=False)
    if import_path is not None:
        from core.formats import FormatError
        from core.formats.reading import refuse_special

        try:  # before the read: a FIFO blocks it, /dev/zero never ends
            refuse_special(import_path)
        except FormatError as exc:
            fail(str(exc))
        if wb.settings.max_import_mb and import_path.stat().st_size > wb.settings.max_import_mb * 1024 * 1024:
            fail(f"{import_path}: larger than max_import_mb = {wb.settings.max_import_mb} MB")
        try:
            done = wb.import_labels(import_path)
        except ValueError as exc:
            fail(str(exc))
        console.print(safe_text(f"imported {done.stored} labels by {', '.join(done.annotators)} from {import_path}"))
        return
    if not queue_name:
        _list(wb.annotation_queues(), wb)
        return
    building = bool(batches or run_ids or where or disagree)
    try:
        exists = any(q.name == queue_name for q in wb.annotation_queues())
        if exists and building:
            fail(f"queue {queue_name!r} exists already; it was built from {wb.annotation_queue(queue_name).spec}")
        if not exists:
            if not building:
                fail(f"no annotation queue {queue_name!r}; build it with --batch B (or --run, --where, --disagree)")
            spec = QueueSpec(
                kind=kind,
                batches=list(batches),
                run_ids=[_run_id(wb, r) for r in run_ids],
                where=list(where),
                disagree=disagree,
                metric=metric,
                gap=gap,
                sample=sample,
                seed=seed,
                blind=not not_blind,
            )
            q = wb.create_annotation_queue(queue_name, spec)
            console.print(safe_text(f"queue {q.name}: {q.size} {q.kind} items, {'blind' if q.blind else 'not blind'}"))
        if status:
            _list([wb.annotation_queue(queue_name)], wb)
            return
        if no_open:
            return
        who = annotator or wb.settings.annotator
        if who is not None:
            who = check_annotator(who)
    except AnnotationError as exc:
        fail(str(exc))
    wb.close()
    from tui.cli.open_app import open_annotate

    open_annotate(obj, queue_name, who)
    wb = open_workbench(obj, sample_data=False)  # where the session left the queue
    _list([wb.annotation_queue(queue_name)], wb)
    wb.close()


def _run_id(wb, given: str) -> str:
    from tui.cli.common import run_id_of

    return run_id_of(wb, given)


def _list(queues, wb) -> None:
    if not queues:
        console.print("no annotation queues yet; build one with `prefscope annotate NAME --batch B`")
        return
    t = Table("queue", "kind", "items", "blind", "annotator", "labelled", "skipped", "left")
    for q in queues:
        done = wb.queue_progress(q.name) or {"—": (0, 0)}
        for who, (labelled, skipped) in done.items():
            left = "" if who == "—" else str(q.size - labelled - skipped)
            t.add_row(
                safe_text(q.name),
                q.kind,
                str(q.size),
                "yes" if q.blind else "no",
                safe_text(who),
                str(labelled),
                str(skipped),
                left,
            )
    console.print(t)
    console.print(Text("open one: prefscope annotate QUEUE --annotator NAME", style="dim"))
