"""PrefEval generation results: what ``benchmark_generation.py`` writes, and the SFT folder's files.

Both are one JSON array per (model, topic, method, inter turns), the benchmark's explicit records
(``preference``, ``question``, ``explanation``) each with the model's answers added:
``response_to_pref`` (its reply to the bare preference), ``response_to_q`` (the judged answer; for
the self-critic method the revised one, next to ``zero_shot_response_to_q`` and ``self_critic``).

Where the method and the inter-turn count come from (PrefEval @50795054, ``utils/explicit_utils.py``
``load_files_explicit``): the path is ``…/<task>/<topic>/<model>_<topic>_<N>interturn.json`` with
N = ``--inter_turns``. The SFT files (``SFT/single_pref_remind/<topic>/mistral8x7b_<topic>_<N>turn.json``)
come from the earlier version of that function, which named files ``{inter_turns + 2}turn`` (the
preference exchange and the question count as turns), so ``2turn`` is 0 inter turns and ``70turn``
is 68; ``single_pref_remind`` is the reminder method on single (explicit) preferences (SFT readme).
Both numbers are kept: ``turns`` = inter turns, ``meta["file_turns"]`` = the file's own label.

MCQ results (``benchmark_classification.py``, ``…/mcq_results/<task>/<topic>/``; records with
``shuffled_options`` / ``correct_idx``) are answers to the stored MCQ query of the same preference and
question, read by PrefEval's parser: see :mod:`results_mcq` for what they record (options as shown,
prefill, PrefEval's own verdict).

Records without ``response_to_q`` are tasks the script had not reached; they are skipped with a note.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from core.benchmarks.prefeval.results_mcq import is_mcq, mcq_fields, mcq_query
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import extras, first_record, get, text
from core.model import UserBundle
from core.results.model import ImportedAnswer, ResultsImport

NAME = "prefeval"
#: ``<model>_<topic>_<N>interturn.json`` (benchmark_generation.py) or ``…_<N>turn.json`` (older, SFT).
_FILE = re.compile(r"^(?P<model>[^_]+)_(?P<topic>.+)_(?P<n>\d+)(?P<inter>inter)?turn\.json$")
#: PrefEval ``--task`` (folder name) -> prefscope method.
_METHODS = {
    "zero-shot": "prefeval-zero-shot",
    "remind": "prefeval-remind",
    "single_pref_remind": "prefeval-remind",
    "cot": "prefeval-cot",
    "selfcritic": "self-critic",
}
_RAG = re.compile(r"^rag_(\d+)$")
_KNOWN = frozenset({"preference", "question", "explanation", "response_to_pref", "response_to_q"})


def detect(path: Path) -> bool:
    files = _files(path) if path.is_dir() else [path]
    if not files:
        return False
    first = files[0]
    if _FILE.match(first.name):
        return True
    rec = first_record(first)
    return isinstance(rec, list) and bool(rec) and isinstance(rec[0], dict) and "response_to_q" in rec[0]


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if _FILE.match(p.name))


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    result = ResultsImport(format=NAME)
    files = _files(path) if path.is_dir() else [path]
    if not files:
        raise FormatError(path.name, "no PrefEval result files (<model>_<topic>_<N>interturn.json) in this folder")
    for f in files:
        shown = str(f.relative_to(path)) if path.is_dir() else f.name
        _load_file(f, shown, max_bytes, result)
    return result


def _load_file(path: Path, shown: str, max_bytes: int, result: ResultsImport) -> None:
    raw = read_text(path, max_bytes)
    sha = hashlib.sha256(raw.encode()).hexdigest()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FormatError(shown, f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})") from exc
    if not isinstance(data, list):
        raise FormatError(shown, f"expected a JSON array of records, got {type(data).__name__}")
    layout = _layout(path)
    skipped = 0
    for i, rec in enumerate(data):
        label = f"record {i}"
        if not isinstance(rec, dict):
            raise FormatError(shown, f"expected an object, got {type(rec).__name__}", record=label)
        preference = text(shown, rec, "preference", "", label, non_empty=True)
        question = text(shown, rec, "question", "", label, non_empty=True)
        explanation = text(shown, rec, "explanation", "", label, required=False) or ""
        reply = text(shown, rec, "response_to_pref", "", label, required=False)
        if "response_to_q" not in rec or rec["response_to_q"] is None:
            skipped += 1
            continue
        answer = text(shown, rec, "response_to_q", "", label)
        for key in ("zero_shot_response_to_q", "self_critic", "first_choice"):
            get(shown, rec, key, str, "", label, required=False)
        topic = layout["topic"]
        mcq = mcq_fields(shown, rec, label, layout, answer) if is_mcq(rec) else None
        shown_mcq = (mcq["options"], mcq["gold"]) if mcq else None
        fallback, query_id = _fallback(topic, preference, question, explanation, reply, shown, shown_mcq)
        turns = layout["turns"]
        result.answers.append(
            ImportedAnswer(
                format=NAME,
                source_file=shown,
                source_sha256=sha,
                record=i,
                record_label=label,
                match={"preference": preference, "question": question, **({"kind": "mcq"} if mcq else {})},
                fallback=fallback,
                fallback_query_id=query_id,
                query_text=question,
                model=layout["model"],
                method=layout["method"],
                method_options=layout["method_options"],
                context="prefeval-turns" if turns is not None else "imported",
                turns=turns,
                expression_type=layout["expression_type"],
                answer=mcq["answer"] if mcq else answer,
                answer_format=mcq["answer_format"] if mcq else None,
                messages=mcq["messages"] if mcq else None,
                recorded=mcq["recorded"] if mcq else [],
                prompt_notes=_notes(layout, shown, i) + (mcq["notes"] if mcq else []),
                meta={
                    "prefeval_task": layout["task"],
                    "prefeval_form": layout["form"],
                    "file_turns": layout["file_turns"],
                    "topic": topic,
                    **({"response_to_pref": reply} if reply is not None else {}),
                    **({"response_to_q": answer} if mcq and mcq["answer"] != answer else {}),
                    **extras(rec, _KNOWN),
                },
            )
        )
    if skipped:
        result.notes.append(f"{shown}: {skipped} record(s) without response_to_q (not generated yet) skipped")


def _layout(path: Path) -> dict:
    """Model, topic, method and inter turns from the file's name and folders (see the module doc)."""
    m = _FILE.match(path.name)
    model, topic, n, inter = (m["model"], m["topic"], int(m["n"]), bool(m["inter"])) if m else (None, None, None, False)
    folder = path.parent.name
    if folder and f"_{folder}_" in path.name:
        # The topic folder disambiguates model names that contain underscores.
        model, topic = path.name.split(f"_{folder}_", 1)[0], folder
    task = next((p for p in reversed(path.parent.parts) if p in _METHODS or _RAG.match(p)), None)
    rag = _RAG.match(task) if task else None
    method = "prefeval-rag" if rag else _METHODS.get(task or "", "unknown")
    turns = None if n is None else (n if inter else max(n - 2, 0))
    parts = set(path.parts)
    form = "implicit" if "implicit" in parts else "explicit"
    # prefscope's mapping of PrefEval's forms (format.py): explicit 1, persona 2, choice 3.
    expression = 1 if form == "explicit" else 2 if "persona" in parts else 3 if "choice" in parts else None
    return {
        "model": model or "unknown",
        "topic": topic or "unknown",
        "task": task,
        "method": method,
        "method_options": {"k": int(rag.group(1))} if rag else {},
        "turns": turns,
        "file_turns": None if n is None or inter else n,
        "form": form,
        "expression_type": expression,
    }


