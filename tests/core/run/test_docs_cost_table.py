"""The docs' worked cost comparison (how-to/paper-scale.md) is what the estimator computes from the
price table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.run.cost_scenarios import SCENARIOS, grid_cost

README = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "paper-scale.md"
ROW = re.compile(r"^\| `(?P<model>[a-z]+:[^`]+)` \| \w+ \((?P<k>\d+)K\) \|(?P<cells>.*)\|$")


def _table_rows() -> list[re.Match]:
    text = README.read_text()
    section = text[text.index("**A worked cost comparison**") :]
    section = section[: section.index("```python")]
    return [m for line in section.splitlines() if (m := ROW.match(line))]


def test_the_readme_table_has_rows_for_both_providers_and_both_lengths():
    rows = _table_rows()
    assert {m["model"].split(":")[0] for m in rows} == {"anthropic", "openai"}
    assert {m["k"] for m in rows} == {"37", "247"}


@pytest.mark.parametrize("row", _table_rows(), ids=lambda m: f"{m['model']}-{m['k']}K")
def test_every_figure_of_the_readme_table_is_the_estimators(row):
    prompt = int(row["k"]) * 1000
    cost = grid_cost(
        row["model"],
        users=100,
        queries_per_user=13,
        histories_per_user=4,
        prompt_tokens=prompt,
        shared_prefix_tokens=prompt - 100,
        output_tokens=400,
    )
    shown = [float(c.strip().lstrip("$").replace(",", "")) for c in row["cells"].split("|")]
    assert shown == [round(cost.usd[s.name], 2) for s in SCENARIOS]
    assert cost.fits_window is True, "the README lists only grids the model's window takes"
    assert cost.usd["caching"] < cost.usd["list"]
