"""Generic chat logs: OpenAI-style messages and ShareGPT conversations, JSON Lines or JSON.

One record is one conversation, in any of these shapes (mixed freely, one per JSONL line or as the
items of a JSON array; a JSON file holding a single record or a bare message list also works)::

    {"messages": [{"role": "system"|"user"|"assistant"|"tool", "content": str | [parts]}]}   OpenAI
    [{"role": ..., "content": ...}, ...]                                                     bare list
    {"conversations": [{"from": "human"|"gpt"|"system"|..., "value": str}]}                 ShareGPT
    {"conversation": [{"role": ..., "content": ...}], "conversation_id": ...}               LMSYS-Chat

Mapping: every conversation -> one ``life_event`` session (a chat log says nothing about which
preferences it expresses), all in one UserBundle ``chat-<file stem>``. Session ids come from the
record's ``id`` / ``conversation_id`` when present, else ``<stem>-c<index>``. System / developer and
tool / function messages (and assistant tool calls without text) are dropped with a note: they are
not part of what the user and assistant said. Content given as a list of parts (OpenAI multimodal)
keeps its text parts, joined by blank lines; other parts are dropped with a note. Consecutive
messages of one role stay separate turns. Conversations left empty are skipped with a note.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError

from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, expect_type
from core.model import UserBundle

NAME = "chatlog"
ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "gpt": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "model": "assistant",
}
DROPPED_ROLES = {"system", "developer", "tool", "function", "function_call", "observation", "ipython"}
_LISTS = ("messages", "conversations", "conversation")


def detect(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() not in (".json", ".jsonl"):
        return False
    head = shapes.head_text(path, 64 * 1024)
    if re.search(r'"(messages|conversation)"\s*:', head) and re.search(r'"role"\s*:', head):
        return True
    if re.search(r'"conversations"\s*:', head) and re.search(r'"from"\s*:', head) and re.search(r'"value"\s*:', head):
        return True
    # A bare list of messages (JSONL line or whole file) starts with a message object.
    return bool(re.match(r'\s*\[\s*\{\s*"(role|content)"\s*:', head))


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    source, stem = path.name, path.stem
    records = shapes.load_records(path, max_bytes)
    label, data = records[0]
    if label is None:  # a .json file: one conversation, or an array of them
        if isinstance(data, dict) or (isinstance(data, list) and data and _is_message(data[0])):
            records = [(None, data)]
        else:
            records = [(f"record {i}", r) for i, r in enumerate(expect_type(source, data, list, ""))]
    counts = {"system": 0, "tool": 0, "parts": 0, "empty": 0}
    sessions: list[dict] = []
    seen: dict[str, str] = {}
    for i, (label, rec) in enumerate(records):
        session = _session(source, label, rec, f"{stem}-c{i:04d}", counts)
        if session is None:
            continue
        if session["id"] in seen:
            raise FormatError(
                source,
                f"duplicate conversation id {session['id']!r}, also {seen[session['id']]}",
                record=label,
                path="id",
            )
        seen[session["id"]] = label or "the first record"
        sessions.append(session)
    if not sessions:
        raise FormatError(source, "holds no conversation with user or assistant messages")
    result = ImportResult(format=NAME)
    raw = {"user": {"id": f"chat-{stem}", "name": stem, "source": NAME, "meta": {"file": source}}, "sessions": sessions}
    try:
        result.bundles.append(UserBundle.model_validate(raw))
    except ValidationError as exc:  # a backstop: the shape checks should leave nothing to refuse
        raise from_validation(source, exc) from exc
    for key, text in (
        ("system", "system/developer message(s) dropped"),
        ("tool", "tool/function message(s) or tool calls without text dropped"),
        ("parts", "non-text content part(s) (images, audio, files) dropped"),
        ("empty", "conversation(s) without user or assistant text skipped"),
    ):
        if counts[key]:
            result.notes.append(f"{source}: {counts[key]} {text}")
    return result


def _is_message(item: object) -> bool:
    return isinstance(item, dict) and ("role" in item or "from" in item)


def _session(source: str, record: str | None, rec: object, default_id: str, counts: dict) -> dict | None:
    if isinstance(rec, list):
        messages, where, meta = rec, "", {}
        sid = default_id
    else:
        expect_type(source, rec, (dict, list), "", record)
        assert isinstance(rec, dict)
        key = next((k for k in _LISTS if k in rec), None)
        if key is None:
            raise FormatError(
                source, "expected a 'messages', 'conversations' or 'conversation' list, found none", record=record
            )
        messages = shapes.get(source, rec, key, list, "", record)
        where = key
        own = rec.get("id", rec.get("conversation_id"))
        sid = str(own) if isinstance(own, (str, int)) and not isinstance(own, bool) and str(own).strip() else default_id
        meta = shapes.extras(rec, {key, "id", "conversation_id"})
    turns = []
    for k, msg in enumerate(messages):
        turn = _turn(source, record, f"{where}[{k}]", msg, counts)
        if turn is not None:
            turns.append(turn)
    if not turns:
        counts["empty"] += 1
        return None
    return {"id": sid, "kind": "life_event", "turns": turns, "meta": meta}


def _turn(source: str, record: str | None, where: str, msg: object, counts: dict) -> dict | None:
    expect_type(source, msg, dict, where, record)
    assert isinstance(msg, dict)
    sharegpt = "from" in msg and "role" not in msg
    role_key, content_key = ("from", "value") if sharegpt else ("role", "content")
    role = shapes.text(source, msg, role_key, where, record)
    lowered = role.strip().lower()
    if lowered in DROPPED_ROLES:
        counts["system" if lowered in ("system", "developer") else "tool"] += 1
        return None
    if lowered not in ROLES:
        known = "'human', 'gpt', 'system'" if sharegpt else "'user', 'assistant', 'system', 'tool'"
        raise FormatError(source, f"expected one of {known}, got {role!r}", record=record, path=f"{where}.{role_key}")
    if content_key not in msg:
        raise FormatError(source, "required field is missing", record=record, path=f"{where}.{content_key}")
    content = msg[content_key]
    if content is None and ROLES[lowered] == "assistant" and (msg.get("tool_calls") or msg.get("function_call")):
        counts["tool"] += 1
        return None
    text = _content(source, record, f"{where}.{content_key}", content, counts)
    return {"role": ROLES[lowered], "content": text}


def _content(source: str, record: str | None, where: str, content: object, counts: dict) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for p, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
                continue
            expect_type(source, part, dict, f"{where}[{p}]", record)
            if part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                counts["parts"] += 1
        return "\n\n".join(texts)
    raise FormatError(
        source, f"expected a string or a list of content parts, got {_kind(content)}", record=record, path=where
    )


def _kind(value: object) -> str:
    return {type(None): "null", bool: "true/false", int: "a number", float: "a number", dict: "an object"}.get(
        type(value), type(value).__name__
    )
