"""PrefEval's ``benchmark_dataset`` folder (Zhao et al., 2025), or one file from it.

Layout read (one JSON array per topic in each form folder, aligned by index)::

    explicit_preference/<topic>.json                  {preference, question, explanation}
    implicit_preference/choice-based/<topic>.json     + implicit_query, options, aligned_op, conversation{4 keys}
    implicit_preference/persona-driven/<topic>.json   + persona, conversation{"0": {user, assistant}, ...}
    mcq_options/<topic>.json                          + classification_task_options (aligned option first)
    filtered_inter_turns.json                         LMSYS-Chat conversations used as filler
    rag_retrieval/...                                 ignored: PrefEval's precomputed retrieval; prefscope retrieves itself

Mapping (our choice; PrefEval's own form name is kept in ``Session.meta["prefeval_form"]``):

* record *i* of a topic is one preference, so one ``UserBundle`` ``prefeval-<topic>-<iii>`` holding
  one Preference (type unknown, topic = the file's topic) and up to three expression sessions:
* ``explicit``        -> expression type 1 (Direct Statement): the preference as a single user turn
  (PrefEval stores no assistant reply for it, so the session has just that turn);
* ``persona-driven``  -> type 2 (Contextualized Mention): the multi-turn dialogue in key order, in
  which the preference is mentioned in passing; its persona becomes ``User.persona``;
* ``choice-based``    -> type 3 (implicit): query, assistant options, user's selection, assistant's
  acknowledgement. Its ``implicit_query`` / ``options`` / ``aligned_op`` belong to that dialogue and
  are kept in the session's meta, not turned into a test query.
* Queries: the open ``question`` (with ``explanation``), and the MCQ from ``mcq_options``. PrefEval
  ships no answer key: by its convention the aligned option is ``classification_task_options[0]``
  and its evaluation shuffles the options. We shuffle deterministically (seeded by the record
  index) and keep the shown order as indices into the raw list in ``meta["option_order"]``.
* Records are matched across files by index. The question must be identical; the preference text
  must be the same or a near-identical rewording (the released files differ by words such as
  "absolutely" in a few records): rewordings are accepted with a note, anything else is an error
  naming both files and the index. The explicit wording is the Preference text; each session
  keeps the wording of its own file in ``meta["prefeval_preference"]``.
* ``filtered_inter_turns.json`` -> FillerPool ``prefeval-inter-turns``, one session per
  conversation (id = ``conversation_id``). Roles other than user/assistant are dropped and
  consecutive messages of one role are merged, so each turn pair is one exchange; both are noted.
"""

from __future__ import annotations

import difflib
import random
import re
from pathlib import Path

from pydantic import ValidationError

from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, expect_type
from core.model import MCQ_LETTERS, FillerPool, Preference, Query, Role, Session, Turn, UserBundle

NAME = "prefeval"

#: folder (relative to the benchmark root) -> PrefEval form, in the order sessions are built.
FORM_DIRS = {
    "explicit_preference": "explicit",
    "implicit_preference/persona-driven": "persona-driven",
    "implicit_preference/choice-based": "choice-based",
    "mcq_options": "mcq",
}
EXPRESSION = {"explicit": 1, "persona-driven": 2, "choice-based": 3}
INTER_TURNS = "filtered_inter_turns.json"
FILLER_ID = "prefeval-inter-turns"
CHOICE_KEYS = ("query", "assistant_options", "user_selection", "assistant_acknowledgment")
CHOICE_ROLES = ("user", "assistant", "user", "assistant")
#: The roles a filler conversation keeps; other messages (system, tool) are dropped.
ROLES: tuple[Role, ...] = ("user", "assistant")
#: Below this word-level similarity two preference texts are different preferences.
SAME_PREFERENCE = 0.8


