"""Reports answer the question asked: every bar names what it is (LoCoMo's categories in the
terminal and the PNG), line figures use the judge's scale, heatmap titles fit over their panels,
score columns stay whole in a narrow terminal, and `--batch` patterns report one imported file's
runs only (the README's Mixtral recipe).

The PNG figures are read back as matplotlib objects: ``save_png`` closes each figure after writing
it, and the tests keep them open instead."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.conftest import dataset
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data"
LOCOMO_CATEGORIES = ("4 single-hop", "1 multi-hop", "2 temporal", "3 open-domain", "5 adversarial", "overall")


@pytest.fixture
def figures(monkeypatch) -> list:
    """The figures the command draws, kept open after they are written."""
    import matplotlib.pyplot as plt

    kept: list = []
    monkeypatch.setattr(plt, "close", kept.append)
    return kept


def _ticks(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


@pytest.fixture
def locomo(tmp_path) -> str:
    db = str(tmp_path / "l.db")
    cli(db, "import", str(dataset("locomo", "locomo10_conv-30.json")))
    cli(
        db,
        *("batch", "--name", "loc", "--user", "locomo-conv-30", "--method", "locomo-qa", "--context", "full"),
        *("--model", "demo:oracle", "--model", "demo:generic", "--judge", "locomo", "--yes"),
    )
    return db


def test_locomo_category_bars_name_their_category_in_the_terminal(locomo, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = cli(locomo, "report", "--batch", "loc")
    chart = out[out.index("LoCoMo QA F1") :]
    bars = [ln for ln in chart.splitlines() if ln.startswith("demo:")][-12:]  # the chart under the table
    assert len(bars) == 12 and len(set(b.split("  ")[0] for b in bars)) == 12, bars
    for model in ("demo:generic", "demo:oracle"):
        mine = [b for b in bars if b.startswith(model)]
        assert [c for c in LOCOMO_CATEGORIES if any(c in b for b in mine)] == list(LOCOMO_CATEGORIES), mine


def test_locomo_category_bars_name_their_category_in_the_png(locomo, tmp_path, figures):
    """One bar per model × category, named so, each as long as that category's accuracy (the rows
    are grouped by category, not one mean repeated)."""
    cli(locomo, "report", "--batch", "loc", "--png", str(tmp_path / "loc.png"))
    (fig,) = figures
    panel = next(ax for ax in fig.axes if ax.get_title(loc="left").startswith("LoCoMo QA F1"))
    ticks = _ticks(panel)
    assert len(ticks) == 12 and len(set(ticks)) == 12, ticks
    for model in ("demo:generic", "demo:oracle"):
        assert [t.split(" · ")[1] for t in ticks if t.startswith(model)] == list(LOCOMO_CATEGORIES)
    tables = json.loads(cli(locomo, "report", "--batch", "loc", "--json"))["tables"]
    (section,) = (t for t in tables if t["title"].startswith("LoCoMo QA F1"))
    expected = [r["accuracy"] for r in section["rows"]]
    drawn = [bar.get_width() for bar in panel.patches]
    assert drawn == pytest.approx([float("nan") if v is None else v for v in expected], nan_ok=True)


def _prefeval_results(tmp_path):
    """PrefEval generation results of one model at 2 and 10 inter turns (3 records each)."""
    records = [
        {
            "preference": f"I avoid seafood {i}.",
            "question": f"Where should I eat in Lisbon {i}?",
            "response_to_pref": "Noted.",
            "response_to_q": "Try the grilled sardines." if i % 2 else "Try a steakhouse, no seafood.",
        }
        for i in range(3)
    ]
    folder = tmp_path / "results" / "remind" / "travel_restaurant"
    folder.mkdir(parents=True)
    for turns in (2, 10):
        (folder / f"claude3hk_travel_restaurant_{turns}interturn.json").write_text(json.dumps(records))
    return tmp_path / "results"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Iterator[str]:
    """Imported PrefEval answers (judged) next to a demo batch on the sample users, as after the README's steps."""
    mp = pytest.MonkeyPatch()
    mp.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    tmp = tmp_path_factory.mktemp("mixed")
    db = str(tmp / "m.db")
    cli(db, "import", str(SAMPLE / "users"))
    cli(db, "import", str(SAMPLE / "filler"))
    cli(
        db,
        *("batch", "--name", "demo", "--user", "maya", "--query-kind", "open", "--context", "simple"),
        *("--context", "normal", "--model", "demo:oracle", "--model", "demo:generic", "--judge", "demo:heuristic"),
        "--yes",
    )
    cli(db, "import-results", str(_prefeval_results(tmp)))
    cli(db, "judge", "--label", "imported:remind/*", "--judge", "demo:heuristic")
    yield db
    mp.undo()


def test_a_batch_pattern_reports_the_imported_runs_only(mixed):
    out = cli(mixed, "report", "--batch", "imported:remind/*", "--by", "turns,model", "--json")
    (table,) = json.loads(out)["tables"]
    assert {(r["turns"], r["model"]) for r in table["rows"]} == {(2, "imported:claude3hk"), (10, "imported:claude3hk")}
    assert all(r["n"] == 3 for r in table["rows"])
    models = json.loads(cli(mixed, "report", "--model", "demo:*", "--json"))["tables"][0]["rows"]
    assert {r["model"] for r in models} == {"demo:oracle [demo]", "demo:generic [demo]"}


