"""Regenerate the README screenshots from the real app with the offline demo models.

    .venv/bin/python docs/make_screenshots.py      # needs rsvg-convert (Debian: librsvg2-bin)

Drives the workbench headlessly on a fresh temporary database (sample data, demo models), saves
Textual's SVG screenshots and converts them to PNG next to this file.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "screenshots"
sys.path.insert(0, str(HERE.parent.parent))


async def settle(app, pilot) -> None:
    await pilot.pause()
    while any(w.is_running for w in app.workers) or (
        getattr(app.screen, "run_view", None) and app.screen.run_view.running
    ):
        await asyncio.sleep(0.05)
    await pilot.pause(0.3)


async def shoot(
    db: Path,
    size: tuple[int, int],
    name: str,
    *,
    reasons: bool = False,
    tab: str | None = None,
    keys: tuple[str, ...] = (),
) -> None:
    from app.workbench import Workbench
    from core.settings import load_settings
    from tui.app import make_app

    settings = load_settings(db=db, demo_tokens_per_s=400)
    workbench = Workbench(settings)
    workbench.ensure_sample_data()
    app = make_app(
        settings,
        workbench,
        models=["demo:generic", "demo:retrieval", "demo:oracle"],
        initial_user="maya",
        remember_theme=False,
    )
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+r")
        await asyncio.sleep(0.5)
        await settle(app, pilot)
        if reasons:
            await pilot.press("r")
        if tab:
            app.screen.show_tab(tab)
        for key in keys:  # as a user would type them, after the run
            await pilot.press(key)
            await pilot.pause(0.2)
        await settle(app, pilot)
        await pilot.pause(0.3)
        svg = HERE / f"{name}.svg"
        app.save_screenshot(filename=svg.name, path=str(HERE))
    subprocess.run(["rsvg-convert", "-o", str(HERE / f"{name}.png"), str(svg)], check=True)
    svg.unlink()
    print("wrote", HERE / f"{name}.png")


async def main() -> None:
    if not shutil.which("rsvg-convert"):
        raise SystemExit("rsvg-convert not found (apt-get install librsvg2-bin)")
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "shots.db"
        await shoot(db, (200, 50), "main")
        await shoot(db, (200, 50), "evidence", tab="evidence")
        await shoot(db, (200, 50), "reasons-judges", reasons=True, tab="judges")
        await shoot(db, (80, 24), "narrow-80x24")
        # The Runs tab's results grid (5 runs × 3 models by now), grouped by model.
        await shoot(db, (200, 50), "runs-grid", keys=("6", "g", "g", "g"))
        await shoot(db, (80, 24), "narrow-runs-80x24", keys=("6",))
        # Two answers of the latest run side by side with a word diff.
        await shoot(db, (200, 50), "compare", keys=("6", "space", "down", "down", "space", "c"))
        # f4: the answers Mixtral 8x7B really gave, recorded by PrefEval (needs ../shared/datasets/prefeval).
        await shoot(db, (200, 50), "real-answers", keys=("f4",))


if __name__ == "__main__":
    asyncio.run(main())
