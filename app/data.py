"""Users, filler pools and the history search: the data the other services work on."""

from __future__ import annotations

from pathlib import Path

from app.base import Base
from storage.ids import resolve_query_id

__all__ = ["SAMPLE_DATA", "Data", "resolve_query_id"]

SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"


class Data(Base):
    def ensure_sample_data(self) -> list[str]:
        """Import the bundled sample users on first run (empty database). Returns what was imported."""
        from storage.users import has_users, save_import

        if has_users(self.db) or not SAMPLE_DATA.is_dir():
            return []
        from core.formats import load_path

        imported: list[str] = []
        for part in ("users", "filler"):
            folder = SAMPLE_DATA / part
            if folder.is_dir() and any(folder.glob("*.json")):
                summary = save_import(self.db, load_path(folder, format="native"))
                imported += summary.users_added + summary.pools_added
        return imported

    def resolve_user_id(self, given: str) -> str:
        """The full user id for a full id or a unique prefix; LookupError naming the problem."""
        from storage.ids import resolve_user_id

        return resolve_user_id(self.db, given)

    def user_ids(self) -> list[str]:
        from storage.users import user_ids

        return user_ids(self.db)

    def save_import(self, result):
        """Store an import (``core.formats.base.ImportResult``) in one transaction; DuplicateInImport
        or MergeConflict (``app.errors``) leave the database unchanged."""
        from storage.users import save_import

        summary = save_import(self.db, result)
        self.forget_filler_pools()
        return summary

    def forget_filler_pools(self) -> None:
        """Read the filler pools again when next needed (a pool was imported, maybe on another
        connection: the recorded answers of ``app.recorded_cases`` bring their benchmark's)."""
        self._pools = None

    def filler_pool_rows(self):
        """Every stored filler pool's summary row (``storage.fillers.list_filler_pools``)."""
        from storage.fillers import list_filler_pools

        return list_filler_pools(self.db)

    def users(self):
        from storage.users import list_users

        return list_users(self.db)

    def user_choices(self):
        """Every user's id, name and source for a picker (``storage.users.UserChoice``), no counts."""
        from storage.users import user_choices

        return user_choices(self.db)

    def filler_pool_choices(self, user_id: str, context: str = "normal"):
        """Every stored pool (id, name, source, sessions, chars) and the ids ``user_id`` draws from
        when a spec names none (``storage.fillers.PoolChoices``), for a pool picker."""
        from storage.fillers import pool_choices

        return pool_choices(self.db, self.user(user_id).user.source, context)

    def check_filler_pools(self, pool_ids: list[str] | None) -> None:
        """Raise ``core.history.filler.UnknownFillerPool`` (naming the known ones) for an unknown id."""
        from storage.fillers import check_pool_ids

        check_pool_ids(self.db, pool_ids)

    def search_turns(self, text: str, user_id: str | None = None):
        from storage.search import search_turns

        return search_turns(self.db, text, user_id)
