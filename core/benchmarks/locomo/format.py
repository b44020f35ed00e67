"""LoCoMo (Maharana et al., 2024): very long two-person conversations with QA over them.

Input, in either of the two layouts LoCoMo has shipped (a file, or a folder of such files):

* nested (the released ``locomo10.json``: a list of samples, or one sample object)::

    {"sample_id", "conversation": {"speaker_a", "speaker_b", "session_<N>_date_time",
                                   "session_<N>": [{"speaker", "dia_id", "text", "img_url"?, "blip_caption"?}]},
     "qa": [{"question", "answer" | "adversarial_answer", "evidence": ["D1:3"], "category"}],
     "event_summary", "observation", "session_summary"}

* flat (one object per conversation, as in the ``data/locomo10.zip`` the official evaluation code
  reads): the ``conversation`` keys (``speaker_a``, ``speaker_b``, ``session_<N>``,
  ``session_<N>_date_time``) sit at the top level next to ``qa`` and the summaries, and
  ``sample_id`` may be absent. Then the sample id is the file name without ``.json``
  (``conv-30.json`` -> ``conv-30``, user ``locomo-conv-30``; a list of such objects falls back to
  the record number, as a nested sample without ``sample_id`` does). A flat record is any object
  without ``conversation`` that has ``speaker_a`` or a ``session_<N>`` key; field paths in errors
  are then top-level (``sample.json: session_2[1].speaker``).

The same conversation gives the same UserBundle in both layouts (same id, sessions, queries,
attributes), with one deliberate exception: ``Session.meta["images"]`` keeps each turn's extra
fields verbatim, so an image is under ``img_url`` in one layout and ``img_file`` in the other.
Turn text: ``text``, else ``clean_text``, else ``compressed_text`` (``text`` is what the release
has; ``clean_text`` is the full turn, ``compressed_text`` a shortened rewrite, so the full turn wins
and a flat file imports to the released text). LoCoMo's own code reads ``compressed_text`` first
(PROTOCOL.md §1); the alternatives that are not used are not kept.

Mapping (our choices, written down because LoCoMo is two people, not a user and an assistant):

* ``user_speaker`` ("a" or "b", default "a") says whose history this is: that speaker's turns are
  ``user``, the other speaker's ``assistant``. One sample -> one UserBundle ``locomo-<sample_id>``
  (``locomo-<sample_id>-b`` from speaker b's side, so both views can be stored) named after the
  user speaker; the other speaker's name is in ``User.meta["other_speaker"]``.
* ``session_<N>`` -> a ``life_event`` session, in numeric N order (LoCoMo reveals background and
  events, it has no tested preference sessions). ``Session.date`` comes from strings such as
  ``4:04 pm on 20 January, 2023``; the raw string, the session summary and the event summary are
  kept in ``Session.meta``. Consecutive turns by one speaker stay separate turns (the model allows
  it; merging would break the one-dia_id-per-turn link). ``dia_id`` -> ``Turn.source_id``.
* A shared image is appended to its turn as ``[shares an image: <blip caption>]`` (LoCoMo's own
  prompts describe images by that caption); URLs stay in ``Session.meta["images"]``.
* Each QA item -> an open Query; evidence dia_ids -> ``evidence_turns`` after
  :func:`canonical_dia_id` (``D30:05`` -> ``D30:5``, ``D:11:26`` -> ``D11:26``); the raw list stays
  in ``Query.meta["evidence_raw"]``. Normalised, malformed and unknown ids are each listed in the
  import notes (nothing is dropped silently). Category 5 (adversarial) questions are unanswerable
  by design: the answer is "Not mentioned in the conversation" and the trap answer is kept in meta.
  ``Query.meta["category"]`` keeps LoCoMo's number; :data:`CATEGORY_NAMES` gives its name wherever
  one is shown (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial). The names are
  INFERRED from LoCoMo's evaluation code, which only uses the numbers (category 2 gets the date
  instruction, 5 the "not mentioned" option, 1 the multi-answer F1, 3 ``;``-separated golds).
* ``observation`` items about the user speaker -> gold Attributes with their evidence turns;
  ``event_summary`` items about the user speaker -> ``User.life_events`` (dated).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError

from core.benchmarks.locomo.format_evidence import EvidenceReport, canonical_dia_id, resolve_evidence
from core.benchmarks.locomo.format_session import parse_date
from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, expect_type
from core.model import UserBundle, turn_ref

NAME = "locomo"
ADVERSARIAL_CATEGORY = 5
UNANSWERABLE = "Not mentioned in the conversation"
#: LoCoMo's category numbers -> names. INFERRED from its evaluation code (see the module docstring).
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")
#: Where a turn's text may be, in the order tried (the flat layout has no ``text``).
_TEXT_KEYS = ("text", "clean_text", "compressed_text")


def category_label(category: object) -> str:
    """``4`` -> ``4 single-hop``; anything else as it is."""
    name = CATEGORY_NAMES.get(category) if isinstance(category, int) else None
    return f"{category} {name}" if name else str(category)


def detect(path: Path) -> bool:
    if path.is_dir():  # a folder of per-conversation files (flat layout) or of samples
        files = sorted(path.glob("*.json"))
        return bool(files) and all(detect(f) for f in files)
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    head = shapes.head_text(path)
    if re.search(r'"speaker_a"\s*:', head) or re.search(r'"session_1_date_time"\s*:', head):
        return True
    # The qa list comes first in the released file and may fill the head on its own.
    return all(re.search(rf'"{k}"\s*:', head) for k in ("qa", "evidence", "category")) and '"D1:' in head


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, *, user_speaker: str = "a") -> ImportResult:
    if user_speaker not in ("a", "b"):
        raise FormatError(path.name, f"user_speaker: expected 'a' or 'b', got {user_speaker!r}")
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise FormatError(path.name, "folder holds no .json files")
        result = ImportResult(format=NAME)
        for f in files:
            result.extend(load(f, max_bytes, user_speaker=user_speaker))
        return result
    data = shapes.load_json(path, max_bytes)
    samples = data if isinstance(data, list) else [data]
    expect_type(path.name, data, (list, dict), "")
    if not samples:
        raise FormatError(path.name, "file holds no samples")
    result = ImportResult(format=NAME)
    seen: dict[str, int] = {}
    for i, sample in enumerate(samples):
        record = f"record {i}" if isinstance(data, list) else None
        # A flat object without sample_id is named after its file, when it is the file's only one.
        stem = path.stem if isinstance(data, dict) else None
        try:
            bundle = _Sample(path.name, record, sample, user_speaker, result.notes, stem).bundle()
        except ValidationError as exc:  # a backstop: the shape checks should leave nothing to refuse
            raise from_validation(path.name, exc, record=record) from exc
        if bundle.user.id in seen:
            raise FormatError(
                path.name,
                f"duplicate sample id {bundle.user.meta['sample_id']!r}, also record {seen[bundle.user.id]}",
                record=record,
                path="sample_id",
            )
        seen[bundle.user.id] = i
        result.bundles.append(bundle)
    return result


class _Sample:
    """One LoCoMo sample being translated; holds the dia_id index the QA and observations need."""

    def __init__(
        self,
        source: str,
        record: str | None,
        raw: object,
        user_speaker: str,
        notes: list[str],
        stem: str | None = None,
    ):
        self.source, self.record, self.notes = source, record, notes
        expect_type(source, raw, dict, "", record)
        assert isinstance(raw, dict)
        self.raw = raw
        flat = is_flat(raw)
        #: The conversation object and its path in messages: the sample itself in the flat layout.
        self.conv: dict = raw if flat else shapes.get(source, raw, "conversation", dict, "", record)
        self.at = "" if flat else "conversation"
        a = shapes.text(source, self.conv, "speaker_a", self.at, record, non_empty=True)
        b = shapes.text(source, self.conv, "speaker_b", self.at, record, non_empty=True)
        self.user, self.other = (a, b) if user_speaker == "a" else (b, a)
        self.speakers = [a, b]
        sample_id = shapes.get(source, raw, "sample_id", (str, int), "", record, required=False)
        if sample_id not in (None, ""):
            self.sample_id = str(sample_id)
        elif flat and stem:
            self.sample_id = stem
        else:
            self.sample_id = (record or "0").replace("record ", "")
        # Speaker b's perspective gets its own id, so both views of one sample can be stored side by side.
        self.uid = f"locomo-{self.sample_id}" + ("-b" if user_speaker == "b" else "")
        self.refs: dict[str, str] = {}  # canonical dia_id -> turn ref

    def bundle(self) -> UserBundle:
        sessions = self._sessions()
        if not sessions:
            raise FormatError(
                self.source,
                "expected at least one session_<N> list, found none",
                record=self.record,
                path=self.at or None,
            )
        raw = {
            "user": {
                "id": self.uid,
                "name": self.user,
                "source": NAME,
                "life_events": self._life_events(),
                "meta": {"sample_id": self.sample_id, "other_speaker": self.other},
            },
            "sessions": sessions,
            "queries": self._queries(),
            "attributes": self._attributes(),
        }
        return UserBundle.model_validate(raw)

    # -- sessions -------------------------------------------------------------------------------
    def _sessions(self) -> list[dict]:
        numbers = sorted(int(m.group(1)) for k in self.conv if (m := _SESSION_KEY.match(k)))
        summaries = _object_or_empty(self.raw.get("session_summary"))
        events = _object_or_empty(self.raw.get("event_summary"))
        out: list[dict] = []
        undated = 0
        for n in numbers:
            key = f"session_{n}"
            turns_raw = shapes.get(self.source, self.conv, key, list, self.at, self.record)
            if not turns_raw:
                continue  # an empty session has nothing to import (and a Session needs a turn)
            sid = f"{self.uid}-s{n:02d}"
            when = shapes.text(self.source, self.conv, f"{key}_date_time", self.at, self.record, required=False)
            date = parse_date(when) if when else None
            undated += date is None
            # The speakers' names, for LoCoMo's own prompt (``<name> said, "…"``); chat methods show roles.
            meta: dict = {"session_number": n, "speakers": self.speakers, "user_speaker": self.user}
            if when:
                meta["date_time"] = when
            if isinstance(summaries.get(f"{key}_summary"), str):
                meta["summary"] = summaries[f"{key}_summary"]
            if f"events_{key}" in events:
                meta["events"] = events[f"events_{key}"]
            turns, images = self._turns(key, sid, turns_raw)
            if images:
                meta["images"] = images
            out.append(
                {"id": sid, "date": date, "kind": "life_event", "title": f"Session {n}", "turns": turns, "meta": meta}
            )
        if undated:
            self.notes.append(f"{self._where()}: {undated} session(s) without a readable date_time were left undated")
        return out

    def _turns(self, key: str, sid: str, items: list) -> tuple[list[dict], dict]:
        turns: list[dict] = []
        images: dict[str, dict] = {}
        for t, item in enumerate(items):
            where = f"{self.at}.{key}[{t}]" if self.at else f"{key}[{t}]"
            expect_type(self.source, item, dict, where, self.record)
            speaker = shapes.text(self.source, item, "speaker", where, self.record)
            dia_id = shapes.text(self.source, item, "dia_id", where, self.record, non_empty=True)
            content = self._text(item, where)
            if speaker not in (self.user, self.other):
                raise FormatError(
                    self.source,
                    f"expected {self.user!r} or {self.other!r}, got {speaker!r}",
                    record=self.record,
                    path=f"{where}.speaker",
                )
            key_id = canonical_dia_id(dia_id) or dia_id
            if key_id in self.refs:
                raise FormatError(
                    self.source, f"duplicate dia_id {dia_id!r}", record=self.record, path=f"{where}.dia_id"
                )
            caption = item.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                content = f"{content}\n[shares an image: {caption.strip()}]"
            extra = shapes.extras(item, {"speaker", "dia_id", *_TEXT_KEYS})
            if extra:
                images[dia_id] = extra
            self.refs[key_id] = turn_ref(sid, len(turns))
            turns.append(
                {"role": "user" if speaker == self.user else "assistant", "content": content, "source_id": dia_id}
            )
        return turns, images

    def _text(self, item: dict, where: str) -> str:
        """The turn's ``text``, else ``clean_text``, else ``compressed_text`` (flat layout)."""
        for key in _TEXT_KEYS:
            if item.get(key) is not None:
                return shapes.text(self.source, item, key, where, self.record)
        raise FormatError(
            self.source,
            "required field is missing (and no clean_text or compressed_text either)",
            record=self.record,
            path=f"{where}.text",
        )

    # -- gold -----------------------------------------------------------------------------------
    def _queries(self) -> list[dict]:
        qa = shapes.get(self.source, self.raw, "qa", list, "", self.record, required=False, default=[])
        out: list[dict] = []
        report = EvidenceReport()
        for k, item in enumerate(qa):
            where = f"qa[{k}]"
            expect_type(self.source, item, dict, where, self.record)
            question = shapes.text(self.source, item, "question", where, self.record, non_empty=True)
            category = shapes.get(self.source, item, "category", int, where, self.record, required=False)
            meta: dict = {"category": category} if category is not None else {}
            answer = item.get("answer")
            if "adversarial_answer" in item:
                meta["adversarial_answer"] = item["adversarial_answer"]
            if answer is None and category == ADVERSARIAL_CATEGORY:
                answer = UNANSWERABLE
            if isinstance(answer, (dict, list)):
                raise FormatError(
                    self.source,
                    f"expected a string or a number, got {type(answer).__name__}",
                    record=self.record,
                    path=f"{where}.answer",
                )
            ids = shapes.get(self.source, item, "evidence", (list, str), where, self.record, required=False)
            evidence = resolve_evidence(ids, self.refs, where, report)
            if ids is not None:
                meta["evidence_raw"] = ids
            out.append(
                {
                    "id": f"{self.uid}-qa{k:03d}",
                    "kind": "open",
                    "text": question,
                    "answer": None if answer is None else str(answer),
                    "evidence_turns": evidence,
                    "meta": meta,
                }
            )
        self.notes += report.notes(self._where(), "QA")
        return out

    def _attributes(self) -> list[dict]:
        obs = self.raw.get("observation")
        if not isinstance(obs, dict):
            return []
        out: list[dict] = []
        report = EvidenceReport()
        skipped = 0
        for n, key in enumerate(sorted(obs, key=_session_order)):
            per_speaker = obs[key]
            items = per_speaker.get(self.user) if isinstance(per_speaker, dict) else None
            for j, item in enumerate(items if isinstance(items, list) else []):
                # Each item is [statement, dia_id or [dia_ids]]; anything else is skipped, not fatal.
                if not (isinstance(item, list) and item and isinstance(item[0], str) and item[0].strip()):
                    skipped += 1
                    continue
                where = f"observation.{key}.{self.user}[{j}]"
                refs = resolve_evidence(item[1] if len(item) > 1 else [], self.refs, where, report)
                out.append(
                    {
                        "id": f"{self.uid}-obs-{n + 1:02d}-{j:02d}",
                        "text": item[0],
                        "evidence_turns": refs,
                        "source": "gold",
                    }
                )
        self.notes += report.notes(self._where(), "observation")
        if skipped:
            self.notes.append(f"{self._where()}: skipped {skipped} observation(s) that are not [statement, dia_ids]")
        return out

    def _life_events(self) -> list[dict]:
        events = self.raw.get("event_summary")
        if not isinstance(events, dict):
            return []
        out = []
        for key in sorted(events, key=_session_order):
            block = events[key]
            if not isinstance(block, dict) or not isinstance(block.get(self.user), list):
                continue
            date = parse_date(block["date"]) if isinstance(block.get("date"), str) else None
            out += [{"date": date, "event": e} for e in block[self.user] if isinstance(e, str) and e.strip()]
        return out

    def _where(self) -> str:
        return f"{self.source}: {self.record}" if self.record else self.source


def is_flat(raw: dict) -> bool:
    """A per-conversation object with the conversation keys at the top level (no ``conversation``)."""
    return "conversation" not in raw and ("speaker_a" in raw or any(_SESSION_KEY.match(k) for k in raw))


def _object_or_empty(value: object) -> dict:
    """An optional JSON object of the sample (summaries, events): absent or malformed reads as empty."""
    return value if isinstance(value, dict) else {}


def _session_order(key: str) -> int:
    m = re.search(r"(\d+)", key)
    return int(m.group(1)) if m else 0
