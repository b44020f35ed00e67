"""Property tests: mutated inputs give an ImportResult or a FormatError, never another exception.

Each example starts from a valid input of one format, applies 1-3 random mutations anywhere in
its JSON tree (drop a key or item, replace a value with garbage, add an unknown key, wrap a value
in a list/object), writes it to a file and imports it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from core.formats import FormatError, format_module
from core.formats.base import ImportResult
from core.model import FillerPool, UserBundle
from tests.core.formats.builders import (
    chat_records,
    cupid_instances,
    locomo_sample,
    native_user,
    prefeval_files,
    write_tree,
)

#: Modest by default so the suite stays fast; raise it for a longer hunt (e.g. 5000).
EXAMPLES = int(os.environ.get("PREFSCOPE_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _nest(depth: int) -> object:
    value: object = "deep"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


GARBAGE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(
        [
            "",
            " ",
            "user",
            "assistant",
            "usr",
            "D1:1",
            "D99:1",
            "#",
            "s1#0",
            "\x00",
            "🙂🙂",
            "a" * 5000,
            "consistent",
            "4:04 pm on 31 February, 2023",
            "session_1",
        ]
    ),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=3),
    st.dictionaries(st.text(max_size=6), st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=3),
    st.integers(min_value=1, max_value=60).map(_nest),
)


def _slots(doc: object, out: list) -> list:
    """Every (container, key) pair in a JSON tree."""
    if isinstance(doc, dict):
        for k in list(doc):
            out.append((doc, k))
            _slots(doc[k], out)
    elif isinstance(doc, list):
        for i in range(len(doc)):
            out.append((doc, i))
            _slots(doc[i], out)
    return out


def mutate(data: st.DataObject, doc: object) -> object:
    box = [doc]  # so the root itself can be replaced
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        slots = [(box, 0)] + _slots(box[0], [])
        container, key = slots[data.draw(st.integers(0, len(slots) - 1), label="where")]
        op = data.draw(st.sampled_from(["drop", "replace", "replace", "add_key", "wrap"]), label="op")
        if op == "drop" and container is not box:
            del container[key]
        elif op == "add_key" and isinstance(container[key], dict):
            container[key][data.draw(st.text(max_size=12), label="key")] = data.draw(GARBAGE)
        elif op == "wrap":
            container[key] = data.draw(st.sampled_from([lambda v: [v], lambda v: {"value": v}]))(container[key])
        else:
            container[key] = data.draw(GARBAGE, label="value")
    return box[0]


def check(name: str, path: Path, **options) -> None:
    try:
        result = format_module(name).load(path, **options)
    except FormatError as exc:
        assert str(exc)  # a message the operator can read
        event("FormatError")
        return
    event("loaded")
    assert isinstance(result, ImportResult) and result.format == name
    for bundle in result.bundles:  # what was returned is itself valid and serialisable
        UserBundle.model_validate_json(bundle.model_dump_json())
    for pool in result.fillers:
        FillerPool.model_validate_json(pool.model_dump_json())


def _write_lines(path: Path, doc: object) -> Path:
    lines = doc if isinstance(doc, list) else [doc]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


@FUZZ
@given(st.data())
def test_native_user(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "alex.json"
        path.write_text(json.dumps(mutate(data, native_user())))
        check("native", path)


@FUZZ
@given(st.data(), st.sampled_from(sorted(prefeval_files())))
def test_prefeval_folder(data, which):
    files = prefeval_files()
    files[which] = mutate(data, files[which])
    with tempfile.TemporaryDirectory() as tmp:
        check("prefeval", write_tree(Path(tmp), files))


@FUZZ
@given(st.data(), st.sampled_from(sorted(prefeval_files())))
def test_prefeval_single_file(data, which):
    doc = mutate(data, prefeval_files()[which])
    with tempfile.TemporaryDirectory() as tmp:
        check("prefeval", write_tree(Path(tmp), {which: doc}) / which)


@FUZZ
@given(st.data(), st.booleans())
def test_cupid(data, as_jsonl):
    doc = mutate(data, cupid_instances())
    with tempfile.TemporaryDirectory() as tmp:
        if as_jsonl:
            path = _write_lines(Path(tmp) / "cupid.jsonl", doc)
        else:
            path = Path(tmp) / "cupid.json"
            path.write_text(json.dumps(doc))
        check("cupid", path)


@FUZZ
@given(st.data(), st.sampled_from(["a", "b"]))
def test_locomo(data, speaker):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "locomo.json"
        path.write_text(json.dumps(mutate(data, [locomo_sample()])))
        check("locomo", path, user_speaker=speaker)


@FUZZ
@given(st.data())
def test_chatlog_jsonl(data):
    with tempfile.TemporaryDirectory() as tmp:
        check("chatlog", _write_lines(Path(tmp) / "chat.jsonl", mutate(data, chat_records())))


@FUZZ
@given(st.data())
def test_chatlog_sharegpt_json(data):
    doc = json.loads((Path(__file__).parent / "fixtures" / "chat_sharegpt.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chat.json"
        path.write_text(json.dumps(mutate(data, doc)))
        check("chatlog", path)


@settings(max_examples=max(EXAMPLES * 2 // 3, 1), deadline=None)
@given(
    st.binary(max_size=300),
    st.sampled_from(["native", "prefeval", "cupid", "locomo", "chatlog"]),
    st.sampled_from([".json", ".jsonl"]),
)
def test_arbitrary_bytes(blob, name, suffix):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"blob{suffix}"
        path.write_bytes(blob)
        assert format_module(name).detect(path) in (True, False)
        check(name, path)
