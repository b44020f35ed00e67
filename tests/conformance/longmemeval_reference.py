"""LongMemEval's reference files (../shared/reference/longmemeval, MIT) and the reader prompt built
from them as PROTOCOL.md §3 describes run_generation.py building it (full history, json, no cut)."""

from __future__ import annotations

import json

from tests.conftest import reference


def ref_text(path: str) -> str:
    """A reference file, byte for byte (``path`` relative to the reference folder)."""
    return reference("longmemeval", *path.split("/")).read_bytes().decode("utf-8")


def official_reader_prompt(item: dict, *, cot: bool) -> str:
    chunks = []
    for date, session in zip(item["haystack_dates"], item["haystack_sessions"], strict=True):
        turns = [{k: v for k, v in t.items() if k != "has_answer"} for t in session]
        chunks.append((date, turns))
    chunks.sort(key=lambda c: c[0])
    block = ref_text("src/generation/prompts/history_session_block.txt")
    history = "".join(block.format(n, date, "\n" + json.dumps(turns)) for n, (date, turns) in enumerate(chunks, 1))
    name = "answer_history_cot.txt" if cot else "answer_history.txt"
    return ref_text(f"src/generation/prompts/{name}").format(history, item["question_date"], item["question"])
