"""Every Eval Ever (EEE) results, schema 0.3.0 and 0.2.x: an aggregate ``<uuid>.json`` and its
instance sidecar ``<uuid>_samples.jsonl`` (reference: ``formats/every_eval_ever/FORMAT.md``).

Reads a sidecar, an aggregate (its sidecar is found next to it), or a folder (every aggregate under
it, e.g. a datastore's ``data/``). One :class:`ImportedAnswer` per sample and model: a sample scored
by K metrics is K instance lines, merged here into one answer with K recorded scores, each a
:class:`RecordedScore` of its judge (the aggregate's ``llm_scoring`` judge, else the line's
``extraction_method``), kind/dimension as the exporting prefscope named them (instance metadata
``prefscope_kind`` / ``prefscope_dimension``), else ``eee`` / the metric id.

Linking: metadata ``prefscope_user_id`` + ``prefscope_query_id`` (written by ``prefscope export
--format eee``) name stored ids; when that user is not stored the answer goes on a placeholder of
those ids. Otherwise a ``preference`` in the metadata plus the last user message are matched
against stored users' texts, and when nothing matches the answer goes on a fallback user of its
own (``eee-<evaluation>-<sample>``). 0.2.x differences accepted: ``interactions`` for
``messages``, integer ``sample_id``, string ``input.reference``, boolean ``evaluation.score``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import ValidationError

from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import first_record, object_lines
from core.model import UserBundle
from core.plan import Message
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport
from core.results.placeholders import placeholder_user, slug

NAME = "eee"
SAMPLES_SUFFIX = "_samples.jsonl"
_ROLES = ("system", "user", "assistant")
_MAX_AGGREGATES = 10_000


def detect(path: Path) -> bool:
    try:
        if path.is_dir():
            return any(_is_aggregate(p) for p in _aggregates(path, limit=50))
        if path.name.endswith(SAMPLES_SUFFIX):
            rec = first_record(path)
            return isinstance(rec, dict) and all(k in rec for k in ("schema_version", "evaluation_id", "sample_id"))
        return path.suffix.lower() == ".json" and _is_aggregate(path)
    except OSError:
        return False


def _is_aggregate(path: Path) -> bool:
    rec = first_record(path)
    return isinstance(rec, dict) and "schema_version" in rec and "evaluation_results" in rec and "model_info" in rec


def _aggregates(folder: Path, limit: int = _MAX_AGGREGATES) -> list[Path]:
    out = []
    for p in sorted(folder.rglob("*.json")):
        if p.is_file() and not p.is_symlink():
            out.append(p)
            if len(out) >= limit:
                break
    return out


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    result = ResultsImport(format=NAME)
    if path.is_dir():
        pairs = [(a, _sidecar(a, max_bytes)) for a in _aggregates(path) if _is_aggregate(a)]
        if not pairs:
            raise FormatError(path.name, "folder holds no Every Eval Ever aggregate (<uuid>.json) files")
        for agg, side in pairs:
            _load_pair(agg, side, path, max_bytes, result)
    elif path.name.endswith(SAMPLES_SUFFIX):
        agg = path.with_name(path.name[: -len(SAMPLES_SUFFIX)] + ".json")
        _load_pair(agg if agg.is_file() else None, path, path.parent, max_bytes, result)
    else:
        _load_pair(path, _sidecar(path, max_bytes), path.parent, max_bytes, result)
    return result


def _read_json(path: Path, shown: str, max_bytes: int) -> dict:
    try:
        data = json.loads(read_text(path, max_bytes))
    except json.JSONDecodeError as exc:
        raise FormatError(shown, f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise FormatError(shown, f"expected a JSON object, got {type(data).__name__}")
    return data


def _sidecar(aggregate: Path, max_bytes: int) -> Path | None:
    """The instance file next to the aggregate: the name its ``file_path`` gives, else ``<stem>_samples.jsonl``."""
    data = _read_json(aggregate, aggregate.name, max_bytes)
    detail = data.get("detailed_evaluation_results")
    names = []
    if isinstance(detail, dict) and isinstance(detail.get("file_path"), str):
        names.append(Path(detail["file_path"]).name)
    names.append(aggregate.stem + SAMPLES_SUFFIX)
    for name in names:
        candidate = aggregate.with_name(name)
        if candidate.is_file():
            return candidate
    return None


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root)) if path != root else path.name
    except ValueError:
        return path.name


def _load_pair(agg: Path | None, side: Path | None, root: Path, max_bytes: int, result: ResultsImport) -> None:
    aggregate = _read_json(agg, _shown(agg, root), max_bytes) if agg is not None else {}
    if side is None:
        assert agg is not None
        result.notes.append(f"{_shown(agg, root)}: no instance file (aggregate scores only); nothing imported from it")
        return
    shown = _shown(side, root)
    raw = read_text(side, max_bytes)
    sha = hashlib.sha256(raw.encode()).hexdigest()
    metrics = _metrics(aggregate)
    merged: dict[tuple, ImportedAnswer] = {}
    for n, label, rec in object_lines(raw, shown):
        answer = _answer(shown, sha, n - 1, label, rec, aggregate, metrics)
        key = (rec.get("evaluation_id"), answer.model, str(rec.get("sample_id")), answer.answer, answer.user_id)
        if key in merged:
            merged[key].recorded.extend(answer.recorded)
        else:
            merged[key] = answer
    result.answers.extend(merged.values())


def _metrics(aggregate: dict) -> dict[str, dict]:
    """evaluation_result_id (0.3.0) or evaluation_name (0.2.x) -> that result's metric_config."""
    out: dict[str, dict] = {}
    for r in aggregate.get("evaluation_results") or []:
        if not isinstance(r, dict):
            continue
        cfg = _obj(r.get("metric_config"))
        for key in (r.get("evaluation_result_id"), r.get("evaluation_name")):
            if isinstance(key, str):
                out.setdefault(key, cfg)
    return out


