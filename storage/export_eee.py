"""Export stored runs as Every Eval Ever (EEE) 0.3.0: per model, an aggregate record
``<uuid>.json`` and its instance sidecar ``<uuid>_samples.jsonl`` (reference:
``formats/every_eval_ever/FORMAT.md``; the schema is vendored in ``tests/fixtures/eee/``)::

    written = export_eee(db, "out/", RunFilter(labels=["my-batch"]))
    # out/data/<collection>/<developer>/<model>/<uuid>.json + <uuid>_samples.jsonl

Rows come from :mod:`storage.export` (``wide_rows`` for answers, ``long_rows`` for judgments, the
same :class:`RunFilter`), so the selection and the secret redaction are the CSV/JSONL export's.

Mapping: one ``evaluation_results[]`` entry per (judge kind, dimension, judge) with its mean score
on the judge's scale (``score_type`` continuous, bounds = the judgments' scale) and its standard
error; LLM judges as ``llm_scoring`` (prefscope does not keep the judge prompt text with a
judgment, so ``input_prompt`` names the judge kind and prompt version instead). One instance line
per (answer × judgment), ``multi_turn`` with the exact messages sent plus the answer;
``is_correct`` = score at or above the middle of its scale. prefscope's ids (user, query, run,
response, judge kind/dimension) are in each line's ``metadata`` so ``import-results`` links back.
Answers without a usable judgment are left out (EEE requires a score per line).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from core.judges.aggregate import RECORDED_PREFIX
from storage.export import Cleaner, RunFilter, long_rows, wide_rows
from storage.output_files import replace_atomically
from storage.prompt_messages import load_prompt_steps

SCHEMA_VERSION = "0.3.0"
SAMPLES_SUFFIX = "_samples.jsonl"


@dataclass
class EeeFile:
    """One written pair: the model, its aggregate and sidecar paths, and the sidecar's line count."""

    model: str
    aggregate: Path
    samples: Path
    rows: int


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("prefscope")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return "unknown"