def _fallback(
    topic: str,
    preference: str,
    question: str,
    explanation: str,
    reply: str | None,
    shown: str,
    mcq: tuple[list[str], str] | None = None,
) -> tuple[UserBundle, str]:
    """A user of its own for a record no stored PrefEval user matches: the preference turn, the
    model's reply to it, and the question as an open query whose gold is that preference, or (an
    MCQ record) as the MCQ the model was shown, with its letter. The id depends only on the texts
    (and the shown options), so every file's copy of the record lands on the same user."""
    shown_options = "\n".join(mcq[0]) if mcq else ""
    digest = hashlib.sha256(f"{preference}\n{question}{shown_options}".encode()).hexdigest()[:10]
    uid = f"prefeval-results-{topic}-{digest}"
    pid, sid, qid = f"{uid}-pref", f"{uid}-explicit", f"{uid}-mcq" if mcq else f"{uid}-open"
    query = (
        mcq_query(qid, question, mcq[0], mcq[1], pid, uid).model_dump()
        if mcq
        else {"id": qid, "kind": "open", "text": question, "preference_id": pid, "group": uid}
    )
    turns = [{"role": "user", "content": preference}]
    if reply:
        turns.append({"role": "assistant", "content": reply})
    bundle = UserBundle.model_validate(
        {
            "user": {
                "id": uid,
                "name": f"PrefEval {topic} (from results)",
                "source": "prefeval",
                "meta": {"topic": topic, "from_results": shown},
            },
            "sessions": [
                {"id": sid, "kind": "preference", "expression_type": 1, "preference_ids": [pid], "turns": turns}
            ],
            "preferences": [{"id": pid, "text": preference, "topic": topic, "evidence": {1: [sid]}}],
            "queries": [{**query, "explanation": explanation}],
        }
    )
    return bundle, qid


def _notes(layout: dict, shown: str, index: int) -> list[str]:
    turns = layout["turns"]
    middle = (
        f"the first {2 * turns} messages of PrefEval's filtered_inter_turns.json ({turns} inter turns), "
        if turns
        else ""
    )
    return [
        f"Recorded answer of {layout['model']} imported from {shown}, record {index}; prefscope did not send it.",
        f"PrefEval ({layout['task'] or 'unknown task'}, {layout['form']}) sent: the preference, the model's own "
        f"reply to it (response_to_pref), {middle}then the question with the method's modifiers. "
        "The file does not store the exact messages.",
    ]
