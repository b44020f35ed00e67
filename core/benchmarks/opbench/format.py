"""OP-Bench (Hu et al., 2026; github.com/yulinlp/OP-Bench @ 5104b27, MIT): the task file
``data/locomo10_overpersonalized.json``.

Layout (PROTOCOL.md section 2.2): a JSON list of 10 items, one per LoCoMo conversation; each item
an object keyed by person name (speaker_a first), each value::

    {"topics": [str], "profile": str, "observation": [str],
     "tasks": {"irrelevance_easy": [{"topic", "question"}],
               "irrelevance_hard": [{"question", "type", "explanation"}],
               "diversity": [{"questions": [{"topic", "question"} | []]}],
               "sycophancy": [{"question", "type", "explanation"}]}}

Mapping, as ``types.py`` ``extract_test_cases`` groups it:

* only the **first person** of each item is imported (the official default,
  ``use_both_personas: false``); ``personas="both"`` (``import --op-bench-personas both``) takes both;
* one user ``op-bench-<item>-<person>`` per person (``User.persona`` = ``profile``; ``topics`` in
  ``User.meta``); its memory is one session of the ``observation`` sentences, one user turn each
  (ours: the official frames retrieve memories from the LoCoMo conversation through a memory
  system, which the task file does not hold); each observation is also stored as a
  :class:`~core.model.Preference` (``obs-<i>``), the user's stored personal information;
* one open query per **stripped, non-empty** question, in file order, task by task in the official
  order; id ``<task>-<i>`` (``i`` counts within the task), ``Query.group`` = the official
  ``test_id`` ``<person>_<task>``; diversity: the questions of every ``questions`` list
  concatenated, the empty-list separators skipped. ``explanation`` goes to ``Query.explanation``
  (never sent to a model); ``Query.meta``: ``task_type``, ``category`` (irrelevance / sycophancy /
  diversity), ``subtype`` (the item's ``type``; sycophancy ``fine-grained`` / ``coarse-grained`` /
  missing / unknown -> ``memory``, as ``scoring.py`` does), ``topic``, ``person``, ``item``;
* the irrelevance tasks are **restraint** queries (``Query.meta["restraint"]``): their gold is
  that the user's personal information should not change the answer (the diagnosis labels an
  answer that drags it in ``misapplied``).
"""

from __future__ import annotations

import re
from pathlib import Path

from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, expect_type
from core.model import RESTRAINT, UserBundle

NAME = "op-bench"
#: ``types.py``: the task types in the official order.
TASK_TYPES = ("irrelevance_easy", "irrelevance_hard", "sycophancy", "diversity")
CATEGORY = {
    "irrelevance_easy": "irrelevance",
    "irrelevance_hard": "irrelevance",
    "sycophancy": "sycophancy",
    "diversity": "diversity",
}
SYCOPHANCY_SUBTYPES = ("fact", "value", "memory")
PERSONAS = ("first", "both")


def sycophancy_subtype(raw: object) -> str:
    """``scoring.py``: ``fact`` / ``value`` as given; anything else (fine-/coarse-grained, missing) -> memory."""
    return raw if raw in ("fact", "value") else "memory"


def user_id(item: int, person: str) -> str:
    return f"op-bench-{item}-{re.sub(r'[^A-Za-z0-9_-]+', '_', person)}"


def detect(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    head = shapes.head_text(path)
    return head.lstrip("\ufeff \t\r\n").startswith("[") and all(
        re.search(rf'"{k}"\s*:', head) for k in ("observation", "tasks", "irrelevance_easy")
    )


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, *, personas: str = "first") -> ImportResult:
    if personas not in PERSONAS:
        raise FormatError(path.name, f"personas: expected 'first' or 'both', got {personas!r}")
    if path.is_dir():
        raise FormatError(path.name, "the op-bench format reads one .json file, not a folder")
    src = path.name
    data = shapes.load_json(path, max_bytes)
    expect_type(src, data, list, "")
    assert isinstance(data, list)
    if not data:
        raise FormatError(src, "file holds no items")
    result = ImportResult(format=NAME)
    skipped = 0
    for i, item in enumerate(data):
        record = f"item {i}"
        expect_type(src, item, dict, "", record)
        assert isinstance(item, dict)
        people = list(item.items())
        if not people:
            raise FormatError(src, "expected at least one person", record=record)
        skipped += max(0, len(people) - 1) if personas == "first" else 0
        for person, raw in people if personas == "both" else people[:1]:
            bundle = _person(src, record, i, person, raw, result.notes)
            if bundle is not None:
                result.bundles.append(bundle)
    if skipped:
        result.notes.append(
            f"{src}: {skipped} second person(s) left out, as the official default (use_both_personas: false); "
            "`--op-bench-personas both` imports them"
        )
    return result


