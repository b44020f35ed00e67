"""Stored runs as Inspect (``inspect_ai``) evaluation logs, so ``inspect view`` shows prefscope runs.

One log per batch label × model (an Inspect log has one ``eval.model``)::

    logs = inspect_logs(db, RunFilter(labels=["mybatch"]))   # [InspectLog], nothing written
    write_eval(logs[0], fh)        # .eval: a ZIP of JSON members (DEFLATE, as the stdlib writes)
    write_json(logs[0], fh)        # .json: the whole EvalLog as one JSON object

Mapping (../shared/reference/formats/inspect_ai/FORMAT.md §7):

* a sample is one item (user × query × expression × context × method × seed × sweep values),
  ``epoch`` = the run's repeat + 1; ``metadata`` carries ``user_id``, ``query_id``, ``run_id``,
  ``response_id`` and the rest of the item's key, which is how ``import-results`` links it back;
* ``input`` is the stored prompt of the step whose reply is the final answer (the exact messages
  sent), ``messages`` = input + the answer, ``output`` the answer with its token usage;
* every stored judgment of the answer is a named score (``<kind>_<dimension>`` as the CSV export
  names its ``score_…`` columns): ``value`` the score, ``explanation`` the rationale, ``metadata``
  kind, dimension, judge model, source, scale and prompt version; unparsed judgments are left out
  of ``scores`` and listed in the sample's ``metadata.prefscope_unparsed``;
* ``results`` holds, per score, the mean and its standard error over the items (repeats reduced
  by their mean first, as Inspect's ``epochs_reducer = ["mean"]`` does), computed here.

Texts go through the export's secret redaction (:class:`storage.export.Cleaner`). The writer
follows the strict schema ``inspect log schema`` prints (every defaulted field written).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from typing import IO, Any

from sqlite_utils import Database

from core.analysis.score_columns import ScoreKey, score_column_names
from storage.export import Cleaner, RunFilter, _source, model_where, run_where
from storage.prompt_messages import load_prompt_steps

LOG_VERSION = 2
#: The ``inspect_ai`` release whose schema the logs were checked against.
INSPECT_VERSION = "0.3.285"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class InspectLog:
    """One Inspect ``EvalLog`` as plain JSON data, plus what the ``.eval`` container adds."""

    label: str
    model: str
    header: dict
    samples: list[dict] = field(default_factory=list)
    summaries: list[dict] = field(default_factory=list)
    reductions: list[dict] = field(default_factory=list)

    def as_json(self) -> dict:
        return {**self.header, "samples": self.samples, "reductions": self.reductions or None}

    def file_name(self, suffix: str) -> str:
        """Inspect's own naming, ``{timestamp}_{task}_{task_id}.eval`` (the viewer lists a ``.json``
        log only when its name starts with a timestamp)."""
        spec = self.header["eval"]
        stamp = spec["created"].replace(":", "-")
        return f"{stamp}_{_SAFE.sub('-', spec['task'])}_{spec['task_id']}{suffix}"


def safe_name(text: str) -> str:
    """``text`` as a file-name part (letters, digits, ``.``, ``_``, ``-``)."""
    return _SAFE.sub("-", text).strip("-") or "x"


def _short_id(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:22]


def _usage(i: int | None, o: int | None) -> dict:
    i, o = i or 0, o or 0
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}


_SQL = """
    SELECT r.id, r.created_at, r.finished_at, r.label, r.user_id, r.query_id, r.expression_type, r.context,
           r.seed, r.method, r.spec, p.id, p.model, p.params, p.step, p.text, p.status, p.error,
           p.input_tokens, p.output_tokens, p.started_at, p.updated_at, p.duration_ms, q.kind, q.text
    FROM runs r
    JOIN responses p ON p.run_id = r.id AND p.is_final = 1
    LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
    WHERE {rw} AND {mw} AND r.probe_of IS NULL
    ORDER BY r.label, p.model, r.created_at, r.id, p.slot"""


def inspect_logs(
    db: Database, f: RunFilter | None = None, *, environ: dict[str, str] | None = None
) -> list[InspectLog]:
    """The selected runs' final answers as Inspect logs, one per label × model (label, then model order)."""
    f = f or RunFilter()
    clean = Cleaner(neutralise=False, environ=environ)
    args: list = []
    sql = _SQL.format(rw=run_where(f, args), mw=model_where(f, args))
    rows = db.execute(sql, args).fetchall()
    judgments = _judgments(db, [r[11] for r in rows])
    keys = [k for mine in judgments.values() for k, _ in mine]
    names = {k: n.removeprefix("score_") for k, n in score_column_names(keys).items()}
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for r in rows:
        groups[(r[3], r[12])].append(r)
    return [_log(db, label, model, rs, judgments, names, clean) for (label, model), rs in groups.items()]


