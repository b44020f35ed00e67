"""PersonaMem result CSVs, as its ``inference_standalone_openai.py`` writes them (``--result_path``):
one row per answered question with the columns ``score, persona_id, question_id,
user_question_or_message, question_type, topic, stereotypical, context_length_in_tokens, …,
model_response, len_of_model_response, predicted_answer, correct_answer``. Rows the script skipped
(API errors) are simply absent, as in its own accuracy.

Each row answers the stored PersonaMem question with the same ``question_id`` and ``persona_id``
(import the dataset first: ``prefscope import questions_<size>.csv``); when the file name carries
the size (``…_32k.csv``, ``…128k…``, ``…1M…``) only that size's questions match. The file names no
model: the model is the file's stem. The method follows the script's own rule on that name: a name
with the letter ``o`` was sent the merged messages (``personamem-merged``), any other the messages
as they are (``personamem``); the run's notes say it was inferred. The recorded ``score`` and
``predicted_answer`` stay in the run's ``meta``; ``prefscope judge --judge choice`` scores the
answer again with PersonaMem's rule.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path

from core.benchmarks.personamem.answers import ANSWER_FORMAT
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import head_text
from core.results.model import ImportedAnswer, ResultsImport

NAME = "personamem"
REQUIRED = ("score", "persona_id", "question_id", "user_question_or_message", "model_response", "correct_answer")
_SIZE = re.compile(r"(?<![0-9a-z])(32k|128k|1m)(?![0-9a-z])", re.IGNORECASE)


def detect(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".csv":
        return False
    header = head_text(path, 64 * 1024).splitlines()[:1]
    names = {n.strip() for n in next(csv.reader(header), [])} if header else set()
    return set(REQUIRED) <= names


def size_in_name(path: Path) -> str | None:
    """``32k`` / ``128k`` / ``1M`` when the file name says which PersonaMem size it answers."""
    m = _SIZE.search(path.stem)
    return None if m is None else ("1M" if m.group(1).lower() == "1m" else m.group(1).lower())


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the personamem results format reads one result CSV, not a folder")
    src = path.name
    text = read_text(path, max_bytes)
    sha = hashlib.sha256(text.encode()).hexdigest()
    reader = csv.DictReader(io.StringIO(text, newline=""))
    absent = [c for c in REQUIRED if c not in {(h or "").strip() for h in reader.fieldnames or []}]
    if absent:
        raise FormatError(src, f"missing column(s) {', '.join(absent)} (PersonaMem's result CSV has them)")
    model = path.stem or "unknown"
    method = "personamem-merged" if "o" in model else "personamem"
    size = size_in_name(path)
    result = ResultsImport(format=NAME)
    seen: dict[str, str] = {}
    try:
        for i, raw in enumerate(reader):
            label = f"line {reader.line_num}"
            row = {(k or "").strip(): (v or "") for k, v in raw.items()}
            qid = row["question_id"].strip()
            if not qid:
                raise FormatError(src, "empty cell", record=label, path="question_id")
            if qid in seen:
                raise FormatError(
                    src, f"duplicate question_id {qid!r}, also {seen[qid]}", record=label, path="question_id"
                )
            seen[qid] = label
            match = {"question_id": qid, "persona_id": row["persona_id"].strip()}
            if size:
                match["size"] = size
            result.answers.append(
                ImportedAnswer(
                    format=NAME,
                    source_file=src,
                    source_sha256=sha,
                    record=i,
                    record_label=label,
                    match_meta=match,
                    query_text=row["user_question_or_message"],
                    model=model,
                    method=method,
                    context="full",
                    answer=row["model_response"],
                    answer_format=ANSWER_FORMAT,
                    prompt_notes=[
                        f"PersonaMem result of {model} imported from {src}, {label}; prefscope did not send it.",
                        f"method {method!r} inferred from the file name by PersonaMem's own rule (letter 'o' in the "
                        "model name: system messages merged); the file does not give the messages.",
                    ],
                    meta={
                        "recorded_score": row["score"].strip(),
                        "recorded_predicted_answer": row.get("predicted_answer", ""),
                        "correct_answer": row["correct_answer"],
                    },
                )
            )
    except csv.Error as exc:
        raise FormatError(src, f"not a readable CSV row ({exc})", record=f"line {reader.line_num}") from exc
    return result
