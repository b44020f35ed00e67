"""OpenAI Evals (hosted API) ``{item, sample}`` JSON Lines: test cases with pre-generated answers
(reference: ../shared/reference/formats/openai_formats/FORMAT.md §2).

* One answer per line with a ``sample``: ``sample.output_text``, model ``sample.model``. A line
  without ``sample`` (a case the platform was to answer itself) is skipped and counted in a note.
* The question is the first of ``item.question``, ``item.input``, ``item.query``, ``item.prompt``,
  ``item.text`` that is a string (an ``input`` message list: its last user message); the placeholder
  query's reference answer is ``item.ideal`` / ``item.answer`` / ``item.reference``; ``item.preference``
  (a string) becomes the placeholder's preference. The file does not say what the model was sent,
  so no messages are stored.
* Linking: ``item.user_id`` + ``item.query_id`` name stored ids; otherwise a placeholder user
  ``openai-evals-<item.id>`` (the line number when the item has no id) with query ``q``.
* Scores live on the platform (output items), not in this file: nothing is recorded.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import first_record, object_lines
from core.results.model import ImportedAnswer, ResultsImport
from core.results.placeholders import placeholder_user, slug

NAME = "openai-evals"
QUESTION_KEYS = ("question", "input", "query", "prompt", "text")
REFERENCE_KEYS = ("ideal", "answer", "reference")


def detect(path: Path) -> bool:
    try:
        if path.is_dir() or path.suffix.lower() != ".jsonl":
            return False
        rec = first_record(path)
        return isinstance(rec, dict) and isinstance(rec.get("item"), dict) and set(rec) <= {"item", "sample"}
    except OSError:
        return False


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the openai-evals results format reads one .jsonl file, not a folder")
    raw = read_text(path, max_bytes)
    sha = hashlib.sha256(raw.encode()).hexdigest()
    src = path.name
    result = ResultsImport(format=NAME)
    skipped = 0
    for n, label, rec in object_lines(raw, src):
        if not isinstance(rec.get("item"), dict):
            raise FormatError(src, "expected an object with an `item` object", record=label, path="item")
        if rec.get("sample") is None:
            skipped += 1
            continue
        if not isinstance(rec["sample"], dict):
            raise FormatError(src, "expected an object", record=label, path="sample")
        result.answers.append(_answer(src, sha, n - 1, label, rec["item"], rec["sample"]))
    if skipped:
        result.notes.append(f"{src}: skipped {skipped} item{'s' * (skipped != 1)} without a sample (no answer)")
    return result


def _question(item: dict) -> str:
    for key in QUESTION_KEYS:
        value: Any = item.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list):  # an input message list: the last user turn
            users = [m.get("content") for m in value if isinstance(m, dict) and m.get("role") == "user"]
            if users and isinstance(users[-1], str):
                return users[-1]
    return ""


def _answer(src: str, sha: str, index: int, label: str, item: dict, sample: dict) -> ImportedAnswer:
    text = sample.get("output_text")
    if not isinstance(text, str):
        raise FormatError(src, "missing or not a string", record=label, path="sample.output_text")
    model = str(sample["model"]) if isinstance(sample.get("model"), str) and sample["model"] else "unknown"
    question = _question(item)
    item_id = str(item["id"]) if isinstance(item.get("id"), str | int) else f"line-{index + 1}"
    if isinstance(item.get("user_id"), str) and isinstance(item.get("query_id"), str):
        uid, qid = item["user_id"], item["query_id"]
    else:
        uid, qid = slug(f"openai-evals-{item_id}"), "q"
    reference = next((item[k] for k in REFERENCE_KEYS if isinstance(item.get(k), str)), None)
    preference = item.get("preference") if isinstance(item.get("preference"), str) else None
    return ImportedAnswer(
        format=NAME,
        source_file=src,
        source_sha256=sha,
        record=index,
        record_label=label,
        user_id=uid,
        query_id=qid,
        fallback=placeholder_user(
            NAME,
            uid,
            qid,
            item_id,
            question,
            source_file=src,
            preference=preference,
            reference_answer=reference,
            meta={"item_id": item_id},
        ),
        fallback_query_id=qid,
        query_text=question,
        model=model,
        method="imported",
        context="imported",
        answer=text,
        prompt_notes=[
            f"OpenAI Evals sample of item {item_id} imported from {src}, {label}; prefscope did not send it.",
            "The file does not say what the model was sent (only the item).",
        ],
        meta={"item": item, **({"model_missing": True} if model == "unknown" else {})},
    )
