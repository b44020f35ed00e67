"""Annotation mode (`prefscope annotate QUEUE`, ``tui.cli.open_app.annotate_app``): queues built by
``storage.annotation_queues`` from batches the real `batch` command stored (demo models, heuristic
judge), labelled blind through Pilot key presses, the labels read back from SQLite and compared
with sklearn's kappas and the krippendorff package's alpha (real app, real SQLite)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sqlite3

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from storage.agreement import agreement
from storage.annotation_queues import AnnotationError, QueueSpec, create_queue, queue, serving_order
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.tui.conftest import settle, workbench
from tests.tui.test_attributes_relevance import store_extraction
from tests.tui.test_heatmap_screen import screen_text
from tests.waiting import await_until
from tui.cli.open_app import annotate_app
from tui.screens.annotate import AnnotateScreen

MODELS = ["demo:oracle", "demo:generic", "demo:violator"]
DIMENSIONS = ("awareness", "alignment", "quality")


@pytest.fixture(scope="module")
def stored_batch(tmp_path_factory):
    """Maya's and Priya's open queries at E1, normal context, three demo models, heuristic scores:
    48 answers in batch ``b``, stored once per module by the real `batch` command."""
    root = tmp_path_factory.mktemp("annotate")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
        mp.setenv("XDG_CONFIG_HOME", str(root / "config"))
        mp.delenv("PREFSCOPE_CONFIG", raising=False)
        wb = workbench(root / "batch.db")
        cli(str(wb.db_path), "batch", "--name", "b", "--user", "maya", "--user", "priya", "--query-kind", "open",
            "--expression", "1", "--context", "normal", *[x for m in MODELS for x in ("--model", m)],
            "--judge", "demo:heuristic", "-y")  # fmt: skip
        wb.close()
    return root / "batch.db"


@pytest.fixture
def batch(stored_batch, tmp_path):
    """A copy of the stored batch for this test."""
    path = tmp_path / "prefscope.db"
    with sqlite3.connect(stored_batch) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    return workbench(path)


def words(text: str) -> str:
    return " ".join(text.split())


def opening(text: str, n: int = 6) -> str:
    """The first ``n`` words of an answer, as the screen shows them (markdown is not rendered)."""
    return " ".join(text.split()[:n])


def run_facts(wb) -> tuple[str, str]:
    ((method, context),) = wb.db.execute("SELECT DISTINCT method, context FROM runs WHERE label = 'b'").fetchall()
    return method, context


def hidden_words(wb, item) -> list[str]:
    """What blind mode must keep off the screen for ``item``: the batch's model ids and their bare
    names, the judge, the metric names the judges' scores are listed under, the method and the context.
    A bare word the item's own text uses (an answer saying "normal") is checked where it is a fact
    ("context normal")."""
    method, context = run_facts(wb)
    shown = " ".join([item.query, item.preference, *item.shown, item.target_text]).lower()
    candidates = [*MODELS, *(m.split(":")[1] for m in MODELS), "demo:", "heuristic", "rubric:", method, context]
    out = [w for w in candidates if w.lower() not in shown]
    return out + [f"method {method}", f"context {context}"]


def assert_blind(wb, app, item) -> str:
    text = screen_text(app)
    leaked = [w for w in hidden_words(wb, item) if w.lower() in text.lower()]
    assert not leaked, (leaked, text)
    return text


def errors(app) -> list[str]:
    return [str(n.message) for n in app._notifications if n.severity == "error"]


def status_of(text: str) -> str:
    found = re.search(r"item \d+ of \d+ \(done \d+, skipped \d+\)", text)
    assert found, text
    return found.group(0)


async def on_item(pilot, app) -> AnnotateScreen:
    await await_until(
        lambda: isinstance(app.screen, AnnotateScreen) and app.screen.state in ("labelling", "finished"),
        what="an item to label",
    )
    await pilot.pause()
    return app.screen


# -- the labels each test annotator gives --------------------------------------------------------


def h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def labels_for(annotator: str, answer: str) -> dict[str, int]:
    """Deterministic scores from the answer text shown: ann's from its hash; bob agrees with ann on
    about two items in three and is one point off on the others (so kappa is neither 0 nor 1)."""
    x = h(answer)
    ann = {d: 1 + (x // 5**i) % 5 for i, d in enumerate(DIMENSIONS)}
    if annotator == "ann":
        return ann
    off = (x // 125) % 3 == 0
    return {d: (v % 5) + 1 if off else v for d, v in ann.items()}


async def label_answer(pilot, annotator: str, answer: str, *, navigate: bool = False) -> dict[str, int]:
    """Score the answer on screen with keys: the three digits in order (the mark moves on to the
    next dimension) and s. ``navigate``: go down to alignment first, back up to awareness, and save
    with ctrl+s instead."""
    scores = labels_for(annotator, answer)
    if navigate:
        await pilot.press("down", str(scores["alignment"]), str(scores["quality"]), "up", "up")
        await pilot.press(str(scores["awareness"]), "ctrl+s")
    else:
        await pilot.press(*[str(scores[d]) for d in DIMENSIONS], "s")
    return scores


# -- acceptance: two annotators, 30 items, agreement as sklearn and krippendorff compute it ---------


async def label_whole_queue(wb, name: str, annotator: str) -> dict[str, dict[str, int]]:
    """``annotator`` labels every item of ``name`` through key presses, checking blindness before and
    the reveal after each save; returns response id -> the scores the test chose."""
    chosen: dict[str, dict[str, int]] = {}
    app = annotate_app({"db": str(wb.db_path)}, name, annotator)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await on_item(pilot, app)
        size = queue(wb.db, name).size
        for k in range(1, size + 1):
            item = screen.item
            assert screen.state == "labelling" and item is not None
            text = assert_blind(wb, app, item)
            assert f"queue {name} · {annotator} · item {k} of {size} (done {k - 1}, skipped 0)" in text
            assert opening(item.shown[0]) in words(text)  # the answer is on screen
            assert words(item.query)[:40] in words(text)
            navigate = annotator == "bob" and k <= 2  # the arrow keys and ctrl+s work too
            chosen[item.response_id] = await label_answer(pilot, annotator, item.shown[0], navigate=navigate)
            assert screen.state == "revealed", errors(app)
            shown = screen_text(app)
            revealed = screen.revealed
            assert revealed.models[0] in shown and "revealed" in shown  # the model now shows
            assert "rubric:alignment" in shown and "demo:heuristic" in shown
            await pilot.press("enter")
        assert screen.state == "finished"
        assert f"queue finished: {size} labelled, 0 skipped" in screen_text(app)
        assert errors(app) == []
        await pilot.press("escape")  # opened from the command line: esc quits
        await await_until(lambda: not app.is_running, what="the app to quit")
    return chosen


def stored_scores(wb, annotator: str, dimension: str) -> dict[str, float]:
    rows = wb.db.execute(
        "SELECT response_id, score FROM judgments WHERE judge_model = ? AND human = 1 AND kind = 'rubric' "
        "AND dimension = ? ORDER BY id",
        [f"human:{annotator}", dimension],
    ).fetchall()
    return dict(rows)


@pytest.mark.slow  # 300 key presses at Pilot's pace
async def test_two_annotators_label_a_queue_and_agreement_matches_sklearn_and_krippendorff(batch):
    wb = batch
    create_queue(wb.db, "lab", QueueSpec(batches=["b"], sample=30))
    # the two label at the same time, each in their own session on the same database
    ann, bob = await asyncio.gather(label_whole_queue(wb, "lab", "ann"), label_whole_queue(wb, "lab", "bob"))
    assert set(ann) == set(bob) and len(ann) == 30
    items = sorted(ann)

    for who, chosen in (("ann", ann), ("bob", bob)):  # 30 labels per annotator per dimension, kept apart
        for d in DIMENSIONS:
            assert stored_scores(wb, who, d) == {rid: float(s[d]) for rid, s in chosen.items()}
    progress = wb.db.execute("SELECT annotator, count(*), sum(skipped) FROM annotation_done GROUP BY annotator")
    assert sorted(map(tuple, progress)) == [("ann", 30, 0), ("bob", 30, 0)]

    (dim,) = [d for d in agreement(wb.db, queue="lab") if d.dimension == "rubric:alignment"]
    assert dim.raters == ("ann", "bob", "demo:heuristic") and dim.items == 30
    (pair,) = [p for p in dim.pairs if (p.rater_a, p.rater_b) == ("ann", "bob")]
    a = [ann[r]["alignment"] for r in items]
    b = [bob[r]["alignment"] for r in items]
    assert 0 < sum(x == y for x, y in zip(a, b)) < 30  # they partly agree
    assert pair.n == 30 and pair.exact == pytest.approx(np.mean([x == y for x, y in zip(a, b)]))
    assert pair.cohen_kappa == pytest.approx(cohen_kappa_score(a, b))
    labels = [1, 2, 3, 4, 5]
    assert pair.weighted_kappa_linear == pytest.approx(cohen_kappa_score(a, b, labels=labels, weights="linear"))
    assert pair.weighted_kappa_quadratic == pytest.approx(cohen_kappa_score(a, b, labels=labels, weights="quadratic"))
    judge = dict(
        wb.db.execute(
            "SELECT response_id, score FROM judgments WHERE judge_model = 'demo:heuristic' AND kind = 'rubric' "
            "AND dimension = 'alignment' ORDER BY id"
        ).fetchall()
    )
    matrix = np.array([a, b, [judge[r] for r in items]], dtype=float)
    assert dim.alpha == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"))


# -- resuming ------------------------------------------------------------------------------------


async def test_leaving_mid_queue_and_reopening_serves_the_first_unfinished_item(batch):
    wb = batch
    q = create_queue(wb.db, "lab", QueueSpec(batches=["b"], sample=10))
    order = serving_order(q, "ann")
    app = annotate_app({"db": str(wb.db_path)}, "lab", "ann")
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await on_item(pilot, app)
        assert screen.item.position == order[0]
        await label_answer(pilot, "ann", screen.item.shown[0])
        await pilot.press("enter")
        await pilot.pause()
        assert screen.item.position == order[1]
        await pilot.press("x")  # skip the second
        await pilot.pause()
        assert screen.item.position == order[2] and screen.state == "labelling"
        await pilot.press("3")  # a score given but not saved: not stored
        await pilot.press("escape")
        await await_until(lambda: not app.is_running, what="the app to quit")
    assert wb.db.execute("SELECT count(*) FROM judgments WHERE human = 1").fetchone()[0] == 3  # one item, 3 dims

    # another annotator starts from their own first item, and labels it
    app = annotate_app({"db": str(wb.db_path)}, "lab", "bob")
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await on_item(pilot, app)
        assert status_of(screen_text(app)) == "item 1 of 10 (done 0, skipped 0)"
        assert screen.item.position == serving_order(q, "bob")[0]
        await label_answer(pilot, "bob", screen.item.shown[0])
        assert screen.state == "revealed"

    app = annotate_app({"db": str(wb.db_path)}, "lab", "ann")  # two annotators' labels stored: still opens
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await on_item(pilot, app)
        text = screen_text(app)
        assert status_of(text) == "item 3 of 10 (done 1, skipped 1)"
        assert screen.item.position == order[2]
        assert opening(screen.item.shown[0]) in words(text)
        assert errors(app) == []


# -- pairs: what was shown as A is what is stored as A ---------------------------------------------


def left_and_right(text: str, width: int) -> tuple[str, str]:
    lines = text.splitlines()
    return words(" ".join(x[: width // 2] for x in lines)), words(" ".join(x[width // 2 :] for x in lines))


async def test_pair_items_are_blind_and_the_stored_order_is_the_one_shown(batch):
    wb = batch
    create_queue(wb.db, "pairs", QueueSpec(kind="pair", batches=["b"], sample=6, seed=3))
    texts = dict(wb.db.execute("SELECT id, text FROM responses").fetchall())
    choices = ["a", "b", "t", "a", "b", "a"]
    app = annotate_app({"db": str(wb.db_path)}, "pairs", "ann")
    seen: list[tuple[str, str, str]] = []  # (judgment's response, the response shown as A, key)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await on_item(pilot, app)
        for key in choices:
            item = screen.item
            text = assert_blind(wb, app, item)
            left, right = left_and_right(text, 120)
            a_ids = [r for r in (item.response_id, item.other_response_id) if opening(texts[r]) in left]
            b_ids = [r for r in (item.response_id, item.other_response_id) if opening(texts[r]) in right]
            assert len(a_ids) == 1 and len(b_ids) == 1 and a_ids != b_ids, text
            seen.append((item.response_id, a_ids[0], key))
            await pilot.press(key)
            await pilot.pause()
            shown = screen_text(app)
            assert screen.state == "revealed" and all(m in shown for m in screen.revealed.models), shown
            assert "(shown as A)" in shown and "(shown as B)" in shown
            await pilot.press("n")  # n goes on too
            await pilot.pause()
        assert screen.state == "finished" and errors(app) == []
    rows = wb.db.execute(
        "SELECT response_id, score, extra FROM judgments WHERE human = 1 AND kind = 'pairwise' ORDER BY id"
    ).fetchall()
    assert len(rows) == len(choices)
    for (rid, score, extra), (item_rid, shown_a, key) in zip(rows, seen):
        extra = json.loads(extra)
        assert rid == item_rid
        assert extra["order"][0] == shown_a  # what was displayed as A
        assert extra["shown_first"] == (1 if shown_a == rid else 2)
        assert extra["label"] == {"a": "A", "b": "B", "t": "tie"}[key] and extra["annotator"] == "ann"
        a_won = {"a": 1.0, "b": 0.0, "t": 0.5}[key]
        assert score == (a_won if shown_a == rid else 1.0 - a_won)  # answer 1's outcome


# -- the name, the note, refusals ------------------------------------------------------------------


async def test_without_an_annotator_the_name_is_asked_first_and_checked(batch):
    wb = batch
    create_queue(wb.db, "lab", QueueSpec(batches=["b"], sample=3))
    app = annotate_app({"db": str(wb.db_path)}, "lab", None)
    async with app.run_test(size=(80, 24)) as pilot:
        await await_until(lambda: isinstance(app.screen, AnnotateScreen), what="annotation mode")
        await settle(pilot, app)
        screen = app.screen
        assert screen.state == "asking" and "Who is labelling?" in screen_text(app)
        await pilot.press("a", "space", "b", "enter")  # "a b": no spaces in a name
        await pilot.pause()
        assert screen.state == "asking" and any("annotator" in e for e in errors(app))
        await pilot.press("ctrl+u", *"carol", "enter")
        screen = await on_item(pilot, app)
        assert screen.annotator == "carol" and "queue lab · carol · item 1 of 3" in screen_text(app)
        await pilot.press("o", *"long", "enter")  # a note, kept with the label
        await pilot.pause()
        assert "your note: long" in words(screen_text(app))
        await pilot.press("s")  # no score yet: refused, nothing stored
        await pilot.pause()
        assert screen.state == "labelling"
        assert wb.db.execute("SELECT count(*) FROM judgments WHERE human = 1").fetchone()[0] == 0
        await pilot.press("2", "s")
        await pilot.pause()
        assert screen.state == "revealed"
    rows = wb.db.execute("SELECT judge_model, dimension, score, rationale FROM judgments WHERE human = 1").fetchall()
    assert [tuple(r) for r in rows] == [("human:carol", "awareness", 2.0, "long")]


@pytest.fixture
def one_model(tmp_path, unpaced_demo_models):  # noqa: F811
    """A workbench whose config names the annotator, and a non-blind queue of two oracle answers."""
    wb = workbench(tmp_path / "prefscope.db", annotator="dora")
    cli(str(wb.db_path), "batch", "--name", "b", "--user", "maya", "--query-kind", "open", "--expression", "1",
        "--context", "simple", "--model", "demo:oracle", "--judge", "demo:heuristic", "-y")  # fmt: skip
    create_queue(wb.db, "lab", QueueSpec(batches=["b"], sample=2, blind=False))
    return wb


async def test_the_configured_annotator_is_used_and_a_bad_queue_is_refused(one_model):
    wb = one_model
    with pytest.raises(AnnotationError, match="no annotation queue 'nope'"):
        annotate_app({"db": str(wb.db_path)}, "nope", "ann")
    with pytest.raises(AnnotationError, match="annotator"):
        annotate_app({"db": str(wb.db_path)}, "lab", "two words")
    assert AnnotateScreen(wb, "lab", None).annotator == "dora"  # the config's annotator
    app = annotate_app({"db": str(wb.db_path)}, "lab", "dora")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await on_item(pilot, app)
        text = screen_text(app)
        assert "not blind" in text and "demo:oracle" in text  # not blind: shown from the start
        await pilot.press("5", "s")  # saved and straight on
        await pilot.pause()
        assert screen.state == "labelling" and status_of(screen_text(app)) == "item 2 of 2 (done 1, skipped 0)"


# -- relevance and attribute items -------------------------------------------------------------------


async def test_attribute_and_relevance_items_take_their_keys(batch):
    wb = batch
    extraction = store_extraction(wb)
    create_queue(wb.db, "attrs", QueueSpec(kind="attribute", batches=["b"], where=["user=maya"]))
    run_id = wb.db.execute("SELECT id FROM runs WHERE label = 'b' AND user_id = 'maya' LIMIT 1").fetchone()[0]
    wb.decide_relevance(wb.load_run(run_id), wb.user("maya"))
    create_queue(wb.db, "rel", QueueSpec(kind="relevance", run_ids=[run_id], sample=2))

    app = annotate_app({"db": str(wb.db_path)}, "attrs", "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await on_item(pilot, app)
        for key in ("a", "r"):
            assert screen.item.target_text in words(screen_text(app))
            assert "Is this extracted attribute right about the user?" in screen_text(app)
            await pilot.press(key)
            await pilot.pause()
            assert screen.state == "revealed"
            await pilot.press("enter")
        assert screen.state == "finished"
    verdicts = wb.db.execute(
        "SELECT attribute_id, verdict FROM attribute_labels WHERE extraction_id = ? AND annotator = 'ann'",
        [extraction],
    ).fetchall()
    assert sorted(v for _, v in verdicts) == ["accept", "reject"]

    app = annotate_app({"db": str(wb.db_path)}, "rel", "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await on_item(pilot, app)
        assert "relevant to the query?" in screen_text(app)
        await pilot.press("y")
        await pilot.pause()
        assert screen.state == "revealed"
        await pilot.press("enter", "n")  # next, then: not relevant
        await pilot.pause()
        assert screen.state == "revealed"
    labels = wb.db.execute(
        "SELECT relevant FROM relevance WHERE decider = 'human' AND decider_model = 'ann' ORDER BY id"
    ).fetchall()
    assert [r[0] for r in labels] == [1, 0]
