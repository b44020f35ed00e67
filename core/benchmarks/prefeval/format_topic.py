"""One PrefEval topic: its files' records, matched by index, checked, and built into one user each."""

from __future__ import annotations

import difflib

from pydantic import ValidationError

from core.benchmarks.prefeval.format_files import FORM_DIRS, NAME, VALID_TOPIC, stray_reason
from core.benchmarks.prefeval.format_mcq import mcq_orders
from core.formats import shapes
from core.formats.errors import FormatError, from_validation
from core.formats.reading import expect_type
from core.model import MCQ_LETTERS, Preference, Query, Session, Turn, UserBundle

EXPRESSION = {"explicit": 1, "persona-driven": 2, "choice-based": 3}
CHOICE_KEYS = ("query", "assistant_options", "user_selection", "assistant_acknowledgment")
CHOICE_ROLES = ("user", "assistant", "user", "assistant")
#: Below this word-level similarity two preference texts are different preferences.
SAME_PREFERENCE = 0.8


def topic_bundles(topic: str, files: dict[str, tuple[str, list]], notes: list[str]) -> list[UserBundle]:
    if not VALID_TOPIC.match(topic):
        raise FormatError(files[next(iter(files))][0], stray_reason(topic))
    sizes = {form: len(data) for form, (_, data) in files.items()}
    forms = [f for f in FORM_DIRS.values() if f in files]
    base = forms[0]
    for form in forms[1:]:
        if sizes[form] != sizes[base]:
            raise FormatError(
                files[form][0],
                f"has {sizes[form]} records but {files[base][0]} has {sizes[base]}; "
                "PrefEval files of one topic are matched record by record",
            )
    reworded: list[int] = []
    bundles = []
    records = [
        {form: _parse_record(form, files[form][0], files[form][1][i], i) for form in forms} for i in range(sizes[base])
    ]
    orders = mcq_orders(topic, [r["mcq"]["options"] for r in records]) if "mcq" in forms else []
    for i, parsed in enumerate(records):
        if _check_alignment(i, parsed, {f: files[f][0] for f in forms}):
            reworded.append(i)
        try:
            bundles.append(_bundle(topic, i, parsed, {f: files[f][0] for f in forms}, orders[i] if orders else None))
        except ValidationError as exc:  # a backstop: the checks above should leave nothing for the model
            raise from_validation(files[base][0], exc, record=f"record {i}") from exc
    _note_repeats(topic, records, notes)
    if reworded:
        shown = ", ".join(map(str, reworded[:10])) + (" …" if len(reworded) > 10 else "")
        notes.append(
            f"{topic}: {len(reworded)} record(s) ({shown}) word the preference slightly differently "
            f"across files; the wording in {files[base][0]} is the preference text, each session keeps its own"
        )
    return bundles


def _note_repeats(topic: str, records: list[dict[str, dict]], notes: list[str]) -> None:
    """Report records that repeat another's text; every record stays its own user (PrefEval's task i)."""
    for field in ("preference", "question"):
        seen: dict[str, list[int]] = {}
        for i, parsed in enumerate(records):
            seen.setdefault(next(iter(parsed.values()))[field].strip(), []).append(i)
        for text, idx in seen.items():
            if len(idx) > 1:
                short = text if len(text) <= 60 else text[:57] + "…"
                notes.append(
                    f"{topic}: records {', '.join(map(str, idx))} share the {field} {short!r}; "
                    "each is kept as its own user (records are matched by index, never deduplicated)"
                )


def _parse_record(form: str, source: str, rec: object, i: int) -> dict:
    record = f"record {i}"
    expect_type(source, rec, dict, "", record)
    assert isinstance(rec, dict)
    out: dict = {
        "preference": shapes.text(source, rec, "preference", "", record, non_empty=True),
        "question": shapes.text(source, rec, "question", "", record, non_empty=True),
        "explanation": shapes.text(source, rec, "explanation", "", record, required=False) or "",
    }
    if form == "mcq":
        options = shapes.string_list(source, rec, "classification_task_options", "", record)
        if not 2 <= len(options) <= len(MCQ_LETTERS):
            raise FormatError(
                source,
                f"expected 2 to {len(MCQ_LETTERS)} options, got {len(options)}",
                record=record,
                path="classification_task_options",
            )
        out["options"] = options
    elif form == "choice-based":
        conv = shapes.get(source, rec, "conversation", dict, "", record)
        out["turns"] = [
            (role, shapes.text(source, conv, key, "conversation", record))
            for key, role in zip(CHOICE_KEYS, CHOICE_ROLES)
        ]
        out["meta"] = {
            "implicit_query": shapes.text(source, rec, "implicit_query", "", record, required=False),
            "options": shapes.string_list(source, rec, "options", "", record, required=False),
            "aligned_op": shapes.text(source, rec, "aligned_op", "", record, required=False),
        }
    elif form == "persona-driven":
        out["persona"] = shapes.text(source, rec, "persona", "", record, required=False) or ""
        out["turns"] = _persona_turns(source, record, shapes.get(source, rec, "conversation", dict, "", record))
    return out