def test_a_pattern_that_matches_nothing_is_one_red_line(mixed):
    result = CliRunner().invoke(main, ["--db", mixed, "report", "--batch", "imported:nothing/*"])
    assert result.exit_code == 1 and "no stored batch matches 'imported:nothing/*'" in result.output


def test_turns_figure_uses_the_judges_scale(mixed, tmp_path, figures):
    cli(mixed, "report", "--model", "imported:claude3hk", "--figure", "turns", "--png", str(tmp_path / "turns.png"))
    (fig,) = figures
    (ax,) = fig.axes
    assert ax.get_ylim() == (1.0, 5.0)  # the heuristic judge's 1–5, however flat the line
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "10"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["imported:claude3hk"]


def test_context_figure_uses_the_judges_scale(mixed, tmp_path, figures):
    cli(mixed, "report", "--batch", "demo", "--figure", "context", "--png", str(tmp_path / "context.png"))
    (fig,) = figures
    (ax,) = fig.axes
    assert ax.get_ylim() == (1.0, 5.0)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["simple", "normal"]
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == ["demo:generic [demo]", "demo:oracle [demo]"]


def _is_title_of(artist, ax) -> bool:
    from matplotlib.text import Text

    return isinstance(artist, Text) and artist.get_text() == ax.get_title(loc="left")


def _inside(inner, outer, slack: float = 1.0) -> bool:
    return inner.x0 >= outer.x0 - slack and inner.x1 <= outer.x1 + slack


def test_heatmap_panel_titles_fit_over_their_panels(mixed, tmp_path, figures):
    """Three factors: one panel per model, each titled with its judge and model; every title stays
    over its own panel (clear of the colour bar) and inside the figure."""
    png = tmp_path / "heat.png"
    cli(mixed, "report", "--batch", "demo", "--by", "expression_type,context,model", "--heatmap", "--png", str(png))
    (fig,) = figures
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    panels = [ax for ax in fig.axes if ax.get_title(loc="left")]
    assert [ax.get_title(loc="left").rsplit("model=", 1)[1] for ax in panels] == ["demo:generic", "demo:oracle"]
    for ax in panels:
        (title,) = (t.get_window_extent(renderer) for t in ax.get_children() if _is_title_of(t, ax))
        assert _inside(title, ax.get_window_extent(renderer)), ax.get_title(loc="left")
        assert _inside(title, page)
    for bar in (ax for ax in fig.axes if not ax.get_title(loc="left")):  # the colour bars
        assert bar.get_ylim() == (1.0, 5.0)


def test_bar_png_labels_every_bar_and_puts_the_judge_in_the_title(mixed, tmp_path, figures):
    cli(mixed, "report", "--batch", "demo", "--by", "context,model", "--png", str(tmp_path / "bars.png"))
    (fig,) = figures
    (ax,) = fig.axes
    assert _ticks(ax) == [f"{c} · demo:{m} [demo]" for c in ("normal", "simple") for m in ("generic", "oracle")]
    assert ax.get_title(loc="left").endswith("heuristic · demo:heuristic") and ax.get_xlim() == (1.0, 5.0)


def test_score_columns_stay_whole_at_80_columns(mixed, monkeypatch):
    """Long user, query and model ids are cut from the middle, never the numbers; rows stay distinct."""
    monkeypatch.setenv("COLUMNS", "80")
    out = cli(mixed, "report", "--batch", "imported:*", "--by", "user,query,turns,model", "--no-chart")
    lines = out.splitlines()
    assert lines[2].split()[-6:] == ["model", "n", "failed", "mean", "low", "high"], lines[:3]
    rows = [ln.split() for ln in lines if ln.startswith("prefeval")]
    assert len(rows) == 6 and all(len(ln) <= 80 for ln in lines)
    assert all(len(r) == 9 and r[4:6] == ["1", "0"] and re.fullmatch(r"\d\.\d{3}", r[6]) for r in rows), rows
    assert all("…" in r[0] and "…" in r[1] for r in rows), rows
    assert len({tuple(r[:3]) for r in rows}) == 6  # user · query · turns still tell the rows apart


def test_a_metric_without_a_scale_charts_over_its_data_and_intervals_and_says_so():
    from core.analysis.report import ReportTable
    from tui.cli.report_view import bar_chart

    table = ReportTable(
        "lm-eval by model",
        ["model", "mean", "ci_low", "ci_high"],
        [["a", 0.5, 0.0, 1.0], ["b", 0.25, 0.1, 0.4]],
        value_column="mean",
    )
    head = bar_chart(table).plain.splitlines()[0]
    assert head == "mean (no recorded scale: 0–1 from the data)"  # the axis holds the widest interval
    scaled = ReportTable("t", ["model", "mean"], [["a", 4.0]], value_column="mean", scale=(1.0, 5.0))
    assert bar_chart(scaled).plain.splitlines()[0] == "mean (scale 1–5)"
