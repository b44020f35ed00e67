"""Regenerate the README screenshots from the real app with the offline demo models.

    .venv/bin/python docs/make_screenshots.py                          # into the outputs folder
    .venv/bin/python docs/make_screenshots.py --out docs/screenshots   # replace the committed ones

Drives the workbench headlessly on a fresh temporary database (sample data, demo models), saves
Textual's SVG screenshots and converts them to PNG (needs rsvg-convert; Debian: librsvg2-bin).
Without --out they go to ``screenshots/`` in the outputs folder (`prefscope paths`): the committed
PNGs in docs/screenshots/ are replaced only when --out names that folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

#: name -> (terminal size, shoot's options); in this order, on one database (later shots see earlier runs).
SHOTS: dict[str, tuple[tuple[int, int], dict]] = {
    "main": ((200, 50), {}),
    "evidence": ((200, 50), {"tab": "evidence"}),
    "reasons-judges": ((200, 50), {"reasons": True, "tab": "judges"}),
    "narrow-80x24": ((80, 24), {}),
    # The Runs tab's results grid (5 runs × 3 models by now), grouped by model.
    "runs-grid": ((200, 50), {"keys": ("6", "g", "g", "g")}),
    "narrow-runs-80x24": ((80, 24), {"keys": ("6",)}),
    # Two answers of the latest run side by side with a word diff.
    "compare": ((200, 50), {"keys": ("6", "space", "down", "down", "space", "c")}),
    # f4: the answers Mixtral 8x7B really gave, recorded by PrefEval (needs ../shared/datasets/prefeval).
    "real-answers": ((200, 50), {"keys": ("f4",)}),
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="make_screenshots.py",
        description="Regenerate the README screenshots (PNG) from the real workbench with the offline demo models.",
        epilog="The committed screenshots are docs/screenshots/: pass --out docs/screenshots to replace them.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder for the PNGs (created if missing; default: screenshots/ in the outputs folder, "
        "see `prefscope paths`)",
    )
    parser.add_argument(
        "--only", action="append", choices=list(SHOTS), metavar="NAME", help=f"only these shots ({', '.join(SHOTS)})"
    )
    return parser.parse_args(argv)


def default_out() -> Path:
    """``screenshots/`` in the configured outputs folder (a config that cannot be read: its error)."""
    from app.outputs import outputs_dir
    from core.settings import SettingsError, load_settings

    try:
        return outputs_dir(load_settings()) / "screenshots"
    except SettingsError as exc:
        raise SystemExit(f"cannot read the settings for the outputs folder ({exc}); pass --out DIR") from None


async def settle(app, pilot) -> None:
    await pilot.pause()
    while any(w.is_running for w in app.workers) or (
        getattr(app.screen, "run_view", None) and app.screen.run_view.running
    ):
        await asyncio.sleep(0.05)
    await pilot.pause(0.3)


async def shoot(
    out: Path,
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
        svg = out / f"{name}.svg"
        app.save_screenshot(filename=svg.name, path=str(out))
    subprocess.run(["rsvg-convert", "-o", str(out / f"{name}.png"), str(svg)], check=True)
    svg.unlink()
    print("wrote", out / f"{name}.png")


async def main(out: Path, only: list[str] | None) -> None:
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "shots.db"
        for name, (size, options) in SHOTS.items():
            if only and name not in only:
                continue
            await shoot(out, db, size, name, **options)


if __name__ == "__main__":
    args = parse_args()
    if not shutil.which("rsvg-convert"):
        raise SystemExit("rsvg-convert not found (apt-get install librsvg2-bin)")
    target = (args.out or default_out()).expanduser().resolve()
    target.mkdir(parents=True, exist_ok=True)
    print("screenshots go to", target)
    asyncio.run(main(target, args.only))
