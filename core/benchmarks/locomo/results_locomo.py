"""LoCoMo's own prediction files, as ``task_eval/evaluate_qa.py`` writes them (snap-research/LoCoMo
@ 3eb6f2c; reference notes: ``formats/locomo_mem0/FORMAT.md`` §A): a JSON list, one object per
conversation, ``{"sample_id", "qa": [qa record, …]}``, where each qa record is the benchmark's own
(``question``, ``answer`` or ``adversarial_answer``, ``evidence``, ``category``) plus, per model key,

* ``<key>_prediction`` — the model's answer (one imported run per question and key);
* ``<key>_f1`` — LoCoMo's per-question score, rounded to 3 decimals: a recorded judgment
  ``locomo``/``f1`` of ``recorded:locomo-eval``;
* ``<key>_recall`` (RAG runs) — evidence recall: recorded ``locomo``/``recall``;
* ``<key>_prediction_context`` (RAG runs) — the retrieved ids, kept in the run's meta.

The key is the ``--model`` value, or ``<model>_<rag mode>_top_<k>`` for RAG runs; it is the
imported model name as it is (two runs of one model, full context and RAG, stay two models), and a
RAG key also sets the context (``locomo-rag-<mode>``) and ``method_options`` ``{rag_mode, top_k}``.

Keyed as the official code keys items: conversation ``sample_id`` and the position in ``qa``
(there is no per-question id). Each answer names the user and query the LoCoMo importer makes from
them (``locomo-<sample_id>``, ``locomo-<sample_id>-qa<NNN>``) and carries a placeholder user with
the same ids (every question of its conversation, gold as the importer sets it: category 5 ->
"Not mentioned in the conversation"), for storage to use when the dataset is not imported; since
the ids are the importer's, importing the dataset later replaces the placeholder and the runs
(which survive a user's re-import) point at the real questions.

``<out>_stats.json`` (``evaluation_stats.analyze_aggr_acc``) holds only sums per category: it is
not an answers file (importing it says so); found beside the predictions file, its per-category
sums are checked against the recorded ``_f1`` values and the result is an import note.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from core.benchmarks.locomo.format import ADVERSARIAL_CATEGORY, CATEGORY_NAMES, UNANSWERABLE
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import head_text, load_json
from core.model import UserBundle
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport

NAME = "locomo"
SUFFIX = "_prediction"
#: The judge name recorded ``_f1`` / ``_recall`` values are stored under (``recorded:locomo-eval``).
RECORDED_JUDGE = "locomo-eval"
_RAG_KEY = re.compile(r"^(?P<model>.+)_(?P<mode>dialog|observation|summary)_top_(?P<k>\d+)$")
_STATS_KEYS = ("category_counts", "cum_accuracy_by_category")


def user_id(sample_id: str) -> str:
    """The LoCoMo importer's user id for a sample (speaker a's view)."""
    return f"locomo-{sample_id}"


def query_id(sample_id: str, index: int) -> str:
    """The LoCoMo importer's query id for the ``index``-th qa record of a sample."""
    return f"{user_id(sample_id)}-qa{index:03d}"


def model_keys(record: dict) -> list[str]:
    """The model keys of one qa record, in the record's key order."""
    return [k[: -len(SUFFIX)] for k in record if k.endswith(SUFFIX) and len(k) > len(SUFFIX)]


def detect(path: Path) -> bool:
    """A ``.json`` whose head has a ``sample_id``, a ``qa`` list and a ``…_prediction`` key."""
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    head = head_text(path, 256 * 1024)
    return (
        head.lstrip().startswith("[")
        and re.search(r'"sample_id"\s*:', head) is not None
        and re.search(r'"qa"\s*:', head) is not None
        and re.search(r'_prediction"\s*:', head) is not None
    )


def is_stats(data: object) -> bool:
    return (
        isinstance(data, dict)
        and bool(data)
        and all(isinstance(v, dict) and all(k in v for k in _STATS_KEYS) for v in data.values())
    )


def gold(record: dict) -> str | None:
    """The gold answer as the importer stores it (category 5 without ``answer``: the "not mentioned" text)."""
    answer = record.get("answer")
    if answer is None and record.get("category") == ADVERSARIAL_CATEGORY:
        return UNANSWERABLE
    return None if answer is None else str(answer)


def placeholder(sample_id: str, qa: list, source: str) -> UserBundle:
    """A user with the importer's ids and every question of the conversation, no sessions."""
    queries = []
    for k, rec in enumerate(qa):
        meta: dict = {"category": rec.get("category"), "placeholder": True}
        if "adversarial_answer" in rec:
            meta["adversarial_answer"] = rec["adversarial_answer"]
        if rec.get("evidence") is not None:
            meta["evidence_raw"] = rec["evidence"]
        queries.append(
            {
                "id": query_id(sample_id, k),
                "kind": "open",
                "text": str(rec.get("question") or f"(question {k} of {sample_id})"),
                "answer": gold(rec),
                "meta": meta,
            }
        )
    return UserBundle.model_validate(
        {
            "user": {
                "id": user_id(sample_id),
                "name": f"LoCoMo {sample_id} (from results)",
                "source": "locomo",
                "meta": {"sample_id": sample_id, "from_results": source, "placeholder": True},
            },
            "queries": queries,
        }
    )


