"""Annotation queues and labels as the views see them (``storage.annotation_queues``,
``storage.annotation_labels``): the records, the refusal, and the annotator-name check."""

from storage.annotation_labels import ANSWER_DIMENSIONS, Label, check_annotator
from storage.annotation_queues import AnnotationError, Item, Queue, QueueSpec, Revealed

__all__ = ["ANSWER_DIMENSIONS", "AnnotationError", "Item", "Label", "Queue", "QueueSpec", "Revealed", "check_annotator"]
