"""OpenAI Batch API files produced elsewhere: the input file joined with its output and error files
on ``custom_id`` (reference: ../shared/reference/formats/openai_formats/FORMAT.md §1).

* Give the **folder** that holds the job's files: every top-level ``*.jsonl`` is sorted by its first
  line into requests (``custom_id`` + ``method``/``url``/``body``) and results (``custom_id`` +
  ``response``/``error``); other files are named in a note and left alone. An output or error file
  given alone imports with a note that the prompts are unknown; an input file alone has no answers.
* One answer per result line: ``response.body.choices[0].message.content``, the model from
  ``body.model`` (the resolved snapshot; the request's ``body.model`` for failures), tokens from
  ``body.usage``, ``finish_reason`` kept in the answer's meta. A line with ``error`` set
  (``batch_expired`` …) or an HTTP status >= 400 is a failed request: stored as a failed answer
  (status ``error``) with the message as the file gives it.
* The messages are the request's ``body.messages`` (content parts flattened to their text).
* Linking: a ``custom_id`` of four ``:``-separated parts ``<label>:<user>:<query>:e<epoch>`` names a
  stored user and query (placeholders of those ids until they are imported); any other id gets a
  placeholder user ``openai-batch-<custom_id>``. prefscope's own batch jobs use the run id as
  ``custom_id`` (``core.run.provider_batch``) and store their answers directly: nothing to parse.

The line parsing of ``core.providers.openai_batch`` is not reused: core.results and core.providers
are independent layers (pyproject's import-linter contract), and its parser turns an unreadable
line into a failed result where an import must stop and name the line.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import first_record, object_lines
from core.plan import Message, MessageRole
from core.results.model import ImportedAnswer, ResultsImport
from core.results.placeholders import placeholder_user, slug

NAME = "openai-batch"
_EPOCH = re.compile(r"^e(\d+)$")
_ROLES: dict[str, MessageRole] = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


def split_custom_id(custom_id: str) -> tuple[str, str, str, int] | None:
    """``<label>:<user>:<query>:e<epoch>`` → (label, user, query, epoch); None for any other id."""
    parts = custom_id.split(":")
    if len(parts) != 4 or not all(parts) or not (m := _EPOCH.match(parts[3])):
        return None
    return parts[0], parts[1], parts[2], int(m[1])


def _kind(rec: object) -> str | None:
    if not isinstance(rec, dict) or "custom_id" not in rec:
        return None
    if "body" in rec and ("url" in rec or "method" in rec):
        return "input"
    if "response" in rec or "error" in rec:
        return "result"
    return None


def detect(path: Path) -> bool:
    try:
        if path.is_dir():
            return any(_kind(first_record(p)) == "result" for p in sorted(path.glob("*.jsonl")) if p.is_file())
        return path.suffix.lower() == ".jsonl" and _kind(first_record(path)) is not None
    except OSError:
        return False


@dataclass
class _Request:
    body: dict
    shown: str
    label: str


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    result = ResultsImport(format=NAME)
    if path.is_dir():
        inputs, outputs, other = [], [], []
        for p in sorted(path.glob("*.jsonl")):
            kind = _kind(first_record(p)) if p.is_file() else None
            if kind == "input":
                inputs.append(p)
            elif kind == "result":
                outputs.append(p)
            else:
                other.append(p.name)
                result.notes.append(f"{p.name}: not a Batch input, output or error file; left alone")
        if not outputs:
            # name what was read: a truncated first line makes an output file look like none
            seen = f" (read, not Batch results: {', '.join(other)})" if other else ""
            raise FormatError(
                path.name, f"folder holds no Batch output or error file (lines with custom_id and response){seen}"
            )
    elif _kind(first_record(path)) == "input":
        raise FormatError(
            path.name, "a Batch input file holds requests, not answers: pass the folder holding it and its output file"
        )
    else:
        inputs, outputs = [], [path]
        result.notes.append(
            f"{path.name}: imported without its input file, so the prompts are unknown "
            "(pass the folder holding the input, output and error files to keep them)"
        )
    requests = _requests(inputs, max_bytes)
    answered: set[str] = set()
    for out in outputs:
        _results(out, requests, answered, max_bytes, result)
    missing = sorted(set(requests) - answered)
    if missing:
        result.notes.append(
            f"{len(missing)} request{'s' * (len(missing) != 1)} of the input have no result line "
            f"(first: {missing[0]}); the job may not have ended"
        )
    return result


def _lines(path: Path, max_bytes: int) -> tuple[str, list[tuple[int, str, dict]]]:
    raw = read_text(path, max_bytes)
    out = []
    for n, label, rec in object_lines(raw, path.name):
        if not isinstance(rec.get("custom_id"), str) or not rec["custom_id"]:
            raise FormatError(path.name, "missing or not a string", record=label, path="custom_id")
        out.append((n, label, rec))
    return hashlib.sha256(raw.encode()).hexdigest(), out


def _requests(inputs: list[Path], max_bytes: int) -> dict[str, _Request]:
    out: dict[str, _Request] = {}
    for path in inputs:
        for _, label, rec in _lines(path, max_bytes)[1]:
            cid = rec["custom_id"]
            if cid in out:
                raise FormatError(
                    path.name, f"custom_id {cid!r} repeats {out[cid].shown} {out[cid].label}", record=label
                )
            body = rec.get("body")
            if not isinstance(body, dict):
                raise FormatError(path.name, "missing or not an object", record=label, path="body")
            out[cid] = _Request(body, path.name, label)
    return out


def _results(
    path: Path, requests: dict[str, _Request], answered: set[str], max_bytes: int, result: ResultsImport
) -> None:
    sha, lines = _lines(path, max_bytes)
    for index, (_, label, rec) in enumerate(lines):
        cid = rec["custom_id"]
        if cid in answered:
            raise FormatError(path.name, f"custom_id {cid!r} is answered twice", record=label)
        answered.add(cid)
        result.answers.append(_answer(path.name, sha, index, label, rec, requests.get(cid)))


def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _messages(body: dict) -> tuple[list[Message], list[str]]:
    out, dropped = [], []
    for m in body.get("messages") or []:
        role = _ROLES.get(str(m.get("role"))) if isinstance(m, dict) else None
        if role is None:
            dropped.append(str(m.get("role") if isinstance(m, dict) else m))
            continue
        out.append(Message(role=role, content=_text(m.get("content"))))
    return out, dropped


def _outcome(rec: dict) -> tuple[str, str, str | None, dict]:
    """(status, answer, error, response body) of one result line."""
    error = rec.get("error")
    response = _obj(rec.get("response"))
    body = _obj(response.get("body"))
    if error:
        err = _obj(error)
        code = str(err.get("code") or "")
        status = {"batch_expired": "expired", "batch_cancelled": "cancelled"}.get(code, "error")
        said = ": ".join(x for x in (code, str(err.get("message") or "")) if x)
        return status, "", said or json.dumps(error)[:300], body
    http = response.get("status_code")
    if http != 200:
        message = _obj(body.get("error")).get("message") or json.dumps(body)[:300]
        return "error", "", f"HTTP {http}: {message}", body
    choices = body.get("choices")
    choice = _obj(choices[0]) if isinstance(choices, list) and choices else {}
    message = _obj(choice.get("message"))
    if not message:
        return "error", "", f"a result without an answer: {json.dumps(body)[:300]}", body
    return "ok", _text(message.get("content")), None, body


def _answer(shown: str, sha: str, index: int, label: str, rec: dict, request: _Request | None) -> ImportedAnswer:
    cid = rec["custom_id"]
    status, text, error, body = _outcome(rec)
    sent, dropped = _messages(request.body) if request else ([], [])
    model = str(body.get("model") or (request.body.get("model") if request else None) or "unknown")
    question = next((m.content for m in reversed(sent) if m.role == "user"), "")
    parts = split_custom_id(cid)
    uid, qid = (parts[1], parts[2]) if parts else (slug(f"openai-batch-{cid}"), "q")
    usage = _obj(body.get("usage"))
    choices = body.get("choices") if isinstance(body.get("choices"), list) else []
    finish = _obj(choices[0]).get("finish_reason") if choices else None
    notes = [f"OpenAI Batch request {cid} imported from {shown}, {label}; prefscope did not send it."]
    if request is None:
        notes.append("Its input file was not given: the prompt is unknown.")
    elif dropped:
        notes.append(f"Request messages of roles {', '.join(sorted(set(dropped)))} are not kept.")
    if error:
        notes.append(f"The request failed ({error}); the answer is empty.")
    meta: dict = {"custom_id": cid, "status": status}  # the message itself: ImportedAnswer.error
    if parts:
        meta.update({"label": parts[0], "epoch": parts[3]})
    if usage:
        meta["usage"] = usage
    if finish:
        meta["finish_reason"] = finish
    if request:
        meta["input"] = f"{request.shown} {request.label}"
    return ImportedAnswer(
        format=NAME,
        source_file=shown,
        source_sha256=sha,
        record=index,
        record_label=label,
        user_id=uid,
        query_id=qid,
        fallback=placeholder_user(NAME, uid, qid, cid, question, source_file=shown, meta={"custom_id": cid}),
        fallback_query_id=qid,
        query_text=question,
        model=model,
        method="imported",
        context="imported",
        answer=text,
        error=error,
        input_tokens=_count(usage.get("prompt_tokens")),
        output_tokens=_count(usage.get("completion_tokens")),
        messages=sent or None,
        prompt_notes=notes,
        meta=meta,
    )


def _count(value: object) -> int | None:
    """A token count as the file gives it (a non-negative int), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