def _persona_turns(source: str, record: str, conv: dict) -> list[tuple[str, str]]:
    bad = [k for k in conv if not k.isdigit()]
    if bad:
        raise FormatError(
            source, f'expected turn numbers as keys ("0", "1", …), got {bad[0]!r}', record=record, path="conversation"
        )
    if not conv:
        raise FormatError(
            source, "expected at least one exchange, got an empty object", record=record, path="conversation"
        )
    turns = []
    for key in sorted(conv, key=int):
        where = f"conversation.{key}"
        pair = shapes.get(source, conv, key, dict, "conversation", record)
        turns.append(("user", shapes.text(source, pair, "user", where, record)))
        reply = shapes.text(source, pair, "assistant", where, record, required=False)
        if reply is not None:
            turns.append(("assistant", reply))
    return turns


def _check_alignment(i: int, parsed: dict[str, dict], sources: dict[str, str]) -> bool:
    """Raise unless every file's record ``i`` is the same item; True when only reworded."""
    forms = list(parsed)
    base = parsed[forms[0]]
    reworded = False
    for form in forms[1:]:
        rec = parsed[form]
        where = f"expected the same {{}} as {sources[forms[0]]} record {i} (files are matched by index), got {{!r}}"
        if rec["question"].strip() != base["question"].strip():
            raise FormatError(
                sources[form], where.format("question", rec["question"]), record=f"record {i}", path="question"
            )
        if rec["preference"].strip() != base["preference"].strip():
            if similarity(rec["preference"], base["preference"]) < SAME_PREFERENCE:
                raise FormatError(
                    sources[form],
                    where.format("preference", rec["preference"]),
                    record=f"record {i}",
                    path="preference",
                )
            reworded = True
    return reworded


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower().split(), b.lower().split()).ratio()


def _bundle(topic: str, i: int, parsed: dict[str, dict], sources: dict[str, str], mcq_meta: dict | None) -> UserBundle:
    uid = f"prefeval-{topic}-{i:03d}"
    pid = f"{uid}-pref"
    first = next(iter(parsed.values()))
    text = (parsed.get("explicit") or first)["preference"]
    sessions: list[Session] = []
    evidence: dict[int, list[str]] = {}
    for form, rec in parsed.items():
        if form == "mcq":
            continue
        turns = (
            [Turn(role="user", content=rec["preference"])]
            if form == "explicit"
            else [Turn(role=role, content=content) for role, content in rec["turns"]]
        )
        sid = f"{uid}-{form}"
        meta = {"prefeval_form": form, "prefeval_file": sources[form], **rec.get("meta", {})}
        if rec["preference"] != text:
            meta["prefeval_preference"] = rec["preference"]
        sessions.append(
            Session(
                id=sid,
                kind="preference",
                expression_type=EXPRESSION[form],
                preference_ids=[pid],
                turns=turns,
                meta=meta,
            )
        )
        evidence[EXPRESSION[form]] = [sid]
    queries = [
        Query(
            id=f"{uid}-open",
            kind="open",
            text=first["question"],
            preference_id=pid,
            group=uid,
            explanation=first["explanation"],
        )
    ]
    if "mcq" in parsed and mcq_meta is not None:
        queries.append(_mcq(uid, pid, parsed["mcq"], mcq_meta))
    persona = parsed.get("persona-driven", {}).get("persona", "")
    user = {
        "id": uid,
        "name": f"PrefEval {topic} #{i}",
        "persona": persona,
        "source": NAME,
        "meta": {"topic": topic, "index": i},
    }
    pref = Preference(id=pid, text=text, topic=topic, evidence=evidence)
    return UserBundle.model_validate({"user": user, "sessions": sessions, "preferences": [pref], "queries": queries})


def _mcq(uid: str, pid: str, rec: dict, meta: dict) -> Query:
    raw = rec["options"]
    order = meta["option_order"]
    return Query(
        id=f"{uid}-mcq",
        kind="mcq",
        text=rec["question"],
        preference_id=pid,
        group=uid,
        options=[raw[k] for k in order],
        answer=MCQ_LETTERS[order.index(0)],
        explanation=rec["explanation"],
        meta={**meta, "answer_convention": "classification_task_options[0] is aligned"},
    )