def _require(shown: str, rec: dict, key: str, kind: type | tuple, label: str) -> object:
    if key not in rec or rec[key] is None:
        raise FormatError(shown, "missing required field", record=label, path=key)
    if not isinstance(rec[key], kind) or isinstance(rec[key], bool) and kind is not bool:
        raise FormatError(shown, f"wrong type {type(rec[key]).__name__}", record=label, path=key)
    return rec[key]


def _answer(
    shown: str, sha: str, index: int, label: str, rec: dict, aggregate: dict, metrics: dict[str, dict]
) -> ImportedAnswer:
    model = str(_require(shown, rec, "model_id", str, label))
    sample_id = str(_require(shown, rec, "sample_id", (str, int), label))
    evaluation = _require(shown, rec, "evaluation", dict, label)
    assert isinstance(evaluation, dict)
    inp = _obj(rec.get("input"))
    transcript = rec.get("messages") if rec.get("messages") is not None else rec.get("interactions")
    messages, answer, turn = _transcript(shown, label, rec, transcript)
    meta_in = _obj(rec.get("metadata"))
    meta = {str(k): v for k, v in meta_in.items()}
    result_key = rec.get("evaluation_result_id") or rec.get("evaluation_name")
    cfg = metrics.get(result_key, {}) if isinstance(result_key, str) else {}
    recorded = [_recorded(shown, label, rec, evaluation, cfg, meta, turn)]
    question = next((m.content for m in reversed(messages or []) if m.role == "user"), "") or str(inp.get("raw", ""))
    evaluation_name = str(rec.get("evaluation_name") or "eee")
    uid, qid = meta.get("prefscope_user_id"), meta.get("prefscope_query_id")
    if isinstance(uid, str) and isinstance(qid, str) and uid and qid:
        fallback, fallback_query = _placeholder(uid, qid, sample_id, question, meta, shown), qid
        link: dict = {"user_id": uid, "query_id": qid}
    else:
        fuid = "eee-" + slug(f"{evaluation_name}-{sample_id}")
        fallback, fallback_query = _placeholder(fuid, "q", sample_id, question, meta, shown), "q"
        pref = meta.get("preference")
        link = {"match": {"preference": pref, "question": question}} if isinstance(pref, str) and question else {}
    turns = meta.get("turns")
    notes = [
        f"Every Eval Ever sample {sample_id} of {model} imported from {shown}, {label}; prefscope did not send it."
    ]
    if not messages:
        notes.append("The file gives the prompt as text only (input.raw), not as messages.")
    return ImportedAnswer(
        format=NAME,
        source_file=shown,
        source_sha256=sha,
        record=index,
        record_label=label,
        **link,
        fallback=fallback,
        fallback_query_id=fallback_query,
        query_text=question,
        model=model,
        method=str(meta.get("method") or "unknown"),
        context=str(meta.get("context") or "imported"),
        turns=int(turns) if isinstance(turns, str) and turns.isdigit() else None,
        answer=answer,
        messages=messages or None,
        prompt_notes=notes,
        recorded=recorded,
        meta={
            "eee_schema_version": str(rec.get("schema_version", "")),
            "eee_evaluation_id": str(rec.get("evaluation_id", "")),
            "eee_evaluation_name": evaluation_name,
            "eee_sample_id": sample_id,
            **({"eee_aggregate_id": str(aggregate["evaluation_id"])} if "evaluation_id" in aggregate else {}),
            **{k: v for k, v in meta.items() if not k.startswith("prefscope_")},
        },
    )


