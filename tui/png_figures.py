"""matplotlib figures as PNG files: drawn headless (Agg), sized to their labels, written whole or
not at all."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.outputs import replace_atomically

#: A panel's plot area is never narrower than this (inches): long tick labels widen the figure
#: rather than squeeze the bars.
MIN_PANEL_IN = 4.0


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed); imported only when drawing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(
    fig: Any,
    path: str | Path,
    *,
    titles: Iterable[tuple[Any, Any]] = (),
    protect: Iterable[str | Path] = (),
    force: bool = False,
) -> None:
    """Lay ``fig`` out (:func:`fit_titles` for each ``(axes, title)``), write it to ``path``
    (:func:`storage.output_files.replace_atomically`: never onto a protected file, over an
    existing one only with ``force``) and free it either way."""
    import matplotlib.pyplot as plt

    try:
        fit_titles(fig, list(titles))
        with replace_atomically(path, binary=True, protect=protect, force=force) as fh:
            fig.savefig(fh, format="png", dpi=120)
    finally:
        plt.close(fig)


def fit_titles(fig: Any, titles: list[tuple[Any, Any]]) -> None:
    """Lay the figure out, widening it until each panel is as wide as its title (a left-aligned
    title over a narrower panel runs into the colour bar or off the figure) and at least
    :data:`MIN_PANEL_IN`. Tick labels, legends and colour bars keep the room the layout gives them."""
    fig.tight_layout()
    for _ in range(4):  # the layout's margins barely move as the figure widens: one or two passes
        renderer = fig.canvas.get_renderer()
        short = 0.0
        for ax, title in titles:
            panel = ax.get_window_extent(renderer).width / fig.dpi
            needed = max(MIN_PANEL_IN, title.get_window_extent(renderer).width / fig.dpi)
            short = max(short, needed - panel)
        if short <= 0.02:
            return
        width, height = fig.get_size_inches()
        fig.set_size_inches(width + short + 0.1, height)
        fig.tight_layout()
