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
  and its evaluation shuffles the options (``random.seed(41)`` once per run, then
  ``random.sample`` per record in file order: record *i* gets the same letter in every topic, and
  a resumed run another order). Ours, unbiased and stable (:func:`mcq_orders`): per topic, a
  seeded permutation of the records deals the answer letters A, B, C, D, A, … so every topic's
  letter counts differ by at most one, and any set of topics is balanced; a per-record seed places
  the other options. ``meta`` keeps the shown order (indices into the raw list), its seeds, and
  PrefEval's own seed-41 order for a fresh per-topic run (``official_option_order``).
* Records are matched across files by index. The question must be identical; the preference text
  must be the same or a near-identical rewording (the released files differ by words such as
  "absolutely" in a few records): rewordings are accepted with a note, anything else is an error
  naming both files and the index. The explicit wording is the Preference text; each session
  keeps the wording of its own file in ``meta["prefeval_preference"]``.
* Records are never deduplicated: record *i* is task *i* even when its text repeats another's
  (travel_restaurant 19 and 24 share a preference, with different questions); repeats are noted.
* Importing the forms of a topic one file at a time builds the users up: storage merges a
  re-imported PrefEval user with the stored one (:func:`merge_bundles`), so explicit, then
  persona-driven, … then mcq_options ends with all of them.
* A file whose name is not a topic (``mcq_options/travel_hotel copy.json`` in the official
  release), or an implicit/MCQ file without its explicit file in a folder, is a stray: a folder
  import skips it with a note, a single-file import refuses it.
* ``filtered_inter_turns.json`` -> FillerPool ``prefeval-inter-turns``, one session per
  conversation (id = ``conversation_id``). Roles other than user/assistant are dropped and
  consecutive messages of one role are merged, so each turn pair is one exchange; both are noted.

This module reads files and folders; the rest lives next to it: ``format_files`` (layout, stray
files), ``format_topic`` (one topic's users), ``format_mcq`` (option orders),
``format_filler`` (the inter-turn pool) and ``format_merge`` (re-import).
"""

from __future__ import annotations

import re
from pathlib import Path

from core.benchmarks.prefeval.format_files import FORM_DIRS, INTER_TURNS, NAME, why_stray
from core.benchmarks.prefeval.format_filler import inter_turns, load_inter_turns
from core.benchmarks.prefeval.format_merge import merge_bundles as merge_bundles  # storage looks it up on this module
from core.benchmarks.prefeval.format_topic import topic_bundles
from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, expect_type


# -- detection -----------------------------------------------------------------------------------
def detect(path: Path) -> bool:
    try:
        if path.is_dir():
            root = _root(path)
            found = any((root / d).is_dir() for d in FORM_DIRS) or (root / INTER_TURNS).is_file()
            return found or (_task_folder(path) is not None and any(path.rglob("*.json")))
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


def _task_folder(path: Path) -> tuple[Path, list[str]] | None:
    """``path`` as one of the benchmark's task folders (``explicit_preference``,
    ``implicit_preference`` or one of its two, ``mcq_options``): the benchmark root above it and the
    form folders it holds; None for any other folder."""
    here = path.resolve()
    for rel in FORM_DIRS:
        depth = rel.count("/") + 1
        if here.parts[-depth:] == tuple(rel.split("/")):
            return here.parents[depth - 1], [rel]
    if here.name == "implicit_preference":
        return here.parent, [r for r in FORM_DIRS if r.startswith("implicit_preference/")]
    return None


# -- loading -------------------------------------------------------------------------------------
def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    if path.is_dir():
        task = _task_folder(path) if not any((_root(path) / d).is_dir() for d in FORM_DIRS) else None
        if task is not None:  # one task folder of the benchmark: only its forms
            return _load_folder(task[0], max_bytes, only=task[1])
        return _load_folder(_root(path), max_bytes)
    if path.name == INTER_TURNS:
        return load_inter_turns(path, path.name, max_bytes)
    data = expect_type(path.name, shapes.load_json(path, max_bytes), list, "")
    # in its form folder, the file is named as a folder import names it, so both store the same
    rel = next((r for r in FORM_DIRS if path.parent.as_posix().endswith("/" + r) or path.parent.as_posix() == r), None)
    form = FORM_DIRS[rel] if rel is not None else _form_from_keys(path.name, data)
    if form == "filler":
        return inter_turns(path.name, data)
    source = f"{rel}/{path.name}" if rel is not None else path.name
    result = ImportResult(format=NAME)
    result.bundles = topic_bundles(path.stem, {form: (source, data)}, result.notes)
    if form == "mcq":
        result.notes.append(f"{source}: only the MCQ file was given, so the users have no expression sessions")
    return result


def _load_folder(root: Path, max_bytes: int, only: list[str] | None = None) -> ImportResult:
    """The benchmark folder ``root``; with ``only``, just those form folders of it (a task folder
    given on its own: nothing else of the benchmark is read)."""
    result = ImportResult(format=NAME)
    topics: dict[str, dict[str, tuple[str, list]]] = {}
    explicit = root / "explicit_preference"
    for rel, form in FORM_DIRS.items():
        if only is not None and rel not in only:
            continue
        folder = root / rel
        for f in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            source = f"{rel}/{f.name}"
            stray = why_stray(f, form, explicit)
            if stray:
                result.notes.append(f"{source}: {stray}")
                continue
            try:
                data = shapes.load_json(f, max_bytes)
            except FormatError as exc:  # name the file by its folder: every form has a <topic>.json
                raise shapes.renamed(exc, source) from exc
            topics.setdefault(f.stem, {})[form] = (source, expect_type(source, data, list, ""))
    for topic in sorted(topics):
        result.bundles += topic_bundles(topic, topics[topic], result.notes)
    if only is None and (root / INTER_TURNS).is_file():
        result.extend(load_inter_turns(root / INTER_TURNS, INTER_TURNS, max_bytes))
    if only is None and (root / "rag_retrieval").exists():
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
