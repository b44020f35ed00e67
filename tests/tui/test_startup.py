"""Start-up stays light: opening `prefscope demo` (sample data, first paint, the first estimate)
imports none of the heavy SDKs — they load only when a model of theirs is used."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO
from tests.tui.conftest import child_env

SCRIPT = r"""
import asyncio, json, sys
from tui.cli.open_app import _build

async def main():
    app = _build({"db": sys.argv[1]}, demo=True)
    async with app.run_test(size=(120, 40)) as pilot:
        loop = asyncio.get_running_loop()
        end = loop.time() + 60  # bounds a hang only: the estimate comes when it comes
        ok = False
        while loop.time() < end:
            if app.screen.__class__.__name__ == "MainScreen" and app.screen.plan is not None:
                ok = True
                break
            await asyncio.sleep(0.05)
    heavy = sorted(m for m in ("litellm", "anthropic", "sentence_transformers", "torch", "transformers", "pyarrow") if m in sys.modules)
    print(json.dumps({"heavy": heavy, "estimated": ok}))

asyncio.run(main())
"""


def test_demo_start_up_imports_no_heavy_sdk(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "p.db")],
        cwd=REPO,
        env=child_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"heavy": [], "estimated": True}
