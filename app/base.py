"""What every service shares: the database (the main thread's connection and a fresh one per other
thread), the recorder (the single writer for runs), one provider per provider name, the judges and
the loaded users and filler pools. :class:`app.workbench.Workbench` is built on it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from core.model import FillerPool, UserBundle
from core.plan import Message
from core.providers.base import ModelSpec, Provider
from core.run.engine import Engine, EngineOptions
from core.run.spec import RunEvent
from core.settings import Settings

if TYPE_CHECKING:  # imported where used: the TUI's first paint stays light
    from core.providers.calls import Complete, Completion
    from storage.recorder import RunRecorder


class Base:
    def __init__(
        self,
        settings: Settings,
        db_path: Path | str | None = None,
        *,
        provider_for: Callable[[ModelSpec], Provider] | None = None,
        readonly: bool = False,
        check_later: bool = False,
    ):
        """``provider_for`` replaces the provider registry (tests inject scripted providers).
        ``db_path=":memory:"`` gives a throwaway database (`prefscope prompt --bundle`).
        ``readonly``: for commands that only read; nothing is created or written.
        ``check_later``: a large file's pages are checked on a thread (``storage.page_check``)
        instead of before the open returns; until :meth:`pages_checked`, nothing is written."""
        from core.history.tokens import use_count_cache
        from storage.db import open_db
        from storage.page_check import PageCheck, checked_inline
        from storage.token_counts import COUNT_FILE

        self.settings = settings
        self._provider_for = provider_for
        use_count_cache(COUNT_FILE)
        self.db_path = Path(db_path or settings.db).expanduser()
        self.readonly = readonly
        later = check_later and not readonly and not checked_inline(self.db_path)
        #: The page check still to pass before anything is written (None: checked at open).
        self.page_check: PageCheck | None = PageCheck(self.db_path) if later else None
        self.db = open_db(self.db_path, readonly=readonly, verify=not later)
        if later:
            self.db.execute("PRAGMA query_only = 1")  # lifted by pages_checked()
        self._db_thread = threading.get_ident()
        self._providers: dict[str, Provider] = {}
        self._users: dict[str, UserBundle] = {}
        self._pools: list[FillerPool] | None = None
        self._recorder: RunRecorder | None = None
        self._recorder_lock = threading.Lock()
        self._closed = False
        #: What :meth:`app.workbench.Workbench.open` did (sample data imported, runs marked
        #: interrupted), for the operator.
        self.startup_notes: list[str] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- data ----------------------------------------------------------------------------
    def user(self, user_id: str) -> UserBundle:
        """The user's bundle, loaded once (the one bundle cache). Raises ``storage.users.UnknownUser``."""
        if user_id not in self._users:
            from storage.users import load_user

            self._users[user_id] = load_user(self.db, user_id)
        return self._users[user_id]

    def forget_user(self, user_id: str) -> None:
        """Drop the cached bundle of a user whose stored rows changed (queries added to it)."""
        self._users.pop(user_id, None)

    def filler_pools(self) -> list[FillerPool]:
        if self._pools is None:
            from storage.fillers import load_filler_pools

            self._pools = load_filler_pools(self.db)
        return self._pools

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """The database on this thread: the workbench's own on its thread, else a fresh one
        (a connection belongs to the thread that opened it)."""
        if threading.get_ident() == self._db_thread:
            yield self.db
            return
        from storage.db import open_db

        db = open_db(self.db_path, readonly=self.readonly, verify=False)  # checked when the workbench opened
        try:
            yield db
        finally:
            db.close()

    # -- models --------------------------------------------------------------------------
    def provider(self, spec: ModelSpec) -> Provider:
        """One provider per provider name (they are stateless per call; SDK clients are per loop)."""
        if self._provider_for is not None:
            return self._provider_for(spec)
        provider = self._providers.get(spec.provider)
        if provider is None:
            from core.providers import get_provider

            cache = None
            if spec.provider == "replay":  # served from this database's response cache
                from storage.runs import SqliteResponseCache

                cache = SqliteResponseCache(self.db)
            provider = self._providers[spec.provider] = get_provider(spec, self.settings, response_cache=cache)
        return provider

    def complete(self, *, per_provider: int = 4) -> Complete:
        """One whole model call through these providers (judges, extraction, the LLM relevance
        decider), within the model's deadline; any failure becomes a failed Completion, never a crash."""
        from core.providers.calls import Completion, collect

        limits: dict[str, asyncio.Semaphore] = {}

        async def complete(spec: ModelSpec, messages: list[Message]) -> Completion:
            try:
                limit = limits.setdefault(spec.provider, asyncio.Semaphore(per_provider))
                async with limit, asyncio.timeout(spec.params.timeout_s):
                    return await collect(self.provider(spec), spec, messages)
            except TimeoutError:
                return Completion("", error=f"no answer from {spec.id} within {spec.params.timeout_s:g} s")
            except Exception as exc:  # unknown provider, SDK bug: recorded on the judgment, not raised
                return Completion("", error=f"{type(exc).__name__}: {exc}")

        return complete

    def judges(self, spec_or_names) -> list:
        """The judges a RunSpec (or a list of judge names) asks for. Raises ``core.judges.JudgeSpecError``."""
        from core.judges import judges_for

        return list(judges_for(spec_or_names, self.settings))

    # -- the single writer -----------------------------------------------------------------
    def recorder(self) -> RunRecorder:
        with self._recorder_lock:  # made once, also when first asked from a worker thread
            if self._recorder is None:
                from storage.recorder import RunRecorder

                deadline = self.settings.write_deadline_s
                self._recorder = RunRecorder(self.db_path, write_deadline_s=deadline, after=self.page_check)
            return self._recorder

    def pages_checked(self) -> bool:
        """On the workbench's thread, once :attr:`page_check` has passed: writes are allowed again
        (True; False when there was no check pending). Raises ``storage.db.DatabaseRefused`` when
        the check found damage."""
        if self.page_check is None:
            return False
        self.page_check.wait()
        self.db.execute("PRAGMA query_only = 0")
        self.page_check = None
        return True

    def write_problem(self, answers: int = 1) -> str | None:
        """Why this database cannot store ``answers`` answers now, in one line naming it (a
        read-only file or folder, a full disk or too little room left on it, a lock held past
        ``write_deadline_s``); ``None`` when the disk has room and a probe write through the
        recorder's writer commits (``storage.writable``). Asked by every command that spends model
        calls before its first call, so no answer is paid for and then lost. Safe on any thread."""
        import sqlite3

        from storage.db import DatabaseRefused
        from storage.writable import NotWritable, check_writable, reason

        if self.readonly:
            return f"cannot write to {self.db_path}: it was opened read-only"
        try:
            check_writable(self.recorder().writer, self.db_path, answers=answers)
        except (NotWritable, DatabaseRefused) as exc:  # refused: a failed page check
            return str(exc)
        except (sqlite3.Error, OSError) as exc:  # the writer's own connection could not open
            return f"cannot write to {self.db_path}: {reason(exc)}"
        return None

    def engine(self, emit: Callable[[RunEvent], None], judges=(), *, options: EngineOptions | None = None) -> Engine:
        options = options or EngineOptions(max_answer_chars=self.settings.max_answer_chars)
        return Engine(self.provider, emit, judges=judges, options=options)

    def flush(self) -> None:
        """Wait until every recorded event is in the database (before reading a run back)."""
        if self._recorder is not None:
            self._recorder.flush()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._recorder is not None:
            self._recorder.close()
        self.db.close()