def _seg(value: str) -> str:
    """A path segment / id part the datastore layout accepts (no slashes, no spaces)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", value).strip("_") or "unknown"


def _epoch(iso: str | None) -> str:
    if not iso:
        return "0"
    try:
        return str(int(dt.datetime.fromisoformat(iso).timestamp()))
    except ValueError:
        return "0"


def _model_info(model: str, demo: bool = False) -> dict:
    provider, _, name = model.partition(":")
    if not name:
        provider, name = "unknown", model
    return {
        "name": name,
        "id": f"{provider}/{name}",
        "developer": provider,
        "inference_platform": provider,
        "additional_details": {
            "deployment_type": "self_deployed" if demo else "unknown",
            "model_availability": "unknown",
            "prefscope_model": model,
        },
    }


def export_eee(
    db: Database,
    out: str | Path,
    f: RunFilter | None = None,
    *,
    organization: str = "unknown",
    now: int | None = None,
    environ: dict[str, str] | None = None,
    protect: Iterable[str | Path] = (),
    force: bool = False,
) -> list[EeeFile]:
    """Write one aggregate + sidecar per model the filter selects; returns what was written.

    ``out`` is a folder (the datastore layout ``data/<collection>/<developer>/<model>/`` is made
    under it) or, for a single model, an aggregate file name ending in ``.json`` (the sidecar is
    written next to it as ``<stem>_samples.jsonl``). Raises ValueError when nothing judged is
    selected, or a ``.json`` file is asked for several models."""
    f = f or RunFilter()
    clean = Cleaner(neutralise=False, environ=environ)
    cols, rows = wide_rows(db, f)
    answers = [dict(zip(cols, clean.row(r))) for r in rows]
    lcols, lrows = long_rows(db, f)
    latest: dict[str, dict[tuple, dict]] = defaultdict(dict)
    for r in lrows:
        j = dict(zip(lcols, clean.row(r)))
        if j["response_id"] is None or j["score"] is None or not j["parse_ok"]:
            continue
        latest[j["response_id"]][(j["kind"], j["dimension"], j["source"], j["judge_model"])] = j  # latest wins
    by_model: dict[str, list[dict]] = defaultdict(list)
    for a in answers:
        if latest.get(a["response_id"]):
            by_model[a["model"]].append(a)
    if not by_model:
        raise ValueError("no judged answers selected: EEE records need a score per answer (run `prefscope judge`)")
    out = Path(out)
    single = out.suffix.lower() == ".json"
    if single and len(by_model) > 1:
        raise ValueError(f"{len(by_model)} models selected; give a folder (one record per model) or filter one model")
    stamp = str(now if now is not None else int(time.time()))
    written = []
    for model, mine in by_model.items():
        target = _Target(out, single, list(protect), force)
        written.append(_write_model(db, target, model, mine, latest, organization, stamp, clean))
    return written


@dataclass(frozen=True)
class _Target:
    """Where the records go: a folder, or one ``.json`` aggregate (``single``); what must never be
    written onto (the database) and whether an existing file may be replaced."""

    out: Path
    single: bool
    protect: list
    force: bool


def _write_model(
    db: Database,
    target: _Target,
    model: str,
    answers: list[dict],
    latest: dict[str, dict[tuple, dict]],
    organization: str,
    stamp: str,
    clean: Cleaner,
) -> EeeFile:
    info = _model_info(model, bool(answers[0]["is_demo"]))
    labels = sorted({a["label"] for a in answers if a["label"]})
    collection = _seg(labels[0]) if len(labels) == 1 else "prefscope"
    started = min(a["created_at"] or "" for a in answers)
    evaluation_id = f"{collection}/{info['id']}/{_epoch(started)}"
    digest = hashlib.sha256("\n".join([evaluation_id, *sorted(a["response_id"] for a in answers)]).encode()).digest()
    file_uuid = str(uuid.UUID(bytes=digest[:16], version=4))  # deterministic: re-exports are the same file
    repo_dir = f"data/{collection}/{_seg(info['developer'])}/{_seg(info['name'])}"
    out, protect, force = target.out, target.protect, target.force
    if target.single:
        agg_path, side_path = out, out.with_name(out.stem + SAMPLES_SUFFIX)
    else:
        agg_path = out / repo_dir / f"{file_uuid}.json"
        side_path = agg_path.with_name(file_uuid + SAMPLES_SUFFIX)
    agg_path.parent.mkdir(parents=True, exist_ok=True)

    metrics: dict[tuple, dict] = {}
    for a in answers:
        for key, j in latest[a["response_id"]].items():
            metrics.setdefault(key, j)
    result_ids = {key: _seg(".".join(str(k) for k in key if k))[:100] for key in metrics}
    scores: dict[tuple, list[float]] = defaultdict(list)
    steps = _answer_steps(db, [a["response_id"] for a in answers])
    lines = []
    for a in answers:
        messages = _messages(db, a["run_id"], steps.get(a["response_id"]), clean)
        raw_prompt = "\n".join(m["content"] for m in messages if m["role"] in ("system", "user"))
        messages.append({"turn_idx": len(messages), "role": "assistant", "content": a["text"] or ""})
        reference = _references(db, a)
        for key, j in latest[a["response_id"]].items():
            score = float(j["score"])
            scores[key].append(score)
            lo, hi = _bounds(metrics[key], [score])
            line = {
                "schema_version": SCHEMA_VERSION,
                "evaluation_id": evaluation_id,
                "model_id": info["id"],
                "evaluation_name": _evaluation_name(collection, key),
                "evaluation_result_id": result_ids[key],
                "sample_id": a["response_id"],
                "sample_hash": hashlib.sha256(
                    json.dumps(
                        {"raw": raw_prompt, "reference": reference}, sort_keys=True, separators=(",", ":")
                    ).encode()
                ).hexdigest(),
                "interaction_type": "multi_turn",
                "input": {"raw": raw_prompt, "reference": reference},
                "output": None,
                "messages": messages,
                "answer_attribution": [
                    {
                        "turn_idx": len(messages) - 1,
                        "source": f"messages[{len(messages) - 1}].content",
                        "extracted_value": str(j["score"]),
                        "extraction_method": "llm_judge" if j["source"] == "llm" else str(j["source"]),
                        "is_terminal": True,
                    }
                ],
                "evaluation": {
                    "score": score,
                    "is_correct": score >= (lo + hi) / 2,
                    "num_turns": len(messages),
                },
                "metadata": _strings(
                    {
                        "prefscope_user_id": a["user_id"],
                        "prefscope_query_id": a["query_id"],
                        "prefscope_run_id": a["run_id"],
                        "prefscope_response_id": a["response_id"],
                        "prefscope_kind": j["kind"],
                        "prefscope_dimension": j["dimension"],
                        "prefscope_judge": _judge_name(j["judge_model"]),
                        "prefscope_source": j["source"],
                        "prefscope_rationale": j["rationale"],
                        "method": a["method"],
                        "context": a["context"],
                        "label": a["label"],
                        "expression_type": a["expression_type"],
                        "turns": a["turns"],
                        "repeat": a["repeat"],
                        "query_kind": a["query_kind"],
                    }
                ),
            }
            if a["input_tokens"] is not None and a["output_tokens"] is not None:
                line["token_usage"] = {
                    "input_tokens": int(a["input_tokens"]),
                    "output_tokens": int(a["output_tokens"]),
                    "total_tokens": int(a["input_tokens"]) + int(a["output_tokens"]),
                }
            perf = {k: float(a[c]) for k, c in (("latency_ms", "duration_ms"), ("time_to_first_token_ms", "ttft_ms"))}
            if a["duration_ms"] is not None or a["ttft_ms"] is not None:
                line["performance"] = {k: v for k, v in perf.items() if not math.isnan(v)}
            if a["error"]:
                line["error"] = str(a["error"])
            lines.append(line)
    body = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    # the sidecar first (the aggregate carries its checksum); each whole or not at all, never onto
    # the database or an existing file unless forced
    with replace_atomically(side_path, binary=True, protect=protect, force=force) as fh:
        fh.write(body)

    results = [_result(collection, key, result_ids[key], metrics[key], scores[key], started) for key in metrics]
    methods = sorted({str(a["method"]) for a in answers})
    contexts = sorted({str(a["context"]) for a in answers})
    aggregate = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": _epoch(started),
        "retrieved_timestamp": stamp,
        "source_metadata": {
            "source_name": "prefscope",
            "source_type": "evaluation_run",
            "source_organization_name": organization,
            "evaluator_relationship": "third_party",
        },
        "eval_library": {"name": "prefscope", "version": _version()},
        "model_info": info,
        "evaluation_results": [
            {
                **r,
                "generation_config": {
                    "additional_details": {"methods": ",".join(methods), "contexts": ",".join(contexts)}
                },
            }
            for r in results
        ],
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": f"{repo_dir}/{file_uuid}{SAMPLES_SUFFIX}",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(body).hexdigest(),
            "total_rows": len(lines),
        },
    }
    with replace_atomically(agg_path, protect=protect, force=force) as fh:
        fh.write(json.dumps(aggregate, ensure_ascii=False, indent=2) + "\n")
    return EeeFile(model=model, aggregate=agg_path, samples=side_path, rows=len(lines))


def _answer_steps(db: Database, response_ids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k in range(0, len(response_ids), 500):
        chunk = response_ids[k : k + 500]
        sql = f"SELECT id, step FROM responses WHERE id IN ({','.join('?' * len(chunk))})"
        out.update({rid: step for rid, step in db.execute(sql, chunk)})
    return out


def _messages(db: Database, run_id: str, step: str | None, clean: Cleaner) -> list[dict]:
    """The exact messages of the step whose reply is the answer (the last step when unnamed)."""
    steps = load_prompt_steps(db, run_id)
    chosen = next((s for s in steps if s.name == step), steps[-1] if steps else None)
    if chosen is None:
        return []
    return [{"turn_idx": i, "role": m.role, "content": clean(m.content)} for i, m in enumerate(chosen.messages)]


def _references(db: Database, a: dict) -> list[str]:
    """The query's gold answer when it has one (MCQ letter, benchmark answer), else nothing."""
    row = db.execute(
        "SELECT answer FROM queries WHERE user_id = ? AND id = ?", [a["user_id"], a["query_id"]]
    ).fetchone()
    return [str(row[0])] if row and row[0] else []