# -- detection -----------------------------------------------------------------------------------
def detect(path: Path) -> bool:
    try:
        if path.is_dir():
            root = _root(path)
            return any((root / d).is_dir() for d in FORM_DIRS) or (root / INTER_TURNS).is_file()
        if path.name == INTER_TURNS:
            return True
        if path.suffix.lower() != ".json":
            return False
        if path.parent.name in {d.rsplit("/", 1)[-1] for d in FORM_DIRS}:
            return True
        head = shapes.head_text(path, 64 * 1024)
        return all(re.search(rf'"{k}"\s*:', head) for k in ("preference", "question", "explanation"))
    except OSError:
        return False


def _root(path: Path) -> Path:
    nested = path / "benchmark_dataset"
    return nested if nested.is_dir() else path


# -- loading -------------------------------------------------------------------------------------
def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    if path.is_dir():
        return _load_folder(_root(path), max_bytes)
    if path.name == INTER_TURNS:
        return _load_inter_turns(path, path.name, max_bytes)
    data = expect_type(path.name, shapes.load_json(path, max_bytes), list, "")
    form = FORM_DIRS.get(f"{path.parent.parent.name}/{path.parent.name}") or FORM_DIRS.get(path.parent.name)
    if form is None:
        form = _form_from_keys(path.name, data)
    if form == "filler":
        return _inter_turns(path.name, data)
    result = ImportResult(format=NAME)
    result.bundles = _topic_bundles(path.stem, {form: (path.name, data)}, result.notes)
    if form == "mcq":
        result.notes.append(f"{path.name}: only the MCQ file was given, so the users have no expression sessions")
    return result


def _load_folder(root: Path, max_bytes: int) -> ImportResult:
    result = ImportResult(format=NAME)
    topics: dict[str, dict[str, tuple[str, list]]] = {}
    for rel, form in FORM_DIRS.items():
        folder = root / rel
        for f in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            source = f"{rel}/{f.name}"
            try:
                data = shapes.load_json(f, max_bytes)
            except FormatError as exc:  # name the file by its folder: every form has a <topic>.json
                raise shapes.renamed(exc, source) from exc
            topics.setdefault(f.stem, {})[form] = (source, expect_type(source, data, list, ""))
    for topic in sorted(topics):
        result.bundles += _topic_bundles(topic, topics[topic], result.notes)
    if (root / INTER_TURNS).is_file():
        result.extend(_load_inter_turns(root / INTER_TURNS, INTER_TURNS, max_bytes))
    if (root / "rag_retrieval").exists():
        result.notes.append(
            "rag_retrieval/ not imported: it holds PrefEval's precomputed retrievals; "
            "prefscope's RAG method retrieves from the history itself"
        )
    if not result.bundles and not result.fillers:
        raise FormatError(
            root.name,
            "folder holds no PrefEval files (expected explicit_preference/, "
            "implicit_preference/{choice-based,persona-driven}/, mcq_options/ or filtered_inter_turns.json)",
        )
    return result


def _form_from_keys(source: str, data: list) -> str:
    """A PrefEval file outside its folder: tell its form from the first record's keys."""
    if not data:
        raise FormatError(source, "file holds no records")
    first = data[0]
    expect_type(source, first, dict, "", record="record 0")
    if "conversation_id" in first:
        return "filler"
    if "classification_task_options" in first:
        return "mcq"
    if "aligned_op" in first or "implicit_query" in first:
        return "choice-based"
    if "persona" in first:
        return "persona-driven"
    return "explicit"