def _score(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the locomo results format reads one evaluate_qa.py output file, not a folder")
    src = path.name
    sha = hashlib.sha256(read_text(path, max_bytes).encode()).hexdigest()
    data = load_json(path, max_bytes)
    if is_stats(data):
        raise FormatError(src, "this is LoCoMo's _stats.json (sums per category, no answers): import the qa file")
    if not isinstance(data, list):
        raise FormatError(src, f"expected a JSON list of conversations, got {type(data).__name__}")
    result = ResultsImport(format=NAME)
    n = 0
    sums: dict[str, dict[str, list[float]]] = {}
    for c, conv in enumerate(data):
        label = f"record {c}"
        if not isinstance(conv, dict):
            raise FormatError(src, f"expected an object, got {type(conv).__name__}", record=label)
        sample = conv.get("sample_id")
        if not isinstance(sample, (str, int)) or str(sample) == "":
            raise FormatError(src, "required field is missing or empty", record=label, path="sample_id")
        sample_id = str(sample)
        qa = conv.get("qa")
        if not isinstance(qa, list):
            raise FormatError(src, "expected a list", record=label, path="qa")
        for k, rec in enumerate(qa):
            if not isinstance(rec, dict):
                raise FormatError(src, f"expected an object, got {type(rec).__name__}", record=label, path=f"qa[{k}]")
        fallback = placeholder(sample_id, qa, src)
        for k, rec in enumerate(qa):
            category = rec.get("category")
            for key in model_keys(rec):
                where = f"qa[{k}].{key}{SUFFIX}"
                prediction = rec[f"{key}{SUFFIX}"]
                if not isinstance(prediction, (str, int, float)) or isinstance(prediction, bool):
                    raise FormatError(
                        src, f"expected a string, got {type(prediction).__name__}", record=label, path=where
                    )
                recorded = _recorded(rec, key, category)
                for r in recorded:
                    if r.dimension == "f1" and r.score is not None:
                        sums.setdefault(key, {}).setdefault(str(category), []).append(r.score)
                rag = _RAG_KEY.match(key)
                meta: dict = {"sample_id": sample_id, "qa_index": k, "locomo_model_key": key}
                if f"{key}{SUFFIX}_context" in rec:
                    meta["prediction_context"] = rec[f"{key}{SUFFIX}_context"]
                result.answers.append(
                    ImportedAnswer(
                        format=NAME,
                        source_file=src,
                        source_sha256=sha,
                        record=n,
                        record_label=f"{label}, qa[{k}], {key}",
                        user_id=user_id(sample_id),
                        query_id=query_id(sample_id, k),
                        fallback=fallback,
                        fallback_query_id=query_id(sample_id, k),
                        query_text=str(rec.get("question") or ""),
                        model=key,
                        method="locomo-qa",
                        method_options={"rag_mode": rag["mode"], "top_k": int(rag["k"])} if rag else {},
                        context=f"locomo-rag-{rag['mode']}" if rag else "full",
                        answer=str(prediction),
                        prompt_notes=[
                            f"LoCoMo prediction of {key} imported from {src}, {label} (sample {sample_id}), qa[{k}]; "
                            "prefscope did not send it.",
                            "The file does not give the prompt; LoCoMo's evaluate_qa.py builds it as the locomo-qa "
                            "method does (batch size and token budget unknown).",
                        ],
                        recorded=recorded,
                        meta=meta,
                    )
                )
                n += 1
    result.notes += _stats_notes(path, sums, max_bytes)
    return result


def _recorded(rec: dict, key: str, category: object) -> list[RecordedScore]:
    out = []
    name = CATEGORY_NAMES.get(category) if isinstance(category, int) else None
    for suffix, dimension in (("_f1", "f1"), ("_recall", "recall")):
        if f"{key}{suffix}" not in rec:
            continue
        value = rec[f"{key}{suffix}"]
        out.append(
            RecordedScore(
                kind="locomo",
                dimension=dimension,
                score=_score(value),
                scale_min=0.0,
                scale_max=1.0,
                judge=RECORDED_JUDGE,
                raw=json.dumps(value),
                rationale=f"{key}{suffix} as recorded (LoCoMo rounds to 3 decimals)",
                meta={"category": category, "category_name": name, "locomo_key": f"{key}{suffix}"},
            )
        )
    return out


def _stats_notes(path: Path, sums: dict[str, dict[str, list[float]]], max_bytes: int) -> list[str]:
    """Compare ``<out>_stats.json`` beside the file with the recorded per-question scores."""
    stats_path = path.with_name(f"{path.stem}_stats.json")
    if not stats_path.is_file():
        return []
    try:
        stats = load_json(stats_path, max_bytes)
    except FormatError as exc:
        return [f"{stats_path.name}: not read ({exc})"]
    if not is_stats(stats) or not isinstance(stats, dict):
        return [f"{stats_path.name}: not LoCoMo's stats layout, not read"]
    notes = []
    for key, entry in stats.items():
        counts, cums = entry["category_counts"], entry["cum_accuracy_by_category"]
        ours = sums.get(key, {})
        off = [
            cat
            for cat in counts
            if counts[cat] != len(ours.get(cat, [])) or abs(float(cums.get(cat, 0)) - sum(ours.get(cat, []))) > 1e-6
        ]
        total = sum(int(v) for v in counts.values())
        overall = sum(float(v) for v in cums.values()) / total if total else 0.0
        state = "agrees with" if not off else f"differs (categories {', '.join(sorted(off))}) from"
        notes.append(
            f"{stats_path.name}: {key}: {total} questions, overall {overall:.3f}; {state} the recorded _f1 of {path.name}"
        )
    return notes
