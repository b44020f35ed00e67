"""mem0's LoCoMo results files (mem0ai/mem0 @ b3ede5b, ``evaluation/``; Apache-2.0; reference notes:
``formats/locomo_mem0/FORMAT.md`` §B). One JSON object keyed by conversation (the index of the
conversation in ``locomo10.json`` as a string for the mem0 technique), each value a list of one
record per question:

* ``evals.py`` output (``evaluation_metrics.json``): ``question``, ``answer``, ``response``,
  ``category`` (a string; category 5 is skipped by mem0), ``bleu_score``, ``f1_score``,
  ``llm_score`` (0/1);
* ``run_experiments.py`` search/answer files: the same without the scores, with ``category`` a
  number and category-5 records (``answer`` "", ``adversarial_answer``) included;
* ``metrics/llm_judge.py`` output: ``gt_answer`` instead of ``answer``, ``llm_label`` instead of
  ``llm_score``.

Each record's ``response`` is one imported run. Recorded scores become judgments of their own
source: ``llm_score`` / ``llm_label`` -> ``mem0``/``accuracy`` of ``recorded:mem0-evals:gpt-4o-mini``
(the model mem0's code calls), ``f1_score`` -> ``mem0-f1``/``f1`` and ``bleu_score`` ->
``mem0-bleu1``/``bleu1`` of ``recorded:mem0-evals``.

The files carry no question ids and no sample ids, ``evals.py`` drops category 5 (so a position is
not LoCoMo's qa index) and its threads append conversations in any order: answers are not linked to
an imported LoCoMo dataset. They land on placeholder users of their own, one per conversation key
and list of questions (``mem0-locomo-<key>-<hash of the questions>``, queries ``…-q<NNN>`` by
position, gold = ``answer``, category 5 -> "Not mentioned in the conversation"), so two systems'
files over the same questions share users and queries and compare per question. The model is the
file's stem (the files name none); the context is the technique the record's fields show
(``mem0`` with ``speaker_1_memories``, ``rag`` with ``context``, else ``imported``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.benchmarks.locomo.format import ADVERSARIAL_CATEGORY, CATEGORY_NAMES, UNANSWERABLE
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import head_text, load_json
from core.model import UserBundle
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport

NAME = "mem0"
#: Judge names recorded scores are stored under (``recorded:<name>``).
RECORDED_JUDGE = "mem0-evals"
RECORDED_LLM_JUDGE = "mem0-evals:gpt-4o-mini"
GOLD_KEYS = ("answer", "gt_answer")
#: Recorded score field -> (judge kind, dimension, recorded judge name).
SCORES = {
    "llm_score": ("mem0", "accuracy", RECORDED_LLM_JUDGE),
    "llm_label": ("mem0", "accuracy", RECORDED_LLM_JUDGE),
    "f1_score": ("mem0-f1", "f1", RECORDED_JUDGE),
    "bleu_score": ("mem0-bleu1", "bleu1", RECORDED_JUDGE),
}
_KNOWN = {"question", "response", "category", *GOLD_KEYS, *SCORES}


def _is_record(rec: object) -> bool:
    return (
        isinstance(rec, dict)
        and "question" in rec
        and "response" in rec
        and "category" in rec
        and any(k in rec for k in GOLD_KEYS)
    )


def detect(path: Path) -> bool:
    """A ``.json`` object whose first value is a list of ``{question, answer|gt_answer, response, category}``."""
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    head = head_text(path, 256 * 1024)
    if not head.lstrip().startswith("{") or '"question"' not in head or '"response"' not in head:
        return False
    try:
        data = load_json(path, 64 * 1024 * 1024)
    except FormatError:
        return False
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return isinstance(first, list) and bool(first) and _is_record(first[0])


def category_of(value: object) -> int | None:
    """``"4"`` or ``4`` -> 4 (evals.py writes strings, the other files numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def gold(rec: dict) -> str:
    answer = next((rec[k] for k in GOLD_KEYS if k in rec), "")
    text = "" if answer is None else str(answer)
    if not text and category_of(rec.get("category")) == ADVERSARIAL_CATEGORY:
        return UNANSWERABLE
    return text


def placeholder(key: str, records: list[dict], source: str) -> tuple[UserBundle, list[str]]:
    """The user of one conversation's records and its query ids (by position)."""
    digest = hashlib.sha256("\n".join(str(r.get("question")) for r in records).encode()).hexdigest()[:8]
    uid = f"mem0-locomo-{key}-{digest}"
    qids = [f"{uid}-q{i:03d}" for i in range(len(records))]
    queries = []
    for qid, rec in zip(qids, records, strict=True):
        category = category_of(rec.get("category"))
        meta: dict = {"category": category, "mem0_conversation": key}
        if rec.get("adversarial_answer"):
            meta["adversarial_answer"] = rec["adversarial_answer"]
        if rec.get("evidence") is not None:
            meta["evidence_raw"] = rec["evidence"]
        queries.append(
            {
                "id": qid,
                "kind": "open",
                "text": str(rec.get("question") or f"(question of conversation {key})"),
                "answer": gold(rec) or None,
                "meta": meta,
            }
        )
    bundle = UserBundle.model_validate(
        {
            "user": {
                "id": uid,
                "name": f"LoCoMo conversation {key} (from mem0 results)",
                "source": "locomo",
                "meta": {"mem0_conversation": key, "from_results": source, "placeholder": True},
            },
            "queries": queries,
        }
    )
    return bundle, qids


def technique(rec: dict) -> str:
    if "speaker_1_memories" in rec:
        return "mem0"
    if "context" in rec:
        return "rag"
    return "imported"


def _recorded(rec: dict, category: int | None) -> list[RecordedScore]:
    name = CATEGORY_NAMES.get(category) if category is not None else None
    out = []
    for field, (kind, dimension, judge) in SCORES.items():
        if field not in rec:
            continue
        value = rec[field]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        out.append(
            RecordedScore(
                kind=kind,
                dimension=dimension,
                score=float(value) if ok else None,
                scale_min=0.0,
                scale_max=1.0,
                judge=judge,
                raw=json.dumps(value),
                rationale=f"{field} as recorded by mem0's evaluation",
                meta={"category": category, "category_name": name, "mem0_field": field},
            )
        )
    return out


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the mem0 results format reads one results file, not a folder")
    src = path.name
    sha = hashlib.sha256(read_text(path, max_bytes).encode()).hexdigest()
    data = load_json(path, max_bytes)
    if not isinstance(data, dict):
        raise FormatError(src, f"expected a JSON object keyed by conversation, got {type(data).__name__}")
    model = path.stem or "unknown"
    result = ResultsImport(format=NAME)
    n = 0
    for key, records in data.items():
        if not isinstance(records, list):
            raise FormatError(src, f"expected a list, got {type(records).__name__}", path=key)
        for i, rec in enumerate(records):
            if not _is_record(rec):
                raise FormatError(
                    src, "expected an object with question, answer (or gt_answer), response and category",
                    record=f"{key}[{i}]",
                )  # fmt: skip
        bundle, qids = placeholder(str(key), records, src)
        for i, rec in enumerate(records):
            category = category_of(rec.get("category"))
            result.answers.append(
                ImportedAnswer(
                    format=NAME,
                    source_file=src,
                    source_sha256=sha,
                    record=n,
                    record_label=f"conversation {key}, record {i}",
                    fallback=bundle,
                    fallback_query_id=qids[i],
                    query_text=str(rec["question"]),
                    model=model,
                    method="unknown",
                    context=technique(rec),
                    answer="" if rec["response"] is None else str(rec["response"]),
                    prompt_notes=[
                        f"mem0 evaluation answer imported from {src}, conversation {key}, record {i}; "
                        "prefscope did not send it.",
                        "The file does not give the prompt (mem0's answer prompt over retrieved memories).",
                    ],
                    recorded=_recorded(rec, category),
                    meta={
                        "mem0_conversation": key,
                        "mem0_position": i,
                        **{k: v for k, v in rec.items() if k not in _KNOWN and not k.startswith("speaker_")},
                    },
                )
            )
            n += 1
    return result