def _questions(src: str, record: str, where: str, entries: list, notes: list[str]) -> list[dict]:
    out = []
    for j, entry in enumerate(entries):
        if isinstance(entry, list) and not entry:  # a separator in the diversity lists
            continue
        expect_type(src, entry, dict, f"{where}[{j}]", record)
        q = shapes.get(src, entry, "question", str, f"{where}[{j}]", record, required=False, default="")
        if not q.strip():
            notes.append(f"{src}: {record} {where}[{j}]: empty question skipped (as the official loader)")
            continue
        out.append({**entry, "question": q.strip()})
    return out


def _person(src: str, record: str, item: int, person: str, raw: object, notes: list[str]) -> UserBundle | None:
    record = f"{record} ({person})"
    expect_type(src, raw, dict, "", record)
    assert isinstance(raw, dict)
    topics = shapes.string_list(src, raw, "topics", "", record, required=False)
    profile = shapes.get(src, raw, "profile", str, "", record, required=False, default="")
    observations = [o for o in shapes.string_list(src, raw, "observation", "", record, required=False) if o.strip()]
    tasks = shapes.get(src, raw, "tasks", dict, "", record)
    queries: list[dict] = []
    for task in TASK_TYPES:
        entries = shapes.get(src, tasks, task, list, "tasks", record, required=False, default=[])
        if task == "diversity":
            flat: list = []
            for k, block in enumerate(entries):
                expect_type(src, block, dict, f"tasks.diversity[{k}]", record)
                flat += shapes.get(src, block, "questions", list, f"tasks.diversity[{k}]", record)
            entries = flat
        for n, q in enumerate(_questions(src, record, f"tasks.{task}", entries, notes)):
            kind = q.get("type")
            subtype = sycophancy_subtype(kind) if task == "sycophancy" else kind if isinstance(kind, str) else None
            meta = {
                "task_type": task,
                "category": CATEGORY[task],
                "person": person,
                "item": item,
                "topic": q.get("topic") if isinstance(q.get("topic"), str) else None,
                "subtype": subtype,
                "type": kind if isinstance(kind, str) else None,
            }
            if CATEGORY[task] == "irrelevance":
                meta[RESTRAINT] = True
            explanation = q.get("explanation")
            queries.append(
                {
                    "id": f"{task}-{n}",
                    "kind": "open",
                    "text": q["question"],
                    "group": f"{person}_{task}",
                    "explanation": explanation if isinstance(explanation, str) else "",
                    "meta": meta,
                }
            )
    if not queries:
        notes.append(f"{src}: {record}: no questions; skipped")
        return None
    uid = user_id(item, person)
    sessions = (
        [
            {
                "id": "memory",
                "kind": "life_event",
                "title": f"Observations about {person}",
                "turns": [{"role": "user", "content": o} for o in observations],
                "meta": {"op_bench": "observation"},
            }
        ]
        if observations
        else []
    )
    preferences = [{"id": f"obs-{k}", "text": o} for k, o in enumerate(observations)]
    user = {
        "id": uid,
        "name": person,
        "persona": profile,
        "source": NAME,
        "meta": {"person": person, "item": item, "topics": topics},
    }
    bundle = {"user": user, "sessions": sessions, "preferences": preferences, "queries": queries}
    return shapes.build(UserBundle, bundle, src, record)
