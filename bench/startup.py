"""Cold start: `prefscope --help`, `prefscope prompt maya p1-open` (zero-shot plan) and a
demo-model `prefscope run`, each in a fresh process, with which heavy libraries got imported
(they must not be when unused).

Baselines measured in the same run: a bare `python -c pass` start, so the figures read as
"prefscope's own start-up cost on top of the interpreter"; and `prefscope --help`, which the
zero-shot prompt (on a database with the sample data imported) is divided by (goal ≤ 3×).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from _common import REPO, figure, line, offline_env, run_prefscope

HEAVY = ["litellm", "anthropic", "openai", "sentence_transformers", "torch", "textual"]
PROBE = (
    "import sys, json, runpy\n"
    "sys.argv = ['prefscope'] + sys.argv[1:]\n"
    "try:\n"
    "    from tui.cli import main\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    f"print('@@' + json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}), file=sys.stderr)\n"
)


def timed(args: list[str], repeat: int = 3, env: dict[str, str] | None = None) -> tuple[float, dict]:
    times, imported = [], {}
    for _ in range(repeat):
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=REPO, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        marker = [ln for ln in done.stderr.splitlines() if ln.startswith("@@")]
        if not marker:
            raise SystemExit(f"probe failed for {args}: {done.stderr[-1500:]}")
        imported = json.loads(marker[-1][2:])
    return median(times), imported


def main() -> None:
    print("bench/startup.py — fresh processes, median of 3")
    t0 = time.perf_counter()
    for _ in range(3):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = (time.perf_counter() - t0) / 3
    line("bare python start (baseline, s)", f"{bare:.3f}")
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/startup.db"
        help_s, help_imports = timed(["--help"])
        prompt_s, prompt_imports = zero_shot_prompt(Path(tmp))
        run_s, run_imports = timed(
            ["--db", db, "run", "maya", "p1-open", "--plain", "--model", "demo:generic", "--model", "demo:oracle"],
            repeat=2,
        )
    line("prefscope --help (s)", f"{help_s:.3f}", f"{help_s / bare:.1f}× bare python")
    line("  heavy imports", _heavy(help_imports))
    line("prefscope prompt maya p1-open, zero-shot (s)", f"{prompt_s:.3f}", f"{prompt_s / help_s:.1f}× --help")
    line("  heavy imports", _heavy(prompt_imports))
    line("prefscope run, 2 demo models, zero-shot (s)", f"{run_s:.3f}", "includes the demo models' streaming")
    line("  heavy imports", _heavy(run_imports))
    for name in ("litellm", "anthropic", "sentence_transformers", "torch"):
        line(f"  {name} imported by a demo run", "yes (BAD)" if run_imports.get(name) else "no")
    figure(
        "CLI --help, cold",
        "no heavy import",
        f"{help_s:.2f} s, imports {_heavy(help_imports)}",
        f"bare python {bare:.2f} s",
    )
    figure(
        "CLI prompt maya p1-open (zero-shot plan) ÷ --help",
        "≤ 3×",
        f"{prompt_s / help_s:.1f}× ({prompt_s:.2f} s)",
        f"--help {help_s:.2f} s",
    )
    unused = {m: run_imports.get(m) for m in ("litellm", "anthropic", "sentence_transformers", "torch")}
    figure("CLI demo run: unused SDKs / torch imported", "none", _heavy(unused), "—")


def zero_shot_prompt(tmp: Path) -> tuple[float, dict]:
    """`prefscope prompt maya p1-open` (the profile's zero-shot plan), median of 3 fresh processes
    after a first one (printed apart), on a database the sample data was imported into first."""
    env, db = offline_env(tmp), tmp / "sample.db"
    run_prefscope(env, db, "import", str(REPO / "sample_data"))
    args = ["--db", str(db), "prompt", "maya", "p1-open"]
    first, _ = timed(args, repeat=1, env=env)  # counts every text with the tokenizer and keeps the counts
    line("prefscope prompt maya p1-open, first run (s)", f"{first:.3f}", "tokenizer loaded, counts kept")
    return timed(args, env=env)


def _heavy(imported: dict) -> str:
    return ", ".join(m for m, on in imported.items() if on) or "none"


if __name__ == "__main__":
    main()
