"""Inspect (``inspect_ai``) evaluation logs: ``.eval`` (a ZIP of JSON members) or ``.json``.

Reference: ../shared/reference/formats/inspect_ai/FORMAT.md (checked against inspect-ai 0.3.285).
Read natively, without ``inspect_ai``:

* ``.eval``: ``header.json`` (or ``_journal/start.json`` for a log that never finished) and every
  ``samples/<id>_epoch_<n>.json`` (the last member of a name wins, as in Inspect). Members may be
  STORED, DEFLATE or **Zstandard** (ZIP method 93, what Inspect writes since 0.3.206); zstd needs
  the ``zstandard`` package (installed with ``inspect-ai``; without it such a log is refused,
  naming the member). Uncompressed sizes count against ``max_bytes``.
* one answer per (sample id, epoch): the answer is ``output.completion``, else the last assistant
  message; the messages sent are ``input`` (a string is one user message), content parts
  flattened to their ``text`` parts; tool and other roles are kept as notes, not messages.
* every ``scores`` entry is a :class:`~core.results.model.RecordedScore` of judge ``<scorer>``
  (stored as ``recorded:<scorer>``): numbers as they are, booleans 1/0, Inspect's ``C``/``I``/``P``/
  ``N`` as 1/0/0.5/0 and ``yes``/``no``/``true``/``false`` as 1/0 (its ``accuracy`` mapping), a
  ``{key: value}`` dict as one score per key (dimension ``<scorer>.<key>``); anything else is kept
  with no score. A score a prefscope export wrote (its ``metadata`` names kind, dimension and
  judge model) comes back as that judge's kind and dimension, judge ``<judge model>``.
* linking: ``metadata.user_id`` + ``metadata.query_id`` (what prefscope's export writes) name the
  stored user and query; otherwise, and until that user is imported, the answer goes on a
  placeholder user ``inspect-<task>-<sample id>`` whose one open query is the sample's question.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path
from typing import Any

from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES
from core.model import UserBundle
from core.plan import Message
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport
from core.results.placeholders import placeholder_user

NAME = "inspect"
_ZSTD = 93
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def detect(path: Path) -> bool:
    try:
        if path.is_dir():
            return False
        suffix = path.suffix.lower()
        if suffix == ".eval":
            if not zipfile.is_zipfile(path):
                return False
            with zipfile.ZipFile(path) as z:
                names = set(z.namelist())
            return "header.json" in names or "_journal/start.json" in names
        if suffix == ".json":
            with path.open("rb") as fh:
                head = fh.read(4096).decode("utf-8", "replace")
            return head.lstrip().startswith("{") and '"eval"' in head and '"version"' in head
    except (OSError, zipfile.BadZipFile):
        return False
    return False


# -- containers ---------------------------------------------------------------------------------
class _Budget:
    def __init__(self, src: str, max_bytes: int):
        self.src, self.left = src, max_bytes

    def take(self, n: int, member: str) -> None:
        self.left -= n
        if self.left < 0:
            raise FormatError(self.src, "the log is larger than the import limit (uncompressed)", path=member)


def _member(z: zipfile.ZipFile, info: zipfile.ZipInfo, raw: bytes, budget: _Budget) -> bytes:
    budget.take(info.file_size, info.filename)
    if info.compress_type != _ZSTD:
        return z.read(info)
    try:
        import zstandard
    except ImportError:
        raise FormatError(
            budget.src,
            "member is Zstandard-compressed (Inspect >= 0.3.206); install the `zstandard` package to read it",
            path=info.filename,
        ) from None
    # Local file header: 30 fixed bytes, then the name and the extra field, then the data.
    off = info.header_offset
    if raw[off : off + 4] != b"PK\x03\x04":
        raise FormatError(budget.src, "damaged ZIP member header", path=info.filename)
    start = (
        off
        + 30
        + int.from_bytes(raw[off + 26 : off + 28], "little")
        + int.from_bytes(raw[off + 28 : off + 30], "little")
    )
    data = raw[start : start + info.compress_size]
    out = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    if len(out) != info.file_size:
        raise FormatError(budget.src, "Zstandard member does not decompress to its recorded size", path=info.filename)
    return out


def _json(src: str, data: bytes, member: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(src, f"not JSON: {exc}", path=member) from None


def _read_eval(path: Path, max_bytes: int) -> tuple[dict, list[dict], bytes]:
    src = path.name
    raw = path.read_bytes()
    if len(raw) > max_bytes:
        raise FormatError(src, "the log is larger than the import limit")
    budget = _Budget(src, max_bytes)
    try:
        z = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise FormatError(src, f"not a ZIP archive: {exc}") from None
    with z:
        last: dict[str, zipfile.ZipInfo] = {}
        for info in z.infolist():
            last[info.filename] = info  # a member written twice: the last one wins
        head_name = "header.json" if "header.json" in last else "_journal/start.json"
        if head_name not in last:
            raise FormatError(src, "no header.json (nor _journal/start.json): not an Inspect log")
        header = _json(src, _member(z, last[head_name], raw, budget), head_name)
        samples = []
        for name, info in last.items():
            if name.startswith("samples/") and name.endswith(".json"):
                samples.append(_json(src, _member(z, info, raw, budget), name))
    return header, samples, raw


def _read(path: Path, max_bytes: int) -> tuple[dict, list[dict], str]:
    src = path.name
    if path.suffix.lower() == ".eval":
        header, samples, raw = _read_eval(path, max_bytes)
    else:
        raw = path.read_bytes()
        if len(raw) > max_bytes:
            raise FormatError(src, "the log is larger than the import limit")
        header = _json(src, raw, "")
        if not isinstance(header, dict):
            raise FormatError(src, "expected an EvalLog object")
        samples = header.get("samples") or []
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise FormatError(src, "missing the EvalLog's `eval` object", path="eval")
    if not isinstance(samples, list):
        raise FormatError(src, "expected a list", path="samples")
    return header, samples, hashlib.sha256(raw).hexdigest()


# -- samples ------------------------------------------------------------------------------------
def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _messages(raw: Any) -> tuple[list[Message], list[str]]:
    if isinstance(raw, str):
        return [Message(role="user", content=raw)], []
    out, dropped = [], []
    for m in raw if isinstance(raw, list) else []:
        role = m.get("role") if isinstance(m, dict) else None
        if role in ("system", "user", "assistant"):
            out.append(Message(role=role, content=_text(m.get("content"))))
        else:
            dropped.append(str(role))
    return out, dropped


def _answer(sample: dict) -> str:
    output = sample.get("output") or {}
    if isinstance(output, dict):
        if output.get("completion"):
            return str(output["completion"])
        for choice in output.get("choices") or []:
            if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                return _text(choice["message"].get("content"))
    for m in reversed(sample.get("messages") or []):
        if isinstance(m, dict) and m.get("role") == "assistant":
            return _text(m.get("content"))
    return ""


def _value(v: Any) -> float | None:
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if s in _LETTERS:
            return _LETTERS[s]
        if s.lower() in _WORDS:
            return _WORDS[s.lower()]
        try:
            return float(s)
        except ValueError:
            return None
    return None


def _recorded(name: str, score: dict) -> list[RecordedScore]:
    if not isinstance(score, dict):
        return []
    meta = _obj(score.get("metadata"))
    value = score.get("value")
    common: dict[str, Any] = {
        "rationale": str(score.get("explanation") or ""),
        "meta": {"scorer": name, **({"answer": score["answer"]} if score.get("answer") is not None else {})},
    }
    if meta.get("kind") and meta.get("dimension") and meta.get("judge_model"):  # written by prefscope
        return [
            RecordedScore(
                kind=str(meta["kind"]),
                dimension=str(meta["dimension"]),
                score=_value(value),
                scale_min=meta.get("scale_min"),
                scale_max=meta.get("scale_max"),
                judge=str(meta["judge_model"]),
                raw=json.dumps(value),
                **common,
            )
        ]
    if isinstance(value, dict):
        return [
            RecordedScore(
                kind="inspect", dimension=f"{name}.{k}", score=_value(v), judge=name, raw=json.dumps(v), **common
            )
            for k, v in value.items()
        ]
    letter = isinstance(value, str) and value.strip() in _LETTERS
    return [
        RecordedScore(
            kind="inspect",
            dimension=name,
            score=_value(value),
            scale_min=0.0 if letter else None,
            scale_max=1.0 if letter else None,
            judge=name,
            raw=value if isinstance(value, str) else json.dumps(value),
            **common,
        )
    ]


def _placeholder(uid: str, qid: str, question: str, task: str, src: str, sid: str) -> UserBundle:
    return placeholder_user(NAME, uid, qid, sid, question, source_file=src, meta={"task": task, "sample_id": sid})


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the inspect results format reads one log file, not a folder")
    src = path.name
    header, samples, sha = _read(path, max_bytes)
    spec = header["eval"]
    task = str(spec.get("task") or "inspect")
    run_meta = _obj(spec.get("metadata"))
    model = str(run_meta.get("prefscope_model") or spec.get("model") or "unknown")
    result = ResultsImport(format=NAME)
    ordered = sorted(
        (s for s in samples if isinstance(s, dict)), key=lambda s: (str(s.get("id")), int(s.get("epoch") or 1))
    )
    if len(ordered) < len(samples):
        raise FormatError(src, "a sample is not an object", path="samples")
    for i, s in enumerate(ordered):
        if "id" not in s:
            raise FormatError(src, "sample without an id", record=f"sample {i + 1}", path="id")
        sid, epoch = str(s["id"]), int(s.get("epoch") or 1)
        label = f"sample {sid} epoch {epoch}"
        meta = _obj(s.get("metadata"))
        sent, dropped = _messages(s.get("input"))
        question = next((m.content for m in reversed(sent) if m.role == "user"), "")
        recorded = [r for name, sc in sorted(_obj(s.get("scores")).items()) for r in _recorded(name, sc)]
        linked = isinstance(meta.get("user_id"), str) and isinstance(meta.get("query_id"), str)
        uid = meta["user_id"] if linked else _SAFE.sub("-", f"inspect-{task}-{sid}")
        qid = meta["query_id"] if linked else _SAFE.sub("-", sid)
        notes = [f"Sample {sid}, epoch {epoch} of the Inspect log {src} (task {task}); prefscope did not send it."]
        if dropped:
            notes.append(f"Input messages of roles {', '.join(sorted(set(dropped)))} are not kept.")
        if recorded:
            notes.append(
                f"Its scores were recorded by the log's scorers ({', '.join(sorted({r.judge for r in recorded}))})."
            )
        result.answers.append(
            ImportedAnswer(
                format=NAME,
                source_file=src,
                source_sha256=sha,
                record=i,
                record_label=label,
                user_id=uid,
                query_id=qid,
                fallback=_placeholder(uid, qid, question, task, src, sid),
                fallback_query_id=qid,
                query_text=question,
                model=model,
                method=str(meta.get("method") or task),
                context=str(meta.get("context") or "imported"),
                expression_type=meta.get("expression_type") if isinstance(meta.get("expression_type"), int) else None,
                turns=meta.get("turns") if isinstance(meta.get("turns"), int) else None,
                answer=_answer(s),
                messages=sent or None,
                prompt_notes=notes,
                recorded=recorded,
                meta={"inspect_sample_id": sid, "epoch": epoch, "task": task, **{k: v for k, v in meta.items()}},
            )
        )
    if not ordered:
        result.notes.append(f"{src}: the log holds no samples")
    return result