def _judgments(db: Database, response_ids: list[str]) -> dict[str, list[tuple[ScoreKey, tuple]]]:
    out: dict[str, list[tuple[ScoreKey, tuple]]] = defaultdict(list)
    for i in range(0, len(response_ids), 500):
        chunk = response_ids[i : i + 500]
        sql = f"""SELECT response_id, kind, dimension, judge_model, heuristic, human, score, scale_min, scale_max,
                         rationale, parse_ok, prompt_version, error, raw
                  FROM judgments WHERE response_id IN ({",".join("?" * len(chunk))}) ORDER BY id"""
        for j in db.execute(sql, chunk):
            key = ScoreKey(j[1], j[2], _source(j[3], bool(j[4]), bool(j[5])), j[3])
            out[j[0]].append((key, j))
    return out


def _item_key(r: tuple, spec: dict) -> tuple:
    return (r[4], r[5], r[6], r[7], r[8], r[9], spec.get("turns"), spec.get("evidence_depth"))


def _log(db: Database, label: str, model: str, rows: list, judgments: dict, names: dict, clean: Cleaner) -> InspectLog:
    inspect_model = model.replace(":", "/", 1)
    # sample ids: user.query, with a suffix only when one user × query has several items here
    items: dict[tuple, list] = defaultdict(list)
    for r in rows:
        items[_item_key(r, json.loads(r[10]))].append(r)
    per_uq: dict[tuple, list[tuple]] = defaultdict(list)
    for key in items:
        per_uq[key[:2]].append(key)
    sample_ids: dict[tuple, str] = {}
    for uq, ks in per_uq.items():
        base = _SAFE.sub("_", f"{uq[0]}.{uq[1]}")
        for n, k in enumerate(ks, 1):
            sample_ids[k] = base if len(ks) == 1 else f"{base}.{n}"

    samples: list[dict] = []
    summaries: list[dict] = []
    per_score: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    epochs = 1
    for key, rs in items.items():
        sid = sample_ids[key]
        for n, r in enumerate(sorted(rs, key=lambda r: (json.loads(r[10]).get("repeat") or 0, r[1], r[0]))):
            spec = json.loads(r[10])
            epoch = max(int(spec.get("repeat") or 0), n) + 1
            epochs = max(epochs, epoch)
            sample, scores = _sample(db, r, spec, sid, epoch, inspect_model, judgments.get(r[11], []), names, clean)
            samples.append(sample)
            summaries.append(_summary(sample))
            for name, value in scores.items():
                per_score[name][sid].append(value)

    created = min(r[1] for r in rows)
    finished = max((r[2] or r[21] or r[1]) for r in rows)
    task = f"prefscope/{label or 'unlabelled'}"
    task_id = _short_id("task", label, model)
    score_names = sorted(per_score)
    reductions: list[dict[str, Any]] = [
        {
            "scorer": name,
            "reducer": "mean",
            "samples": [
                {"sample_id": sid, "value": sum(v) / len(v), "history": []} for sid, v in per_score[name].items()
            ],
        }
        for name in score_names
    ]
    results = {
        "total_samples": len(items),
        "completed_samples": sum(1 for rs in items.values() if all(r[16] == "ok" for r in rs)),
        "scores": [_eval_score(name, reductions[i]["samples"], len(items)) for i, name in enumerate(score_names)],
    }
    usage = _usage(sum(r[18] or 0 for r in rows), sum(r[19] or 0 for r in rows))
    spec0 = json.loads(rows[0][10])
    eval_spec = {
        "eval_id": _short_id("eval", label, model, created),
        "run_id": _short_id("run", label, created),
        "created": created,
        "task": task,
        "task_id": task_id,
        "task_version": 0,
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "dataset": {
            "name": label or "unlabelled",
            "samples": len(items),
            "sample_ids": sorted(sample_ids.values()),
            "shuffled": False,
        },
        "model": inspect_model,
        "model_generate_config": {
            k: v for k, v in json.loads(rows[0][13]).items() if v is not None and k != "timeout_s"
        },
        "model_args": {},
        "config": {"epochs": epochs, "epochs_reducer": ["mean"]},
        "packages": {"prefscope": _version()},
        "scorers": [{"name": n, "options": {}, "metrics": [], "metadata": {}} for n in score_names],
        "metadata": {
            "producer": "prefscope",
            "prefscope_label": label,
            "prefscope_model": model,
            "prefscope_run_ids": sorted({r[0] for r in rows}),
            "judges": spec0.get("judges", []),
        },
    }
    header: dict[str, Any] = {
        "version": LOG_VERSION,
        "status": "success" if all(r[16] == "ok" for r in rows) else "error",
        "eval": eval_spec,
        "plan": {
            "name": "plan",
            "steps": [{"solver": "prefscope", "params": {}, "params_passed": {}}],
            "config": {},
        },
        "results": results,
        "stats": {
            "started_at": created,
            "completed_at": finished,
            "model_usage": {inspect_model: usage},
            "role_usage": {},
            "connection_limit_history": [],
        },
        "invalidated": False,
        "tags": [],
        "metadata": {},
    }
    if header["status"] == "error":
        errors = sorted({r[17] for r in rows if r[17]})
        header["error"] = {
            "message": "; ".join(errors)[:2000] or "some answers did not finish",
            "traceback": "",
            "traceback_ansi": "",
        }
    return InspectLog(label, model, header, samples, summaries, reductions)


