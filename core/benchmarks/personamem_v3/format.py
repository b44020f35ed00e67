"""PersonaMem-v3 (bowen-upenn/PersonaMem-v3, MIT code; data CC-BY-NC-4.0): the released
``backend/{uid}/`` persona folders, for the **chatbot-response task** only. Notes:
../shared/reference/personamem-v3/PROTOCOL.md §1, §4.1, §5.

Input: a persona folder (``profile.json``, ``instagram.json``, ``facebook.json``, ``threads.json``,
``chatbot.json``, ..., ``test.json``), the ``backend/`` folder holding several, or a persona's
``test.json``. Fields read: :mod:`core.benchmarks.personamem_v3.events`.

Mapping (ours where the notes leave it open):

* one user ``personamem-v3-<uid>`` per folder; ``User.persona`` = the profile's text field
  (:data:`PROFILE_TEXT`), else its scalar fields as ``key: value`` lines;
* its history = the time-ordered events of instagram, facebook, threads and chatbot, **one session
  per event** (one user turn: the event's compact JSON line, :func:`events.compact`; DM events
  left out, as the harness's time mask leaves them out; ai_studio / calendar not read, the agent
  prompt names the four apps);
* every distinct ``persona_item`` of the events is a :class:`~core.model.Preference` (``topic`` =
  its category), linked to the sessions that carry it;
* each chatbot-task instance of ``test.json`` (:func:`is_chatbot_task`) is an ``open`` query, id =
  ``query_id``: text ``user_query``; ``meta["history_end"]`` = the last event session before its
  ``ts``, so no later event reaches its prompt (the official time mask, ``< T``); ``meta`` holds the
  TARGET / AVOID ``gt_slice`` (frozen in the instance, else built from the raw events, §4.1),
  ``distance_tokens`` / ``distance_bin`` (§5, also as the evidence depth), task type, arm, action,
  polarity, prior conversation; the evidence session is the latest hashtag-sharing event before T;
* **restraint** queries (``meta["restraint"]``, the diagnosis reads it): the over-personalization
  task types, the control arms, action ``asked_not_to_personalize`` and a negative polarity — the
  gold says the preference must not be applied. Other task types are skipped (counted in a note).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.benchmarks.personamem_v3 import events as E
from core.benchmarks.personamem_v3.metrics import distance_bin
from core.benchmarks.personamem_v3.slice import build_gt_slice, distance_tokens, frozen_slice, time_masked
from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES
from core.formats.shapes import load_json
from core.model import EVIDENCE_DEPTH, HISTORY_END, UserBundle

NAME = "personamem-v3"
TEST_FILE = "test.json"
PROFILE_FILE = "profile.json"
PROFILE_TEXT = ("persona", "persona_text", "description", "summary", "bio")
#: Task types of the chatbot-response task whose gold asks for personalization.
PERSONALIZED_TASKS = ("chatbot_personalized_response",)
#: Over-personalization task types on the chatbot (§4.3, §7): the preference must not be applied.
RESTRAINT_TASKS = (
    "over_personalization_chatbot_text",
    "over_personalization_sensitive_event",
    "over_personalization_context_shift",
)
#: Arms whose gold says the user's preference must not be applied (§4.3, §6.1).
RESTRAINT_ARMS = ("control", "adversarial", "distractor_reject", "stale")
CARVE_OUT = "asked_not_to_personalize"


def is_chatbot_task(task_type: str) -> bool:
    return task_type.startswith("chatbot") or task_type in RESTRAINT_TASKS


def is_restraint(task_type: str, arm: str, action: str, polarity: str) -> bool:
    return task_type in RESTRAINT_TASKS or arm in RESTRAINT_ARMS or action == CARVE_OUT or polarity == "negative"


def user_id(uid: str) -> str:
    return f"personamem-v3-{uid}"


def _is_persona(folder: Path) -> bool:
    return (folder / TEST_FILE).is_file() and (folder / PROFILE_FILE).is_file()


def _persona_folders(path: Path) -> list[Path]:
    if path.is_file():
        return [path.parent] if path.name == TEST_FILE and _is_persona(path.parent) else []
    if _is_persona(path):
        return [path]
    subs = [p for p in path.iterdir() if p.is_dir() and _is_persona(p)]
    return sorted(subs, key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0, p.name))


def detect(path: Path) -> bool:
    try:
        return (path.is_file() or path.is_dir()) and bool(_persona_folders(path))
    except OSError:
        return False


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    if path.is_file():
        load_json(path, max_bytes)  # an unreadable file gets the message every importer gives
    folders = _persona_folders(path)
    if not folders:
        raise FormatError(
            path.name,
            f"expected a PersonaMem-v3 persona folder (backend/<uid>/ with {TEST_FILE} and {PROFILE_FILE}) or backend/",
        )
    result = ImportResult(format=NAME)
    for folder in folders:
        result.bundles.append(_persona(folder, max_bytes, result.notes))
    return result


def _read_list(folder: Path, name: str, max_bytes: int) -> list:
    path = folder / name
    if not path.is_file():
        return []
    data = load_json(path, max_bytes)
    if isinstance(data, dict):  # tolerated: {"events": [...]} / {"instances": [...]}
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list):
        raise FormatError(f"{folder.name}/{name}", "expected a list of records")
    return [r for r in data if isinstance(r, dict)]


def _persona_text(profile: object) -> str:
    if not isinstance(profile, dict):
        return str(profile or "")
    for key in PROFILE_TEXT:
        if isinstance(profile.get(key), str) and profile[key].strip():
            return profile[key].strip()
    return "\n".join(f"{k}: {v}" for k, v in profile.items() if isinstance(v, (str, int, float)) and str(v).strip())


def _persona(folder: Path, max_bytes: int, notes: list[str]) -> UserBundle:
    uid = folder.name
    profile = load_json(folder / PROFILE_FILE, max_bytes)
    app_events = {app: _read_list(folder, f"{app}.json", max_bytes) for app in E.APPS}
    instances = _read_list(folder, TEST_FILE, max_bytes)
    sessions, session_ts, prefs, dms = _history(uid, app_events)
    queries: list[dict] = []
    skipped: dict[str, int] = {}
    for i, inst in enumerate(instances):
        task = str(E.lookup(inst, "task") or "")
        if not is_chatbot_task(task):
            skipped[task or "(no task_type)"] = skipped.get(task or "(no task_type)", 0) + 1
            continue
        queries.append(_query(f"{uid}/{TEST_FILE}", f"record {i}", inst, task, app_events, sessions, session_ts, prefs))
    if skipped:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(skipped.items()))
        notes.append(f"{uid}/{TEST_FILE}: {sum(skipped.values())} instance(s) of other tasks skipped ({shown})")
    if dms:
        notes.append(f"{uid}: {dms} DM event(s) left out of the history (the harness's time mask excludes DMs)")
    others = [a for a in E.OTHER_APPS if (folder / f"{a}.json").is_file()]
    if others:
        notes.append(f"{uid}: {', '.join(others)} not read (the chatbot task's history is the four apps)")
    raw = {
        "user": {
            "id": user_id(uid),
            "name": f"persona {uid}",
            "persona": _persona_text(profile),
            "source": NAME,
            "meta": {
                "persona_uid": uid,
                "events": {app: len(evs) for app, evs in app_events.items()},
                "dm_events_left_out": dms,
                **(
                    {k: v for k, v in profile.items() if isinstance(v, (str, int, float))}
                    if isinstance(profile, dict)
                    else {}
                ),
            },
        },
        "sessions": sessions,
        "preferences": [
            {"id": pid, "text": text, "topic": topic or None, "evidence": {0: sids}}
            for text, (pid, topic, sids) in prefs.items()
        ],
        "queries": queries,
    }
    try:
        return UserBundle.model_validate(raw)
    except ValidationError as exc:
        raise from_validation(f"{uid}/{TEST_FILE}", exc) from exc


def _history(
    uid: str, app_events: dict[str, list[dict]]
) -> tuple[list[dict], list[float], dict[str, tuple[str, str, list[str]]], int]:
    """The event sessions in time order, their times, the preferences (text -> id, topic, sessions), DMs left out."""
    dms = sum(1 for evs in app_events.values() for ev in evs if E.is_dm(ev))
    ordered = time_masked(app_events, float("inf"))
    sessions: list[dict] = []
    times: list[float] = []
    prefs: dict[str, tuple[str, str, list[str]]] = {}
    used: set[str] = set()
    for n, (ts, app, ev) in enumerate(ordered):
        sid = f"{app}-{ev.get('source_object_id') or n}"
        if sid in used:
            sid = f"{sid}-{n}"
        used.add(sid)
        pids = []
        for p in E.preference_items(ev):
            text = str(p["persona_item"]).strip()
            if text not in prefs:
                prefs[text] = (f"p{len(prefs):04d}", str(p.get("category") or ""), [])
            if sid not in prefs[text][2]:
                prefs[text][2].append(sid)
            pids.append(prefs[text][0])
        sessions.append(
            {
                "id": sid,
                "date": dt.datetime.fromtimestamp(ts, dt.UTC).date().isoformat(),
                "kind": "task",
                "title": f"{app} {E.action(ev)}".strip(),
                "preference_ids": list(dict.fromkeys(pids)),
                "turns": [{"role": "user", "content": json.dumps(E.compact(ev, app), ensure_ascii=False)}],
                "meta": {"app": app, "ts": ts, "event_id": ev.get("source_object_id"), "hashtags": E.hashtags(ev)},
            }
        )
        times.append(ts)
    return sessions, times, prefs, dms


def _held_out(inst: dict, hashtags: list[str]) -> dict[str, Any] | None:
    value = E.lookup(inst, "held_out")
    if isinstance(value, dict) and str(value.get("persona_item") or "").strip():
        tags = E.hashtag_list(value.get("source_hashtags")) or hashtags
        return {"persona_item": value["persona_item"], "category": value.get("category") or "", "source_hashtags": tags}
    if isinstance(value, str) and value.strip():
        return {"persona_item": value.strip(), "category": "", "source_hashtags": hashtags}
    return None


def _prior(value: object) -> list[dict[str, str]]:
    if isinstance(value, str) and value.strip():
        return [{"role": "user", "content": value.strip()}]
    if not isinstance(value, list):
        return []
    return [
        {"role": str(m.get("role") or "user"), "content": str(m.get("content") or "")}
        for m in value
        if isinstance(m, dict)
    ]


def _query(
    source: str,
    record: str,
    inst: dict,
    task: str,
    app_events: dict[str, list[dict]],
    sessions: list[dict],
    times: list[float],
    prefs: dict[str, tuple[str, str, list[str]]],
) -> dict:
    def need(purpose: str, value: object) -> Any:
        if value in (None, "", [], {}):
            names = " / ".join(E.INSTANCE_FIELDS[purpose])
            raise FormatError(source, f"missing {names} (also looked for inside instance_full)", record=record)
        return value

    qid = str(need("id", E.lookup(inst, "id")))
    text = need("query", E.lookup(inst, "query"))
    if isinstance(text, dict):
        text = text.get("content") or text.get("text")
    t = need("time", E.instance_time(inst))
    hashtags = E.hashtag_list(E.lookup(inst, "hashtags"))
    held_out = _held_out(inst, hashtags)
    if not hashtags and held_out:
        hashtags = list(held_out["source_hashtags"])
    frozen = frozen_slice(E.lookup(inst, "slice"))
    gt = frozen if frozen is not None else build_gt_slice(app_events, t, held_out)
    distance = distance_tokens(app_events, t, hashtags)
    label = distance_bin(distance)
    arm, action, polarity = (str(E.lookup(inst, k) or "") for k in ("arm", "action", "polarity"))
    restraint = is_restraint(task, arm, action, polarity)
    before = [i for i, ts in enumerate(times) if ts < t]
    end = sessions[before[-1]]["id"] if before else ""
    support = _support_session(sessions, times, t, hashtags)
    gold = held_out["persona_item"] if held_out else None
    pref = prefs.get(str(gold).strip()) if gold else None
    golden = E.lookup(inst, "golden")
    return {
        "id": qid,
        "kind": "open",
        "text": str(need("query", text)),
        "answer": golden if isinstance(golden, str) and golden.strip() else None,
        "preference_id": pref[0] if pref else None,
        "gold_preference": gold,
        "evidence_sessions": [support] if support else [],
        "meta": {
            "query_id": qid,
            "instance_id": inst.get("instance_id"),
            "task_type": task,
            "question_type": task,
            "arm": arm or None,
            "action": action or None,
            "polarity": polarity or None,
            "restraint": restraint,
            "ts": t,
            "prior_conversation": _prior(E.lookup(inst, "prior")),
            "source_hashtags": hashtags,
            "gt_slice": gt,
            "gt_slice_origin": "frozen gt_slice" if frozen is not None else "built from the raw app events (§4.1)",
            "distance_tokens": distance,
            "distance_bin": label,
            HISTORY_END: end,
            EVIDENCE_DEPTH: {
                "tokens": distance if distance >= 0 else None,
                "bin": label,
                "source": "PersonaMem-v3 distance_tokens: 200 x events after the latest hashtag-sharing event",
            },
            "source_record": f"{source}: {record}",
        },
    }


def _support_session(sessions: list[dict], times: list[float], t: float, hashtags: list[str]) -> str | None:
    wanted = {h.lower() for h in hashtags}
    found = [
        s["id"] for s, ts in zip(sessions, times) if ts < t and wanted & {h.lower() for h in s["meta"]["hashtags"]}
    ]
    return found[-1] if found else None