def _strings(values: dict) -> dict[str, str]:
    return {k: str(v) for k, v in values.items() if v is not None and v != ""}


def _judge_name(judge_model: str | None) -> str:
    name = judge_model or "unknown"
    return name[len(RECORDED_PREFIX) :] if name.startswith(RECORDED_PREFIX) else name


def _evaluation_name(collection: str, key: tuple) -> str:
    return f"{collection}.{key[0]}.{key[1]}"


def _bounds(j: dict, seen: list[float]) -> tuple[float, float]:
    lo = j["scale_min"] if j["scale_min"] is not None else min([0.0, *seen])
    hi = j["scale_max"] if j["scale_max"] is not None else max([1.0, *seen])
    return float(lo), float(hi)


def _result(collection: str, key: tuple, result_id: str, j: dict, scores: list[float], started: str) -> dict:
    kind, dimension, source, judge = key
    lo, hi = _bounds(j, scores)
    n = len(scores)
    mean = sum(scores) / n
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / (n - 1)) if n > 1 else 0.0
    config: dict = {
        "evaluation_description": f"Mean {dimension} score of prefscope's {kind} judge ({source}: {judge})",
        "metric_id": f"prefscope.{_seg(kind)}.{_seg(dimension)}",
        "metric_name": f"{kind} {dimension}",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": lo,
        "max_score": hi,
    }
    if source == "llm" and judge:
        config["llm_scoring"] = {
            "judges": [
                {
                    "model_info": _model_info(judge),
                    **({"temperature": j["temperature"]} if j["temperature"] is not None else {}),
                }
            ],
            "input_prompt": f"prefscope judge '{kind}', prompt version {j['prompt_version'] or 'unknown'} "
            "(the prompt text is in prefscope's judge package, not stored with the judgment)",
        }
    return {
        "evaluation_result_id": result_id,
        "evaluation_name": _evaluation_name(collection, key),
        "source_data": {
            "source_type": "other",
            "dataset_name": collection,
            "additional_details": {"judge_source": str(source), "judge_model": str(judge)},
        },
        "evaluation_timestamp": _epoch(started),
        "metric_config": config,
        "score_details": {
            "score": mean,
            "uncertainty": {
                "standard_error": {"value": sd / math.sqrt(n), "method": "analytic"},
                "standard_deviation": sd,
                "num_samples": n,
            },
        },
    }
