"""PersonaMem's released layout (questions_<size>.csv + shared_contexts_<size>.jsonl) imports as
it is: one user per shared context, stored once, each question's history exactly its context cut
at ``end_index_in_shared_context``, and every bad cell named by file, line and column."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from core.benchmarks.personamem.format import COLUMNS
from core.formats import FormatError, detect_format, load_path
from core.history.build import build_context
from core.model import EVIDENCE_DEPTH, HISTORY_END

FIXTURE = Path(__file__).parent / "fixtures" / "personamem"


def _contexts() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for line in (FIXTURE / "shared_contexts_32k.jsonl").read_text(encoding="utf-8").splitlines():
        out.update(json.loads(line))
    return out


def _rows() -> list[dict[str, str]]:
    with (FIXTURE / "questions_32k.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _copy(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for f in FIXTURE.iterdir():
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _rewrite(path: Path, rows: list[dict[str, str]], columns=COLUMNS) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def test_detected_as_a_file_and_as_a_folder():
    assert detect_format(FIXTURE / "questions_32k.csv") == "personamem"
    assert detect_format(FIXTURE) == "personamem"


def test_one_user_per_shared_context_and_unused_contexts_skipped():
    result = load_path(FIXTURE / "questions_32k.csv")
    ids = [b.user.id for b in result.bundles]
    assert ids == ["personamem-32k-ctx-lena-01", "personamem-32k-ctx-omar-02"]
    lena = result.bundles[0]
    assert [q.id for q in lena.queries] == ["q-lena-1", "q-lena-2", "q-lena-3"]
    assert lena.user.persona.startswith("Current user persona: Lena")
    assert lena.user.meta["persona_id"] == "7" and lena.user.meta["size"] == "32k"


def test_sessions_hold_the_context_byte_for_byte_cut_at_end_indices_and_system_messages():
    contexts = _contexts()
    for bundle in load_path(FIXTURE).bundles:
        messages = contexts[bundle.user.meta["shared_context_id"]]
        stored = [{"role": t.role, "content": t.content} for s in bundle.sessions for t in s.turns]
        assert stored == messages
        for s in bundle.sessions:
            first, end = s.meta["messages"]
            assert s.id == f"{bundle.user.id}-m{first:06d}"
            # a system message only ever opens a session
            assert all(t.role != "system" for t in s.turns[1:])
        lena_cuts = [s.meta["messages"] for s in bundle.sessions]
        if bundle.user.id.endswith("lena-01"):
            # end indices 6, 10, 11 and the system message at 6
            assert lena_cuts == [[0, 6], [6, 10], [10, 11]]


@pytest.mark.parametrize("config", ["full", "simple", "summaries"])
def test_each_question_sees_exactly_its_context_up_to_its_end_index(config):
    contexts = _contexts()
    rows = {r["question_id"]: r for r in _rows()}
    for bundle in load_path(FIXTURE).bundles:
        messages = contexts[bundle.user.meta["shared_context_id"]]
        for q in bundle.queries:
            end = int(rows[q.id]["end_index_in_shared_context"])
            ctx = build_context(bundle, query=q, config=config)
            if config == "summaries":
                # summaries replace sessions, but never one from after the question
                assert len(ctx.sessions) == len({s.id for s in bundle.sessions if s.meta["messages"][1] <= end})
                continue
            shown = [{"role": t.role, "content": t.content} for cs in ctx.sessions for t in cs.session.turns]
            assert shown == messages[:end], q.id


def test_questions_are_mcq_with_type_topic_options_and_the_cell_kept_verbatim():
    rows = {r["question_id"]: r for r in _rows()}
    lena = load_path(FIXTURE).bundles[0]
    q1, q2 = lena.queries[0], lena.queries[1]
    assert q1.kind == "mcq" and q1.answer == "B" and q2.answer == "C"
    # a Python-list cell and a JSON cell parse alike; the "(a) " prefix is dropped for display
    assert q1.options[1] == "Avocado toast with a boiled egg, no dairy."
    assert q2.options[2] == "A small guesthouse in Grasmere, since you now prefer those."
    assert q1.meta["all_options"] == rows["q-lena-1"]["all_options"]
    assert q1.meta["all_options"].startswith("['(a) ")
    assert q2.meta["all_options"].startswith('["(a) ')
    assert q1.meta["question_type"] == "recall_user_shared_facts" and q1.meta["topic"] == "food"
    assert q1.meta[EVIDENCE_DEPTH] == {
        "tokens": 40,
        "blocks": 0,
        "proportion": 0.19,
        "source": "PersonaMem distance_to_ref_* columns",
    }
    assert q1.meta[HISTORY_END] == "personamem-32k-ctx-lena-01-m000000"
    # no turn-level evidence labels exist: none are invented
    assert all(not q.evidence_turns and not q.evidence_sessions for q in lena.queries)


def test_end_index_zero_means_no_history(tmp_path):
    rows = _rows()
    rows[0]["end_index_in_shared_context"] = "0"
    _rewrite(_copy(tmp_path) / "questions_32k.csv", rows)
    lena = load_path(tmp_path / "questions_32k.csv").bundles[0]
    q = lena.query("q-lena-1")
    assert q.meta[HISTORY_END] == ""
    assert build_context(lena, query=q, config="full").sessions == []


def test_an_end_index_past_the_context_is_cut_like_a_python_slice_with_a_note(tmp_path):
    rows = _rows()
    rows[3]["end_index_in_shared_context"] = "99"
    _rewrite(_copy(tmp_path) / "questions_32k.csv", rows)
    result = load_path(tmp_path / "questions_32k.csv")
    omar = result.bundles[1]
    ctx = build_context(omar, query=omar.queries[0], config="full")
    assert sum(len(cs.session.turns) for cs in ctx.sessions) == len(_contexts()["ctx-omar-02"])
    assert any("outside its 5 messages" in n for n in result.notes)


def test_contexts_of_no_question_are_never_parsed(tmp_path):
    """Streaming: only the key of an unneeded line is read (a broken body there is not an error)."""
    folder = _copy(tmp_path)
    ctx = folder / "shared_contexts_32k.jsonl"
    lines = ctx.read_text(encoding="utf-8").splitlines()
    lines[1] = '{"ctx-unused-99": [{"role": "user", "content": "never parsed'
    ctx.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(load_path(folder / "questions_32k.csv").bundles) == 2


def test_a_repeated_context_id_takes_its_last_line_as_the_official_index_does(tmp_path):
    folder = _copy(tmp_path)
    ctx = folder / "shared_contexts_32k.jsonl"
    changed = [dict(m) for m in _contexts()["ctx-omar-02"]]
    changed[1]["content"] = "A later copy of the same context."
    with ctx.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"ctx-omar-02": changed}) + "\n")
    result = load_path(folder / "questions_32k.csv")
    assert result.bundles[1].sessions[0].turns[1].content == "A later copy of the same context."
    assert any("appear on several lines" in n for n in result.notes)


def test_contexts_file_can_be_named(tmp_path):
    folder = _copy(tmp_path)
    (folder / "shared_contexts_32k.jsonl").rename(folder / "ctx.jsonl")
    (folder / "other.jsonl").write_text("{}\n")
    with pytest.raises(FormatError, match=r"needs its contexts file shared_contexts_32k\.jsonl"):
        load_path(folder / "questions_32k.csv")
    assert len(load_path(folder / "questions_32k.csv", contexts=folder / "ctx.jsonl").bundles) == 2


def _error(tmp_path: Path, edit) -> str:
    folder = _copy(tmp_path)
    rows = _rows()
    columns = edit(folder, rows) or COLUMNS
    _rewrite(folder / "questions_32k.csv", rows, columns)
    with pytest.raises(FormatError) as exc:
        load_path(folder / "questions_32k.csv")
    return str(exc.value)


def test_bad_input_is_named_by_file_line_and_column(tmp_path):
    def drop_column(folder, rows):
        return [c for c in COLUMNS if c != "end_index_in_shared_context"]

    assert "questions_32k.csv: missing column(s) end_index_in_shared_context" in _error(tmp_path / "a", drop_column)

    def bad_letter(folder, rows):
        rows[1]["correct_answer"] = "(e)"

    assert _error(tmp_path / "b", bad_letter).startswith(
        "questions_32k.csv: line 3: correct_answer: expected an option"
    )

    def bad_options(folder, rows):
        rows[2]["all_options"] = "(a) one, (b) two"

    assert _error(tmp_path / "c", bad_options).startswith("questions_32k.csv: line 4: all_options: expected a list")

    def bad_end(folder, rows):
        rows[0]["end_index_in_shared_context"] = "six"

    assert "line 2: end_index_in_shared_context: expected a whole number, got 'six'" in _error(tmp_path / "d", bad_end)

    def unknown_context(folder, rows):
        rows[3]["shared_context_id"] = "ctx-nobody"

    msg = _error(tmp_path / "e", unknown_context)
    assert msg.startswith("questions_32k.csv: line 5: shared_context_id: shared context 'ctx-nobody' is not in")

    def bad_role(folder, rows):
        ctx = folder / "shared_contexts_32k.jsonl"
        ctx.write_text(ctx.read_text(encoding="utf-8").replace('"role": "assistant"', '"role": "bot"', 1))

    msg = _error(tmp_path / "f", bad_role)
    assert (
        msg
        == "shared_contexts_32k.jsonl: line 1: ctx-lena-01[2].role: expected one of system, user, assistant, got 'bot'"
    )

    def broken_json(folder, rows):
        ctx = folder / "shared_contexts_32k.jsonl"
        ctx.write_text(ctx.read_text(encoding="utf-8").replace("]}", "]", 1))

    assert _error(tmp_path / "g", broken_json).startswith("shared_contexts_32k.jsonl: line 1: invalid JSON")
