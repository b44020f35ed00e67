"""PersonaMem-v2 result CSVs, as its ``inference.py`` writes them (``evaluation_results_<mode>
[_multimodal][_<size>]_<timestamp>.csv``; PROTOCOL.md §3.6, §4): every input column, then per size
``model_response_mcq_<s>``, ``predicted_answer_mcq_<s>``, ``is_correct_mcq_<s>``,
``model_response_openended_<s>``, and after the judge pass ``is_correct_openended_<s>_narrow`` /
``judge_responses_<s>_narrow`` (a score such as ``0.75`` from the later judge, ``True``/``False``
from the earlier one).

Each row and size gives up to two answers, matched to the stored questions by the row key the
importer computed from the same cells (:func:`rows.row_key`) and the size: the MCQ reply
(``<key>-mcq``; answer format ``mcq-personamem-v2-recorded``: ``prefscope judge --judge choice`` runs
the official extraction again and keeps the file's verdict when it finds the recorded letter — that
run's option order is unknown, see :func:`answers.score_recorded`) and the open-ended reply (``<key>-open``). Recorded verdicts
become :class:`RecordedScore` judgments: ``is_correct_mcq_<s>`` as ``choice``/``accuracy``, a
narrow score as ``personamem-v2-boxed``/``score``, a narrow True/False as
``personamem-v2-vote``/``accuracy`` — all with the distance bin, so ``report`` shows the file's own
numbers per bin next to prefscope's. Import the benchmark CSV first.

Skipped (counted in a note): ``ERROR: …`` replies and empty cells (the official summary counts
them in one denominator and not in the other). The file names no model: it is the folder name
when the file has the official name (the run scripts write ``results/<…>/<model>/``), else the file
stem; the method is ``personamem-v2-user-roles`` for a name with ``claude`` (the client's rule),
else ``personamem-v2``. A ``model_response_openended`` column without size matches by key only.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

from core.benchmarks.personamem_v2 import rows as R
from core.benchmarks.personamem_v2.answers import BENCHMARK, RECORDED_FORMAT, recorded_note
from core.benchmarks.personamem_v2.judge import BOXED, VOTE
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, check_size
from core.formats.shapes import head_text
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport

NAME = "personamem-v2"
KEY_COLUMNS = ("persona_id", "user_query", "correct_answer")
EXTRACTOR = "personamem-v2-extract_final_answer"
JUDGE_PASS = "personamem-v2-run_judges"


def _response_columns(names: set[str]) -> list[tuple[str, str | None]]:
    """(mode, size) pairs the file has replies for; size None: the generic open-ended column."""
    out: list[tuple[str, str | None]] = []
    for size in R.SIZES:
        for mode, col in (("mcq", f"model_response_mcq_{size}"), ("open", f"model_response_openended_{size}")):
            if col in names:
                out.append((mode, size))
    if "model_response_openended" in names:
        out.append(("open", None))
    return out


def detect(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".csv":
        return False
    head = head_text(path, 256 * 1024).splitlines()[:1]
    names = {n.strip() for n in next(csv.reader(head), [])} if head else set()
    return set(KEY_COLUMNS) <= names and bool(_response_columns(names))


def model_of(path: Path) -> str:
    if path.stem.startswith("evaluation_results") and path.parent.name:
        return path.parent.name
    return path.stem or "unknown"


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the personamem-v2 results format reads one result CSV, not a folder")
    src = path.name
    check_size(path, max_bytes)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    model = model_of(path)
    method = "personamem-v2-user-roles" if "claude" in model.lower() else "personamem-v2"
    result = ResultsImport(format=NAME)
    skipped = {"error": 0, "empty": 0}
    seen: dict[str, int] = {}
    with R.wide_cells(max_bytes), path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        names = {(h or "").strip() for h in reader.fieldnames or []}
        absent = [c for c in KEY_COLUMNS if c not in names]
        if absent:
            raise FormatError(src, f"missing column(s) {', '.join(absent)} (the result CSV repeats the input columns)")
        pairs = _response_columns(names)
        if not pairs:
            raise FormatError(src, "no model_response_mcq_<size> / model_response_openended_<size> column")
        try:
            for raw in reader:
                label = f"line {reader.line_num}"
                row = {(k or "").strip(): (v or "") for k, v in raw.items() if k is not None}
                key = R.row_key(row["persona_id"], row["user_query"], row["correct_answer"])
                seen[key] = seen.get(key, 0) + 1
                if seen[key] > 1:
                    key = f"{key}-{seen[key]}"
                for mode, size in pairs:
                    answer = _answer(src, sha, label, len(result.answers), row, key, mode, size, model, method, skipped)
                    if answer is not None:
                        result.answers.append(answer)
        except csv.Error as exc:
            raise FormatError(src, f"not a readable CSV row ({exc})", record=f"line {reader.line_num}") from exc
    result.notes.append(
        f"{src}: model {model!r} and method {method!r} inferred from the file's name and folder (the file names neither)"
    )
    if skipped["error"] or skipped["empty"]:
        result.notes.append(
            f"{src}: skipped {skipped['error']} ERROR reply cell(s) and {skipped['empty']} empty one(s) "
            "(the official overall MCQ accuracy counts them as wrong)"
        )
    return result


def _answer(
    src: str,
    sha: str,
    label: str,
    index: int,
    row: dict[str, str],
    key: str,
    mode: str,
    size: str | None,
    model: str,
    method: str,
    skipped: dict[str, int],
) -> ImportedAnswer | None:
    suffix = f"_{size}" if size else ""
    reply = row.get(f"model_response_mcq{suffix}" if mode == "mcq" else f"model_response_openended{suffix}", "")
    if reply.startswith("ERROR:"):
        skipped["error"] += 1
        return None
    if not reply.strip():
        skipped["empty"] += 1
        return None
    bin_label = R.distance_bin(R.number(row.get(R.distance_column(size)))) if size else "(none)"
    meta_common = {"benchmark": BENCHMARK, "distance_bin": bin_label, "size": size}
    recorded: list[RecordedScore] = []
    meta: dict = {}
    if mode == "mcq":
        verdict = row.get(f"is_correct_mcq{suffix}", "").strip()
        predicted = row.get(f"predicted_answer_mcq{suffix}", "")
        meta = {"recorded_is_correct": verdict, "recorded_predicted_answer": predicted}
        if verdict:
            recorded.append(
                RecordedScore(
                    kind="choice",
                    dimension="accuracy",
                    score=_truth(verdict),
                    scale_min=0.0,
                    scale_max=1.0,
                    judge=EXTRACTOR,
                    raw=verdict,
                    rationale=f"predicted {predicted!r} (recorded by inference.py)",
                    meta={**meta_common, "predicted_answer": predicted},
                )
            )
    else:
        narrow = row.get(f"is_correct_openended{suffix}_narrow", "").strip()
        said = row.get(f"judge_responses{suffix}_narrow", "")
        meta = {"recorded_narrow": narrow}
        if narrow:
            truth = _truth(narrow)
            kind, dimension, score = (
                (VOTE, "accuracy", truth) if truth is not None else (BOXED, "score", _float(narrow))
            )
            recorded.append(
                RecordedScore(
                    kind=kind,
                    dimension=dimension,
                    score=score,
                    scale_min=0.0,
                    scale_max=1.0,
                    judge=JUDGE_PASS,
                    raw=narrow,
                    rationale=said[:2000],
                    meta=meta_common,
                )
            )
    match = {"row_key": key, "mode": mode, **({"size": size} if size else {})}
    query = R.parse_user_query(row["user_query"])
    return ImportedAnswer(
        format=NAME,
        source_file=src,
        source_sha256=sha,
        record=index,
        record_label=label if size is None else f"{label} ({mode}, {size})",
        match_meta=match,
        query_text=R.content_text(query.get("content")),
        model=model,
        method=method,
        context="full",
        answer=reply,
        answer_format=RECORDED_FORMAT if mode == "mcq" else "open",
        prompt_notes=[
            f"PersonaMem-v2 {mode} reply of {model} imported from {src}, {label}; prefscope did not send it.",
            "the file does not give the messages; that run's MCQ option order is unknown (the official shuffle is "
            "seeded with Python's salted hash()), so `judge --judge choice` re-runs the extraction and keeps the "
            "file's verdict when it finds the recorded letter",
            *([recorded_note(meta["recorded_predicted_answer"], meta["recorded_is_correct"])] if mode == "mcq" else []),
        ],
        recorded=recorded,
        meta=meta,
    )


def _truth(text: str) -> float | None:
    low = text.strip().lower()
    return 1.0 if low == "true" else 0.0 if low == "false" else None


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
