"""Responses may be ``incomplete``: the stream ended without its finish signal (text kept).

The status CHECK of ``responses`` gains one value, edited in place (:mod:`storage.migrations.check_edit`).
"""

from __future__ import annotations

from sqlite_utils import Database

from storage.migrations.check_edit import widen_check

OLD = "CHECK (status IN ('running','ok','error','cancelled','interrupted'))"
NEW = "CHECK (status IN ('running','ok','error','cancelled','interrupted','incomplete'))"


def up(db: Database) -> None:
    widen_check(db, "responses", OLD, NEW)
