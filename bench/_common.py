"""Shared bench plumbing: run from the repo root or bench/, offline settings, figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def line(label: str, value: str, target: str = "") -> None:
    print(f"  {label:<58} {value:>14}  {target}")


#: Prefix of the one machine-readable line per headline figure; ``make bench`` collects these
#: lines from every bench into one table (figure, goal, now, baseline).
FIGURE_MARK = "@@figure "


def figure(name: str, goal: str, now: str, baseline: str) -> None:
    """Report a headline figure: ``baseline`` is measured in the same run (never a stored number)."""
    import json

    print(FIGURE_MARK + json.dumps({"figure": name, "goal": goal, "now": now, "baseline": baseline}), flush=True)


class ServerProcess:
    """The project's loopback OpenAI-protocol server in its own process (so it does not share
    the GIL with what is being measured). Streams ``tokens`` frames at ``rate`` per second."""

    CODE = (
        "import sys, time\n"
        "from tests.servers.openai_sse import OpenAIServer\n"
        "from tests.servers.script import Reply\n"
        "n, rate, latency = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])\n"
        "reply = Reply(chunks=[f'tok{i} ' for i in range(n)], delay_s=1 / rate if rate else 0.0,"
        " first_delay_s=latency, usage=(50, n))\n"
        "with OpenAIServer([reply]) as s:\n"
        "    print(s.base_url, flush=True)\n"
        "    sys.stdin.read()\n"
    )

    def __init__(self, tokens: int, rate: float, latency_s: float = 0.0):
        self.args = [str(tokens), str(rate), str(latency_s)]

    def __enter__(self) -> str:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-c", self.CODE, *self.args],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        return self.proc.stdout.readline().strip()

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def offline_env(tmp: Path, **extra: str) -> dict[str, str]:
    """A child's environment: no keys, no user config, caches in ``tmp``, nothing embeds ahead."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "PREFSCOPE_", "XDG_"))}
    out.update(
        PREFSCOPE_EMBED_AHEAD="false",
        XDG_CACHE_HOME=str(tmp / "cache"),
        XDG_DATA_HOME=str(tmp / "data"),
        XDG_CONFIG_HOME=str(tmp / "config"),
        PYTHONPATH=str(REPO),
        TEXTUAL_ANIMATIONS="none",
        **extra,
    )
    return out


def run_prefscope(env: dict[str, str], db: Path, *args: str) -> subprocess.CompletedProcess:
    """``prefscope --db DB ARGS`` in a child; a failure ends the bench with its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", "--db", str(db), *args], cwd=REPO, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"prefscope {' '.join(args[:2])} failed ({done.returncode}): {done.stderr[-1500:]}")
    return done
