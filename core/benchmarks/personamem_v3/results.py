"""PersonaMem-v3 ``results.csv`` (``evaluation/run_eval.py`` @ 095fed14; PROTOCOL.md §3): one file
per persona run, one row per query, exactly the columns :data:`COLUMNS`. Detected by that header.

Each row is one imported run answering ``personamem-v3-<user_id>`` / ``<query_id>`` (the ids the
backend-folder importer gives); when that persona is not imported, the answer goes on a
placeholder user of those very ids, holding every query the file names for it (importing the
persona folder later replaces the placeholder, the runs stay linked).

* ``agent_response`` is the answer as written, the runner's 4,096-byte cut included (a cell
  ending in ``…[truncated]`` is marked ``meta["truncated"]`` and in the plan notes);
* ``status`` other than ``ok`` (``error``, ``no_result``, ``failed_writes``, ``failed_quality``) is
  a **failed answer, kept**: stored with status ``error`` and the row's message, so prefscope's
  judges leave it out and reports count it as failed, where the official aggregation scores it 0;
  ``meta["status"]`` / ``meta["error"]`` and a plan note say so;
* every numeric ``metrics_json`` key (booleans as 0/1) is a recorded score of
  ``recorded:personamem-v3``: the slice metrics (``held_out_hit`` …, :data:`judge.DIMENSIONS`) as
  kind ``pmv3-slice`` so ``report`` shows them next to prefscope's own; every other key (``pr_*``
  rubric scores, tokens, cost) as kind ``personamem-v3``, dimension = the key. The file names no
  judge model: the judge is ``personamem-v3`` (the harness), ``personamem-v3:<judge_model>`` when
  the metrics carry a ``judge_model`` string;
* the model is the run folder's name (``<run_dir>/results.csv``), else the file stem; the method
  is ``personamem-v3-run_eval`` (the file does not say which mode ran); ``seq``, ``ts``,
  ``duration_ms`` and the task type go to ``meta``. ``distance_tokens`` is not in the file.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.benchmarks.personamem_v3.format import NAME, is_restraint, user_id
from core.benchmarks.personamem_v3.judge import DIMENSIONS, KIND
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import head_text
from core.model import UserBundle
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport

COLUMNS = (
    "query_id",
    "seq",
    "user_id",
    "task_type",
    "ts",
    "metrics_json",
    "status",
    "duration_ms",
    "error",
    "agent_response",
)
TRUNCATED = "…[truncated]"
RECORDED_JUDGE = "personamem-v3"
METHOD = "personamem-v3-run_eval"
OTHER_KIND = "personamem-v3"


def _header(path: Path) -> list[str]:
    head = head_text(path, 64 * 1024).lstrip("\ufeff").splitlines()[:1]
    return [n.strip() for n in next(csv.reader(head), [])] if head else []


def detect(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".csv":
        return False
    return set(COLUMNS) <= set(_header(path))


def model_of(path: Path) -> str:
    if path.name == "results.csv" and path.parent.name:
        return path.parent.name
    return path.stem or "unknown"


@contextmanager
def _wide_cells(limit: int) -> Iterator[None]:
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, min(limit, 2**31 - 1)))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the personamem-v3 results format reads one results.csv, not a folder")
    src = path.name
    text = read_text(path, max_bytes)
    sha = hashlib.sha256(text.encode()).hexdigest()
    model = model_of(path)
    rows = _rows(src, text, max_bytes)
    placeholders = _placeholders(rows, src)
    result = ResultsImport(format=NAME)
    failed = truncated = 0
    for i, (label, row) in enumerate(rows):
        answer = _answer(src, sha, i, label, row, model, placeholders)
        failed += answer.meta["status"] != "ok"
        truncated += bool(answer.meta.get("truncated"))
        result.answers.append(answer)
    result.notes.append(f"{src}: model {model!r} inferred from the run folder's name (the file names none)")
    if failed or truncated:
        result.notes.append(
            f"{src}: {failed} row(s) with a status other than ok kept as failed answers; "
            f"{truncated} answer(s) cut at 4,096 bytes by the runner"
        )
    return result


def _rows(src: str, text: str, max_bytes: int) -> list[tuple[str, dict[str, str]]]:
    import io

    out: list[tuple[str, dict[str, str]]] = []
    with _wide_cells(max_bytes):
        reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline=""))
        names = [(h or "").strip() for h in reader.fieldnames or []]
        absent = [c for c in COLUMNS if c not in names]
        if absent:
            raise FormatError(src, f"missing column(s) {', '.join(absent)} (run_eval.py writes {', '.join(COLUMNS)})")
        try:
            for raw in reader:
                label = f"line {reader.line_num}"
                row = {(k or "").strip(): (v or "") for k, v in raw.items() if k is not None}
                for col in ("query_id", "user_id"):
                    if not row.get(col, "").strip():
                        raise FormatError(src, "empty cell", record=label, path=col)
                out.append((label, row))
        except csv.Error as exc:
            raise FormatError(src, f"not a readable CSV row ({exc})", record=f"line {reader.line_num}") from exc
    if not out:
        raise FormatError(src, "file has no rows")
    return out


def _placeholders(rows: list[tuple[str, dict[str, str]]], src: str) -> dict[str, UserBundle]:
    """One placeholder user per ``user_id`` with every query the file names for it (file order)."""
    queries: dict[str, dict[str, dict]] = {}
    for _, row in rows:
        uid, qid, task = row["user_id"].strip(), row["query_id"].strip(), row.get("task_type", "").strip()
        queries.setdefault(uid, {}).setdefault(
            qid,
            {
                "id": qid,
                "kind": "open",
                "text": f"(PersonaMem-v3 query {qid}: its persona folder is not imported)",
                "meta": {
                    "query_id": qid,
                    "task_type": task,
                    "question_type": task,
                    "restraint": is_restraint(task, "", "", ""),
                    "placeholder": True,
                },
            },
        )
    return {
        uid: UserBundle.model_validate(
            {
                "user": {
                    "id": user_id(uid),
                    "name": f"persona {uid}",
                    "source": NAME,
                    "meta": {"persona_uid": uid, "placeholder": True, "from": src},
                },
                "queries": list(qs.values()),
            }
        )
        for uid, qs in queries.items()
    }


def _metrics(src: str, label: str, cell: str) -> dict:
    if not cell.strip():
        return {}
    try:
        value = json.loads(cell)
    except ValueError as exc:
        raise FormatError(src, f"invalid JSON ({exc})", record=label, path="metrics_json") from exc
    if not isinstance(value, dict):
        raise FormatError(src, f"expected a JSON object, got {type(value).__name__}", record=label, path="metrics_json")
    return value


def recorded_scores(metrics: dict, status: str) -> list[RecordedScore]:
    judge_model = metrics.get("judge_model")
    judged_by = f"{RECORDED_JUDGE}:{judge_model}" if isinstance(judge_model, str) and judge_model else RECORDED_JUDGE
    out = []
    for key, value in metrics.items():
        if not isinstance(value, (int, float)):
            continue
        slice_metric = key in DIMENSIONS
        out.append(
            RecordedScore(
                kind=KIND if slice_metric else OTHER_KIND,
                dimension=key,
                score=float(value),
                scale_min=0.0 if slice_metric else None,
                scale_max=1.0 if slice_metric else None,
                judge=RECORDED_JUDGE if slice_metric else judged_by,
                raw=json.dumps(value),
                rationale=f"{key} = {value} (recorded by run_eval.py; row status {status})",
                meta={"benchmark": NAME, "status": status},
            )
        )
    return out


def _answer(
    src: str, sha: str, index: int, label: str, row: dict[str, str], model: str, placeholders: dict[str, UserBundle]
) -> ImportedAnswer:
    uid, qid = row["user_id"].strip(), row["query_id"].strip()
    status = row.get("status", "").strip() or "(empty)"
    metrics = _metrics(src, label, row.get("metrics_json", ""))
    answer = row.get("agent_response", "")
    cut = answer.endswith(TRUNCATED)
    notes = [
        f"PersonaMem-v3 run_eval.py answer of {model} imported from {src}, {label}; prefscope did not send it.",
        "The file does not give the prompt or the run mode (llm_longctx, mcp_agent, …).",
    ]
    if status != "ok":
        notes.append(f"status {status!r}: a failed answer, kept (the official aggregation scores it 0)")
    if cut:
        notes.append("agent_response was cut at 4,096 UTF-8 bytes by the runner ('…[truncated]' appended)")
    return ImportedAnswer(
        format=NAME,
        source_file=src,
        source_sha256=sha,
        record=index,
        record_label=label,
        user_id=user_id(uid),
        query_id=qid,
        fallback=placeholders[uid],
        fallback_query_id=qid,
        query_text="",
        model=model,
        method=METHOD,
        context="imported",
        answer=answer,
        error=None if status == "ok" else f"{status}: {row.get('error', '') or 'no message'}",
        prompt_notes=notes,
        recorded=recorded_scores(metrics, status),
        meta={
            "status": status,
            "error": row.get("error", "") or None,
            "truncated": cut,
            "seq": row.get("seq", ""),
            "ts": row.get("ts", ""),
            "duration_ms": row.get("duration_ms", ""),
            "task_type": row.get("task_type", ""),
            "persona_uid": uid,
        },
    )