# -- one topic -----------------------------------------------------------------------------------
def _topic_bundles(topic: str, files: dict[str, tuple[str, list]], notes: list[str]) -> list[UserBundle]:
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
    for i in range(sizes[base]):
        parsed = {form: _parse_record(form, files[form][0], files[form][1][i], i) for form in forms}
        if _check_alignment(i, parsed, {f: files[f][0] for f in forms}):
            reworded.append(i)
        try:
            bundles.append(_bundle(topic, i, parsed, {f: files[f][0] for f in forms}))
        except ValidationError as exc:  # a backstop: the checks above should leave nothing for the model
            raise from_validation(files[base][0], exc, record=f"record {i}") from exc
    if reworded:
        shown = ", ".join(map(str, reworded[:10])) + (" …" if len(reworded) > 10 else "")
        notes.append(
            f"{topic}: {len(reworded)} record(s) ({shown}) word the preference slightly differently "
            f"across files; the wording in {files[base][0]} is the preference text, each session keeps its own"
        )
    return bundles


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
            if _similarity(rec["preference"], base["preference"]) < SAME_PREFERENCE:
                raise FormatError(
                    sources[form],
                    where.format("preference", rec["preference"]),
                    record=f"record {i}",
                    path="preference",
                )
            reworded = True
    return reworded


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower().split(), b.lower().split()).ratio()


def _bundle(topic: str, i: int, parsed: dict[str, dict], sources: dict[str, str]) -> UserBundle:
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
    if "mcq" in parsed:
        queries.append(_mcq(uid, pid, i, parsed["mcq"]))
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


def _mcq(uid: str, pid: str, i: int, rec: dict) -> Query:
    raw = rec["options"]
    order = list(range(len(raw)))
    random.Random(i).shuffle(order)  # seeded by index: the same letters on every import
    return Query(
        id=f"{uid}-mcq",
        kind="mcq",
        text=rec["question"],
        preference_id=pid,
        group=uid,
        options=[raw[k] for k in order],
        answer=MCQ_LETTERS[order.index(0)],
        explanation=rec["explanation"],
        meta={"option_order": order, "answer_convention": "classification_task_options[0] is aligned"},
    )


# -- filler --------------------------------------------------------------------------------------
def _load_inter_turns(path: Path, source: str, max_bytes: int) -> ImportResult:
    return _inter_turns(source, expect_type(source, shapes.load_json(path, max_bytes), list, ""))


def _inter_turns(source: str, data: list) -> ImportResult:
    result = ImportResult(format=NAME)
    sessions: list[Session] = []
    seen: dict[str, int] = {}
    dropped = merged = skipped = 0
    for j, rec in enumerate(data):
        record = f"record {j}"
        expect_type(source, rec, dict, "", record)
        cid = shapes.text(source, rec, "conversation_id", "", record, non_empty=True)
        if cid in seen:
            raise FormatError(
                source, f"duplicate id {cid!r} (also record {seen[cid]})", record=record, path="conversation_id"
            )
        seen[cid] = j
        messages = shapes.get(source, rec, "conversation", list, "", record)
        turns: list[Turn] = []
        for k, msg in enumerate(messages):
            where = f"conversation[{k}]"
            expect_type(source, msg, dict, where, record)
            given = shapes.text(source, msg, "role", where, record)
            content = shapes.text(source, msg, "content", where, record)
            role = next((r for r in ROLES if r == given), None)
            if role is None:
                dropped += 1
                continue
            if turns and turns[-1].role == role:
                turns[-1] = Turn(role=role, content=f"{turns[-1].content}\n\n{content}")
                merged += 1
                continue
            turns.append(Turn(role=role, content=content))
        if not turns:
            skipped += 1
            continue
        meta = shapes.extras(rec, {"conversation_id", "conversation"})
        sessions.append(Session(id=cid, kind="filler", turns=turns, meta=meta))
    if dropped:
        result.notes.append(f"{source}: dropped {dropped} message(s) whose role is neither user nor assistant")
    if merged:
        result.notes.append(f"{source}: merged {merged} consecutive message(s) from the same role into one turn")
    if skipped:
        result.notes.append(f"{source}: skipped {skipped} conversation(s) with no user/assistant messages")
    if not sessions:
        raise FormatError(source, "holds no conversations with user/assistant messages")
    result.fillers.append(
        FillerPool(id=FILLER_ID, name="PrefEval inter-turn conversations", source=NAME, sessions=sessions)
    )
    return result
