"""Annotation queues, labels and agreement (the judge lab)."""

from __future__ import annotations

from app.base import Base


class Annotation(Base):
    def annotation_queues(self) -> list:
        """Every stored queue (``storage.annotation_queues.Queue``), by name."""
        from storage.annotation_queues import list_queues

        return list_queues(self.db)

    def create_annotation_queue(self, name: str, spec):
        """Build and store queue ``name`` from a ``QueueSpec`` (``app.labels``); AnnotationError
        when it selects nothing or the name is taken."""
        from storage.annotation_queues import create_queue

        return create_queue(self.db, name, spec)

    def queue_progress(self, name: str) -> dict[str, tuple[int, int]]:
        """Per annotator of queue ``name``: (labelled, skipped)."""
        from storage.annotation_queues import progress

        return progress(self.db, name)

    def import_labels(self, path):
        """Store the labels of an annotation CSV (``storage.annotation_labels.import_labels``);
        ValueError naming the row it refuses."""
        from storage.annotation_labels import import_labels

        return import_labels(self.db, path)

    def annotation_queue(self, name: str):
        """The stored queue (``storage.annotation_queues.Queue``); AnnotationError naming the known ones."""
        from storage.annotation_queues import queue

        return queue(self.db, name)

    def next_annotation_item(self, name: str, annotator: str):
        """The annotator's next unfinished item in their own order (``storage.annotation_queues.Item``),
        None once they have finished the queue."""
        from storage.annotation_queues import next_item

        self.flush()
        return next_item(self.db, name, annotator)

    def annotation_progress(self, name: str, annotator: str) -> tuple[int, int]:
        """(labelled, skipped) of ``annotator`` in queue ``name``."""
        from storage.annotation_queues import progress

        return progress(self.db, name).get(annotator, (0, 0))

    def annotation_order(self, name: str, annotator: str) -> list[int]:
        """The annotator's serving order of the queue's positions (stable across sessions)."""
        from storage.annotation_queues import serving_order

        return serving_order(self.annotation_queue(name), annotator)

    def save_annotation(self, item, annotator: str, label, *, blind: bool) -> None:
        """Store an annotator's label for a queue item and mark it done, in one transaction
        (``storage.annotation_labels.save_label``). AnnotationError for a label it refuses."""
        from storage.annotation_labels import save_label

        self.flush()
        save_label(self.db, item, annotator, label, blind=blind)

    def skip_annotation(self, item, annotator: str) -> None:
        """The annotator passes on the item: marked done, no label (``storage.annotation_labels.skip_item``)."""
        from storage.annotation_labels import skip_item

        self.flush()
        skip_item(self.db, item, annotator)

    def reveal_annotation(self, item):
        """What a blind queue hides about the item (``storage.annotation_queues.Revealed``)."""
        from storage.annotation_queues import reveal

        return reveal(self.db, item)

    def agreement(self, run_ids: list[str] | None = None, *, queue: str | None = None, f=None):
        """Agreement between every rater (annotators and judges) per dimension on these runs' answers
        (all runs when None; or the answers ``f``, an ``app.reports.RunFilter``, selects), or on a
        queue's items (``storage.agreement.agreement``). Safe on any thread."""
        from storage.agreement import agreement
        from storage.export import RunFilter

        self.flush()
        if f is None:
            f = RunFilter(run_ids=list(run_ids or []), probes=False)
        with self.connection() as db:
            return agreement(db, f, queue=queue)
