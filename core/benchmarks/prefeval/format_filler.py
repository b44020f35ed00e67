"""PrefEval's ``filtered_inter_turns.json``: LMSYS-Chat conversations -> one filler pool."""

from __future__ import annotations

from pathlib import Path

from core.benchmarks.prefeval.format_files import NAME
from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError
from core.formats.reading import expect_type
from core.model import FillerPool, Role, Session, Turn

FILLER_ID = "prefeval-inter-turns"
#: The roles a filler conversation keeps; other messages (system, tool) are dropped.
ROLES: tuple[Role, ...] = ("user", "assistant")


def load_inter_turns(path: Path, source: str, max_bytes: int) -> ImportResult:
    return inter_turns(source, expect_type(source, shapes.load_json(path, max_bytes), list, ""))


def inter_turns(source: str, data: list) -> ImportResult:
    result = ImportResult(format=NAME)
    sessions: list[Session] = []
    seen: dict[str, int] = {}
    dropped = merged = skipped = 0
    for j, rec in enumerate(data):
        record = f"record {j}"
        expect_type(source, rec, dict, "", record)
        cid = shapes.text(source, rec, "conversation_id", "", record, non_empty=True)
        if cid in seen:
            raise FormatError(
                source, f"duplicate id {cid!r} (also record {seen[cid]})", record=record, path="conversation_id"
            )
        seen[cid] = j
        messages = shapes.get(source, rec, "conversation", list, "", record)
        turns: list[Turn] = []
        for k, msg in enumerate(messages):
            where = f"conversation[{k}]"
            expect_type(source, msg, dict, where, record)
            given = shapes.text(source, msg, "role", where, record)
            content = shapes.text(source, msg, "content", where, record)
            role = next((r for r in ROLES if r == given), None)
            if role is None:
                dropped += 1
                continue
            if turns and turns[-1].role == role:
                turns[-1] = Turn(role=role, content=f"{turns[-1].content}\n\n{content}")
                merged += 1
                continue
            turns.append(Turn(role=role, content=content))
        if not turns:
            skipped += 1
            continue
        meta = shapes.extras(rec, {"conversation_id", "conversation"})
        sessions.append(Session(id=cid, kind="filler", turns=turns, meta=meta))
    if dropped:
        result.notes.append(f"{source}: dropped {dropped} message(s) whose role is neither user nor assistant")
    if merged:
        result.notes.append(f"{source}: merged {merged} consecutive message(s) from the same role into one turn")
    if skipped:
        result.notes.append(f"{source}: skipped {skipped} conversation(s) with no user/assistant messages")
    if not sessions:
        raise FormatError(source, "holds no conversations with user/assistant messages")
    result.fillers.append(
        FillerPool(id=FILLER_ID, name="PrefEval inter-turn conversations", source=NAME, sessions=sessions)
    )
    return result