def _transcript(shown: str, label: str, rec: dict, transcript: object) -> tuple[list[Message], str, int | None]:
    """(messages sent before the answer, the answer, its turn index): the answer is the turn
    ``answer_attribution`` points at, else the last assistant turn; single-turn: ``output.raw``."""
    if transcript is None:
        output = _obj(rec.get("output"))
        raw = output.get("raw")
        answer = "\n".join(str(x) for x in raw) if isinstance(raw, list) else str(raw or "")
        return [], answer, None
    if not isinstance(transcript, list):
        raise FormatError(shown, f"expected a list, got {type(transcript).__name__}", record=label, path="messages")
    attributed = None
    for a in rec.get("answer_attribution") or []:
        if isinstance(a, dict) and isinstance(a.get("turn_idx"), int) and a.get("is_terminal", True):
            attributed = a["turn_idx"]
    turns = [m for m in transcript if isinstance(m, dict)]
    if attributed is None:
        attributed = next((m.get("turn_idx") for m in reversed(turns) if m.get("role") == "assistant"), None)
    messages, answer = [], ""
    for j, m in enumerate(turns):
        idx = m.get("turn_idx", j)
        if idx == attributed:
            answer = str(m.get("content") or "")
            break
        if m.get("role") not in _ROLES:
            continue  # tool turns have no prefscope message role
        try:
            messages.append(Message(role=m["role"], content=str(m.get("content") or "")))
        except ValidationError as exc:
            raise from_validation(shown, exc, record=label, prefix=f"messages[{j}]") from exc
    return messages, answer, attributed


def _recorded(
    shown: str, label: str, rec: dict, evaluation: dict, cfg: dict, meta: dict, turn: int | None
) -> RecordedScore:
    score = evaluation.get("score")
    if isinstance(score, bool):
        score = float(score)
    elif isinstance(score, int | float):
        score = float(score)
    else:
        raise FormatError(shown, "expected a number", record=label, path="evaluation.score")
    attribution = next(
        (a for a in rec.get("answer_attribution") or [] if isinstance(a, dict) and a.get("turn_idx") == turn),
        (rec.get("answer_attribution") or [{}])[-1] if rec.get("answer_attribution") else {},
    )
    judges = (cfg.get("llm_scoring") or {}).get("judges") or []
    judge_info = judges[0].get("model_info", {}) if judges and isinstance(judges[0], dict) else {}
    judge = (
        meta.get("prefscope_judge")
        or judge_info.get("id")
        or (attribution.get("extraction_method") if isinstance(attribution, dict) else None)
        or "eee"
    )
    metric = cfg.get("metric_id") or rec.get("evaluation_result_id") or rec.get("evaluation_name") or "score"
    lo, hi = cfg.get("min_score"), cfg.get("max_score")
    if cfg.get("score_type") == "binary" or (lo is None and hi is None and isinstance(evaluation.get("score"), bool)):
        lo, hi = 0.0, 1.0
    raw = attribution.get("extracted_value") if isinstance(attribution, dict) else None
    return RecordedScore(
        kind=str(meta.get("prefscope_kind") or "eee"),
        dimension=str(meta.get("prefscope_dimension") or metric),
        score=score,
        scale_min=float(lo) if isinstance(lo, int | float) else None,
        scale_max=float(hi) if isinstance(hi, int | float) else None,
        judge=str(judge),
        raw=str(raw if raw is not None else evaluation.get("score")),
        rationale=str(meta.get("prefscope_rationale") or ""),
        meta={
            "is_correct": evaluation.get("is_correct"),
            "metric_id": metric,
            **({"evaluation_result_id": rec["evaluation_result_id"]} if rec.get("evaluation_result_id") else {}),
        },
    )


def _placeholder(uid: str, qid: str, sample_id: str, question: str, meta: dict, shown: str) -> UserBundle:
    pref = meta.get("preference")
    return placeholder_user(
        NAME,
        uid,
        qid,
        sample_id,
        question,
        source_file=shown,
        preference=pref if isinstance(pref, str) and pref else None,
        meta={"sample_id": sample_id},
    )


def _obj(value: object) -> dict:
    return value if isinstance(value, dict) else {}
