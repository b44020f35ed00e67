"""matplotlib figures as PNG files: drawn headless (Agg), written whole or not at all."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.outputs import replace_atomically


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed); imported only when drawing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig: Any, path: str | Path, *, protect: Iterable[str | Path] = (), force: bool = False) -> None:
    """Lay ``fig`` out, write it to ``path`` (:func:`storage.output_files.replace_atomically`: never
    onto a protected file, over an existing one only with ``force``) and free it either way."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    try:
        with replace_atomically(path, binary=True, protect=protect, force=force) as fh:
            fig.savefig(fh, format="png", dpi=120)
    finally:
        plt.close(fig)
