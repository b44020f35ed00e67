"""``core.ports.SummaryCache`` over the summaries table."""

from __future__ import annotations

import datetime as dt

from sqlite_utils import Database


class SqliteSummaryCache:
    def __init__(self, db: Database):
        self.db = db

    def get_summary(self, model: str, text_hash: str) -> str | None:
        row = self.db.execute(
            "SELECT summary FROM summaries WHERE model = ? AND session_hash = ?", [model, text_hash]
        ).fetchone()
        return row[0] if row else None

    def put_summary(self, model: str, text_hash: str, summary: str) -> None:
        with self.db.conn:
            self.db.execute(
                "INSERT OR REPLACE INTO summaries (model, session_hash, summary, created_at) VALUES (?, ?, ?, ?)",
                [model, text_hash, summary, dt.datetime.now(dt.UTC).isoformat(timespec="seconds")],
            )
