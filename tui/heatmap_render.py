"""Drawing :class:`core.analysis.heatmap.Heatmap`\\ s: a coloured rich table for the terminal (the
CLI and the TUI both show this one) and a PNG (matplotlib, Agg).

Colour runs red (the scale's low end) → yellow → green (high end), over the judgments' own scale
when known, else over the values shown. Every cell prints its mean and, small, its n, so the colour
is never the only carrier of a number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.color import Color
from rich.style import Style
from rich.table import Table
from rich.text import Text

from core.analysis.heatmap import Heatmap
from tui.png_figures import pyplot, save_png
from tui.safe_text import safe_text

LOW, MID, HIGH = (178, 34, 34), (218, 165, 32), (34, 139, 34)


def value_range(h: Heatmap) -> tuple[float, float]:
    if h.scale:
        return h.scale
    values = [v for row in h.means for v in row if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    return (lo, hi) if hi > lo else (lo, lo + 1)


def cell_rgb(value: float, lo: float, hi: float) -> tuple[int, int, int]:
    f = max(0.0, min(1.0, (value - lo) / (hi - lo)))
    a, b, t = (LOW, MID, f * 2) if f < 0.5 else (MID, HIGH, (f - 0.5) * 2)
    r, g, b_ = (round(x + (y - x) * t) for x, y in zip(a, b))
    return r, g, b_


def _label(v) -> str:
    if v is None:
        return "none"
    return f"{v:g}" if isinstance(v, float) else str(v)


def heatmap_table(h: Heatmap) -> Table:
    """Rows × columns of "mean (n)" cells on their colour; a blank cell has no score."""
    lo, hi = value_range(h)
    table = Table(
        title=safe_text(f"{h.title}\n{h.panel}"),
        title_justify="left",
        caption=safe_text(f"rows: {h.row_factor} · columns: {h.col_factor} · colour {lo:g} (red) … {hi:g} (green)"),
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column(safe_text(f"{h.row_factor} \\ {h.col_factor}"), no_wrap=True)
    for c in h.cols:
        table.add_column(safe_text(_label(c)), justify="center", no_wrap=True)
    for r, means, counts in zip(h.rows, h.means, h.counts):
        cells: list[Text] = [safe_text(_label(r))]
        for mean, n in zip(means, counts):
            if mean is None:
                cells.append(Text("·", style="dim"))
                continue
            rgb = cell_rgb(mean, lo, hi)
            ink = "black" if sum(rgb) > 330 else "white"
            cell = Text(f" {mean:.2f} ", style=Style(bgcolor=Color.from_rgb(*rgb), color=ink, bold=True))
            cell.append(f"n={n} ", style=Style(bgcolor=Color.from_rgb(*rgb), color=ink))
            cells.append(cell)
        table.add_row(*cells)
    return table


def write_heatmaps_png(
    maps: Sequence[Heatmap], path: str | Path, *, protect: Iterable[str | Path] = (), force: bool = False
) -> None:
    """One annotated heatmap panel per :class:`Heatmap`, written whole or not at all (as report PNGs)."""
    fig, titles = heatmaps_figure(maps)
    save_png(fig, path, titles=titles, protect=protect, force=force)


def heatmaps_figure(maps: Sequence[Heatmap]) -> tuple[Any, list[tuple[Any, Any]]]:
    """The figure and each panel's (axes, title): rows and columns named by their factor values,
    each cell's mean and n printed on it, a colour bar over the judge's scale; the figure is
    widened until each panel's title fits over the panel (never over its colour bar)."""
    plt = pyplot()
    from matplotlib.colors import LinearSegmentedColormap

    drawable = [h for h in maps if h.rows and h.cols]
    if not drawable:
        raise ValueError("nothing to plot: the heatmap has no cells")
    colours = [tuple(c / 255 for c in x) for x in (LOW, MID, HIGH)]
    cmap = LinearSegmentedColormap.from_list("prefscope", colours).with_extremes(bad="#eeeeee")
    fig, axes = plt.subplots(
        len(drawable),
        1,
        figsize=(
            max(5.0, 1.1 * max(len(h.cols) for h in drawable) + 2.5),
            sum(0.6 * (len(h.rows) + 2) + 0.4 for h in drawable),  # + 0.4: the two-line title
        ),
        squeeze=False,
    )
    titles = []
    for ax, h in zip(axes[:, 0], drawable):
        lo, hi = value_range(h)
        grid = [[float("nan") if v is None else v for v in row] for row in h.means]
        image = ax.imshow(grid, cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
        ax.set_xticks(range(len(h.cols)), [_label(c) for c in h.cols], fontsize=8)
        ax.set_yticks(range(len(h.rows)), [_label(r) for r in h.rows], fontsize=8)
        ax.set_xlabel(h.col_factor)
        ax.set_ylabel(h.row_factor)
        titles.append((ax, ax.set_title(f"{h.title}\n{h.panel}", fontsize=9, loc="left")))
        for i, row in enumerate(h.means):
            for j, v in enumerate(row):
                if v is not None:
                    ax.text(j, i, f"{v:.2f}\nn={h.counts[i][j]}", ha="center", va="center", fontsize=7)
        fig.colorbar(image, ax=ax, fraction=0.04, label="mean")
    return fig, titles