def _sample(
    db: Database,
    r: tuple,
    spec: dict,
    sid: str,
    epoch: int,
    inspect_model: str,
    judged: list,
    names: dict,
    clean: Cleaner,
) -> tuple[dict, dict[str, float]]:
    steps = load_prompt_steps(db, r[0])
    step = next((s for s in steps if s.name == r[14]), steps[-1] if steps else None)
    sent = [{"role": m.role, "content": clean(m.content), "source": "input"} for m in (step.messages if step else [])]
    answer = clean(r[15] or "")
    out_msg = {"role": "assistant", "content": answer, "source": "generate", "model": r[12]}
    usage = _usage(r[18], r[19])
    scores: dict[str, dict] = {}
    values: dict[str, float] = {}
    unparsed: list[dict] = []
    for key, j in judged:  # ordered by id: a later judgment on the same column wins, as in the CSV
        meta = {
            "kind": j[1],
            "dimension": j[2],
            "judge_model": j[3],
            "source": key.source,
            "scale_min": j[7],
            "scale_max": j[8],
            "prompt_version": j[11],
        }
        if not j[10] or j[6] is None:
            unparsed.append({**meta, "error": clean(j[12] or ""), "raw": clean(j[13] or "")})
            continue
        name = names[key]
        scores[name] = {"value": j[6], "explanation": clean(j[9] or ""), "metadata": meta, "history": []}
        values[name] = float(j[6])
    metadata = {
        "user_id": r[4],
        "query_id": r[5],
        "query_kind": r[23],
        "expression_type": r[6],
        "context": r[7],
        "seed": r[8],
        "method": r[9],
        "turns": spec.get("turns"),
        "evidence_depth": spec.get("evidence_depth"),
        "repeat": spec.get("repeat") or 0,
        "run_id": r[0],
        "response_id": r[11],
        "step": r[14],
        "prefscope_model": r[12],
    }
    if unparsed:
        metadata["prefscope_unparsed"] = unparsed
    sample = {
        "id": sid,
        "epoch": epoch,
        "input": sent,
        "target": "",
        "messages": [*sent, out_msg],
        "output": {
            "model": inspect_model,
            "choices": [{"message": out_msg, "stop_reason": "stop" if r[16] == "ok" else "unknown"}],
            "completion": answer,
            "usage": usage,
            **({"time": r[22] / 1000} if r[22] is not None else {}),
        },
        "scores": scores,
        "metadata": metadata,
        "store": {},
        "events": [],
        "model_usage": {inspect_model: usage},
        "role_usage": {},
        "started_at": r[20],
        "completed_at": r[21],
        "attachments": {},
        "uuid": r[11],
    }
    if r[16] != "ok":
        sample["error"] = {"message": r[17] or r[16], "traceback": "", "traceback_ansi": ""}
    return sample, values


def _summary(s: dict) -> dict:
    out = {
        k: s[k] for k in ("id", "epoch", "input", "target", "scores", "metadata", "model_usage", "role_usage", "uuid")
    }
    out.update(completed=True, message_count=len(s["messages"]))
    return out


def _eval_score(name: str, reduced: list[dict], total: int) -> dict:
    values = [x["value"] for x in reduced]
    n = len(values)
    mean = sum(values) / n if n else 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    metrics: dict[str, dict[str, Any]] = {"mean": {"name": "mean", "value": mean, "params": {}}}
    if n > 1:
        metrics["stderr"] = {"name": "stderr", "value": sd / math.sqrt(n), "params": {}}
    return {
        "name": name,
        "scorer": name,
        "reducer": "mean",
        "scored_samples": n,
        "unscored_samples": total - n,
        "params": {},
        "metrics": metrics,
    }


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prefscope")
    except PackageNotFoundError:  # pragma: no cover - a source checkout that was never installed
        return "0"


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def write_json(log: InspectLog, fh: IO[str]) -> None:
    """The whole log as one JSON object (Inspect's ``.json`` container)."""
    json.dump(log.as_json(), fh, ensure_ascii=False, indent=1)


def write_eval(log: InspectLog, fh: IO[bytes]) -> None:
    """Inspect's ``.eval`` container: ``samples/<id>_epoch_<n>.json``, ``summaries.json``,
    ``reductions.json``, ``_journal/start.json`` and ``header.json`` last, DEFLATE-compressed."""
    spec, plan = log.header["eval"], log.header["plan"]
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("_journal/start.json", _dump({"version": LOG_VERSION, "eval": spec, "plan": plan}))
        for s in log.samples:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", _dump(s))
        z.writestr("reductions.json", _dump(log.reductions))
        z.writestr("summaries.json", _dump(log.summaries))
        z.writestr("header.json", _dump(log.header))
