"""lm-evaluation-harness ``--log_samples`` output: ``results_<date_id>.json`` + ``samples_<task>_<date_id>.jsonl``.

Reference: ../shared/reference/formats/lm_eval/FORMAT.md (checked against lm-eval 0.4.13). Reads a
folder (every run under it: sample files grouped by ``<date_id>`` and folder), a ``results_*.json``
(the sample files of its run beside it) or one ``samples_*.jsonl``.

* One answer per line, i.e. per (task, ``doc_id``, ``filter``): the answer is ``filtered_resps[0]``
  (after lm-eval's filter pipeline). Loglikelihood / multiple-choice lines have no text answer (their
  responses are log-probabilities): they are skipped and counted in a note.
* The prompt is ``arguments.gen_args_0.arg_0``: a string (what a local model was sent, chat template
  already applied: kept as one user message), or a one-element list holding a JSON message list
  (API chat backends) → those messages.
* Gold is ``target`` (the placeholder query's reference answer); every metric the line lists in
  ``metrics`` is a :class:`RecordedScore` of judge ``lm-eval`` (stored as ``recorded:lm-eval``),
  kind ``lm-eval``, dimension ``<metric>,<filter>`` — the key lm-eval's own results file uses, so
  two filters of one metric are never pooled.
* Model: the results file's ``model_name``, else ``pretrained=`` / ``model=`` / ``path=`` … of
  ``config.model_args``, else the folder name (lm-eval names it after the model).
* Linking: a ``doc`` holding ``user_id`` + ``query_id`` names stored ids; otherwise the answer goes on
  a placeholder user ``lm-eval-<task>-<doc_id>`` whose query ``doc-<doc_id>`` is the doc's question.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import object_lines
from core.plan import Message
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport
from core.results.placeholders import placeholder_user, slug

NAME = "lm-eval"
JUDGE = "lm-eval"
_DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
_SAMPLES = re.compile(rf"^samples_(?P<task>.+)_(?P<date>{_DATE})\.jsonl$")
_RESULTS = re.compile(rf"^results_(?P<date>{_DATE})\.json$")
#: lm-eval request types whose responses are log-probabilities, not text.
_SCORED_ONLY = {"loglikelihood", "loglikelihood_rolling", "multiple_choice"}
#: ``model_args`` keys that name the model, in the order lm-eval's backends read them.
_MODEL_KEYS = ("pretrained", "model", "path", "model_name", "engine")
#: ``doc`` fields taken as the question when the prompt is one rendered string.
QUESTION_KEYS = ("question", "query", "problem", "input", "prompt", "text")
_MAX_FILES = 10_000
#: lm-eval metrics known to lie in [0, 1] per doc (others, e.g. bleu or perplexity, get no scale).
_UNIT_METRICS = frozenset({"acc", "acc_norm", "exact_match"})


def detect(path: Path) -> bool:
    try:
        if path.is_dir():
            return any(_SAMPLES.match(p.name) and p.is_file() for p in path.rglob("samples_*.jsonl"))
        return bool(_SAMPLES.match(path.name) or _RESULTS.match(path.name) and _sample_files_of(path))
    except OSError:
        return False


def _sample_files(folder: Path, limit: int = _MAX_FILES) -> list[Path]:
    out = []
    for p in sorted(folder.rglob("samples_*.jsonl")):
        if _SAMPLES.match(p.name) and p.is_file() and not p.is_symlink():
            out.append(p)
            if len(out) >= limit:
                break
    return out


def _sample_files_of(results: Path) -> list[Path]:
    m = _RESULTS.match(results.name)
    date = m["date"] if m else ""
    return [p for p in sorted(results.parent.glob(f"samples_*_{date}.jsonl")) if _SAMPLES.match(p.name)]


@dataclass
class _Run:
    folder: Path
    date: str
    samples: list[Path] = field(default_factory=list)


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    root = path if path.is_dir() else path.parent
    if path.is_dir():
        files = _sample_files(path)
        if not files:
            raise FormatError(path.name, "folder holds no lm-eval samples_<task>_<date_id>.jsonl files")
    elif _RESULTS.match(path.name):
        files = _sample_files_of(path)
        if not files:
            raise FormatError(path.name, "no samples_<task>_<date_id>.jsonl beside it (run lm-eval with --log_samples)")
    elif _SAMPLES.match(path.name):
        files = [path]
    else:
        raise FormatError(
            path.name, "expected an lm-eval folder, results_<date_id>.json or samples_<task>_<date_id>.jsonl"
        )
    runs: dict[tuple[Path, str], _Run] = {}
    for f in files:
        m = _SAMPLES.match(f.name)
        assert m is not None
        runs.setdefault((f.parent, m["date"]), _Run(f.parent, m["date"])).samples.append(f)
    result = ResultsImport(format=NAME)
    for run in runs.values():
        _load_run(run, root, max_bytes, result)
    return result


def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root)) if path != root else path.name
    except ValueError:
        return path.name


def _load_run(run: _Run, root: Path, max_bytes: int, result: ResultsImport) -> None:
    results_path = run.folder / f"results_{run.date}.json"
    header: dict = {}
    if results_path.is_file():
        header = _read_results(results_path, _shown(results_path, root), max_bytes)
    model = _model(header) or run.folder.name
    if not header:
        result.notes.append(
            f"{_shown(run.folder, root)}: no results_{run.date}.json; model named after the folder ({model})"
        )
    configs = _obj(header.get("configs"))
    for samples in run.samples:
        m = _SAMPLES.match(samples.name)
        assert m is not None
        task = m["task"]
        cfg = _obj(configs.get(task))
        _load_samples(samples, _shown(samples, root), task, model, str(cfg.get("output_type") or ""), max_bytes, result)


def _read_results(path: Path, shown: str, max_bytes: int) -> dict:
    try:
        data = json.loads(read_text(path, max_bytes))
    except json.JSONDecodeError as exc:
        raise FormatError(shown, f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise FormatError(shown, f"expected a JSON object, got {type(data).__name__}")
    return data


def _model(header: dict) -> str | None:
    if isinstance(header.get("model_name"), str) and header["model_name"]:
        return header["model_name"]
    config = _obj(header.get("config"))
    args = config.get("model_args")
    if isinstance(args, str):
        pairs = dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
    elif isinstance(args, dict):
        pairs = {str(k): str(v) for k, v in args.items()}
    else:
        pairs = {}
    return next((pairs[k] for k in _MODEL_KEYS if pairs.get(k)), None)


def _load_samples(
    path: Path, shown: str, task: str, model: str, output_type: str, max_bytes: int, result: ResultsImport
) -> None:
    raw = read_text(path, max_bytes)
    sha = hashlib.sha256(raw.encode()).hexdigest()
    seen: dict[tuple[int, str], str] = {}
    skipped = 0
    for n, label, rec in object_lines(raw, shown):
        doc_id = rec.get("doc_id")
        if not isinstance(doc_id, int) or isinstance(doc_id, bool):
            raise FormatError(shown, "missing or not an integer", record=label, path="doc_id")
        filt = rec["filter"] if isinstance(rec.get("filter"), str) else "none"
        if (doc_id, filt) in seen:
            raise FormatError(
                shown, f"doc {doc_id}, filter {filt} repeats {seen[doc_id, filt]} (two runs appended?)", record=label
            )
        seen[doc_id, filt] = label
        answer = _answer(shown, rec, label, output_type)
        if answer is None:
            skipped += 1
            continue
        result.answers.append(_imported(shown, sha, n - 1, label, rec, task, doc_id, filt, model, answer))
    if skipped:
        result.notes.append(
            f"{shown}: skipped {skipped} loglikelihood/multiple-choice line{'s' * (skipped != 1)} "
            "(log-probabilities, no text answer)"
        )


def _answer(shown: str, rec: dict, label: str, output_type: str) -> str | None:
    """``filtered_resps[0]`` as text; None for a line whose responses are log-probabilities."""
    if output_type in _SCORED_ONLY:
        return None
    resps = rec.get("filtered_resps")
    if not isinstance(resps, list) or not resps:
        raise FormatError(shown, "missing or empty list", record=label, path="filtered_resps")
    first = resps[0]
    if isinstance(first, list) and first and all(isinstance(x, str) for x in first):
        first = first[0]  # repeats kept by a filter: the first one, as lm-eval's take_first does
    if isinstance(first, str):
        return first
    if output_type:
        raise FormatError(shown, f"expected text for a {output_type} task", record=label, path="filtered_resps[0]")
    return None  # no results file to say the task's type: [logprob, is_greedy] pairs are not text


def _prompt(shown: str, rec: dict, label: str) -> tuple[list[Message], bool]:
    """The messages sent and whether they came as a chat message list (else one rendered string)."""
    first = _obj(_obj(rec.get("arguments")).get("gen_args_0"))
    prompt: Any = first.get("arg_0")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        try:
            chat = json.loads(prompt[0])
        except json.JSONDecodeError:
            chat = None
        if isinstance(chat, list):
            out = []
            for j, m in enumerate(chat):
                try:
                    out.append(Message.model_validate(m))
                except ValidationError as exc:
                    raise from_validation(shown, exc, record=label, prefix=f"arguments.gen_args_0.arg_0[{j}]") from None
            return out, True
        prompt = prompt[0]
    if isinstance(prompt, str):
        return [Message(role="user", content=prompt)], False
    return [], False


def _recorded(rec: dict, filt: str) -> list[RecordedScore]:
    out = []
    for metric in rec.get("metrics") or []:
        if not isinstance(metric, str) or metric not in rec:
            continue
        value = rec[metric]
        number = float(value) if isinstance(value, int | float) else None
        out.append(
            RecordedScore(
                kind=NAME,
                dimension=f"{metric},{filt}",
                score=number,
                scale_min=0.0 if metric in _UNIT_METRICS else None,
                scale_max=1.0 if metric in _UNIT_METRICS else None,
                judge=JUDGE,
                raw=json.dumps(value),
                meta={"metric": metric, "filter": filt},
            )
        )
    return out


def _imported(
    shown: str, sha: str, index: int, label: str, rec: dict, task: str, doc_id: int, filt: str, model: str, answer: str
) -> ImportedAnswer:
    messages, chat = _prompt(shown, rec, label)
    doc = _obj(rec.get("doc"))
    asked = next((doc[k] for k in QUESTION_KEYS if isinstance(doc.get(k), str) and doc[k]), "")
    question = next((m.content for m in reversed(messages) if m.role == "user"), "") if chat else asked
    target = rec.get("target")
    gold = target if isinstance(target, str) else (json.dumps(target) if target is not None else None)
    uid, qid = slug(f"lm-eval-{task}-{doc_id}"), f"doc-{doc_id}"
    link: dict = {"user_id": uid, "query_id": qid}
    if isinstance(doc.get("user_id"), str) and isinstance(doc.get("query_id"), str):
        link = {"user_id": doc["user_id"], "query_id": doc["query_id"]}
    preference = doc.get("preference") if isinstance(doc.get("preference"), str) else None
    sample = {"task": task, "doc_id": doc_id}
    fallback = placeholder_user(
        NAME,
        link["user_id"],
        link["query_id"],
        f"{task} doc {doc_id}",
        question or (messages[-1].content if messages else ""),
        source_file=shown,
        preference=preference,
        reference_answer=gold,
        meta=sample,
    )
    notes = [
        f"lm-eval task {task}, doc {doc_id}, filter {filt}: imported from {shown}, {label}; prefscope did not send it."
    ]
    if messages and not chat:
        notes.append(
            "The prompt is the text lm-eval sent (any chat template already applied), kept as one user message."
        )
    if not messages:
        notes.append("The file does not give the prompt (arguments.gen_args_0.arg_0).")
    return ImportedAnswer(
        format=NAME,
        source_file=shown,
        source_sha256=sha,
        record=index,
        record_label=label,
        **link,
        fallback=fallback,
        fallback_query_id=link["query_id"],
        query_text=question,
        model=model,
        method="imported",
        context="imported",
        answer=answer,
        messages=messages or None,
        prompt_notes=notes,
        recorded=_recorded(rec, filt),
        meta={**sample, "filter": filt, "target": gold, **({"doc_hash": rec["doc_hash"]} if "doc_hash" in rec else {})},
    )
