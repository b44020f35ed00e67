"""The database's refusals as the views catch and word them (``storage.db``, ``storage.migrations``,
``storage.rows``, ``storage.users``): a file that is not ours or is damaged, a schema newer than
this prefscope, a stored history that no longer parses, an import that clashes with what is stored."""

from storage.db import DatabaseRefused, damaged_message, is_corruption, refusal_message
from storage.ids import UnknownExtraction
from storage.migrations import MigrationError
from storage.rows import CorruptHistory
from storage.users import DuplicateInImport, MergeConflict

__all__ = [
    "CorruptHistory",
    "DatabaseRefused",
    "DuplicateInImport",
    "MergeConflict",
    "MigrationError",
    "UnknownExtraction",
    "damaged_message",
    "is_corruption",
    "refusal_message",
]
