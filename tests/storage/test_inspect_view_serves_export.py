"""`inspect view` serves what `prefscope export --format inspect` writes.

A demo batch is exported as `.eval` and `.json`, Inspect's own viewer server (`inspect view start`,
loopback only) is started on that folder, and its HTTP API is asked what the viewer's front end
asks (``inspect_ai/_view/dist/assets/index.js``, ``viewServerApi``): the log listing (``/logs``,
``/log-files``), the headers of the listed logs (``/log-headers``), a whole log
(``/logs/<file>?header-only=<MB>``) and, for `.eval`, its size and byte ranges (``/log-size``,
``/log-bytes``), from which the front end reads the zip members itself. Every answer must come back
as a sample with its messages, output and every judge as a score, parsed by inspect_ai's own models.
"""

from __future__ import annotations

import io
import json
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.cli_runner import cli
from tests.storage.stored_batches import batch, build_env, new_db
from tests.tui.conftest import child_env

pytestmark = pytest.mark.slow
log_models = pytest.importorskip("inspect_ai.log")

INSPECT = Path(sys.executable).parent / "inspect"
#: Only bounds a server that never comes up; it normally answers within seconds.
START_S = 120
STEM = "2026-11-28T10-00-00_viewed"
#: What the viewer's front end passes: read the samples too unless the log is larger than this (MB).
HEADER_ONLY_MB = "100"
SCORES = """SELECT j.kind || '_' || j.dimension, j.score FROM judgments j JOIN runs r ON r.id = j.run_id
            WHERE r.label = 'viewed' AND j.judge_model = 'demo:heuristic'"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(base: str, path: str, **params: str | list[str]) -> bytes:
    query = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(f"{base}{path}{'?' + query if query else ''}", timeout=60) as resp:
        assert resp.status == 200, path
        return resp.read()


def quoted(uri: str) -> str:
    """A log's name as the front end puts it in a path (``encodeURIComponent``)."""
    return urllib.parse.quote(uri, safe="")


def wait_until_up(base: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        assert server.poll() is None, "inspect view exited before it served"
        try:
            get(base, "/api/log-dir")
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    pytest.fail(f"inspect view did not answer within {START_S} s")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A folder holding one demo batch as `.eval` and `.json`, and the stored heuristic scores."""
    root = tmp_path_factory.mktemp("inspect-view")
    with build_env(root):
        db = new_db(root)
        batch(
            db,
            "viewed",
            *("--user", "maya", "--query", "p1-open", "--query", "p2-open", "--expression", "1"),
            *("--context", "simple", "--model", "demo:oracle", "--repeats", "2"),
        )
        logs = root / "logs"
        logs.mkdir()
        for suffix in (".eval", ".json"):
            cli(db, "export", "--batch", "viewed", "--format", "inspect", "--out", str(logs / f"{STEM}{suffix}"))
    conn = sqlite3.connect(db)
    try:
        stored = sorted(conn.execute(SCORES).fetchall())
    finally:
        conn.close()
    return logs, stored


@pytest.fixture(scope="module")
def viewer(exported, tmp_path_factory):
    """The base URL of `inspect view start` on the exported folder, and the server's output."""
    if not INSPECT.exists():
        pytest.skip("inspect-ai's `inspect` command is not installed (a test extra)")
    logs, _ = exported
    home = tmp_path_factory.mktemp("inspect-home")
    port = free_port()
    args = [str(INSPECT), "view", "start", "--log-dir", str(logs), "--host", "127.0.0.1", "--port", str(port)]
    with (home / "server.log").open("w+", encoding="utf-8") as out:
        server = subprocess.Popen(args, env=child_env(home), stdout=out, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base, server)
            yield base, home / "server.log"
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def check_samples(samples, stored: list[tuple[str, float]]) -> None:
    """Two queries, two repeats as epochs; each with the messages sent, the answer and every judge."""
    assert sorted((s.id, s.epoch) for s in samples) == sorted(
        (f"maya.{q}", e) for q in ("p1-open", "p2-open") for e in (1, 2)
    )
    for sample in samples:
        assert sample.messages and sample.messages[-1].role == "assistant"
        assert sample.output.completion and sample.output.completion == sample.messages[-1].text
    served = sorted((name, score.value) for s in samples for name, score in (s.scores or {}).items())
    assert served == stored


def test_the_viewer_lists_both_logs(exported, viewer):
    logs, _ = exported
    base, _ = viewer
    listing = json.loads(get(base, "/api/logs"))
    files = json.loads(get(base, "/api/log-files", log_dir=logs.as_uri()))
    for answer in (listing, files):
        assert sorted(Path(urllib.parse.urlparse(f["name"]).path).name for f in answer["files"]) == [
            f"{STEM}.eval",
            f"{STEM}.json",
        ]


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_the_viewer_serves_the_header_and_the_whole_log(exported, viewer, suffix):
    logs, stored = exported
    base, server_log = viewer
    uri = (logs / f"{STEM}{suffix}").as_uri()

    (header,) = [log_models.EvalLog.model_validate(h) for h in json.loads(get(base, "/api/log-headers", file=[uri]))]
    whole = log_models.EvalLog.model_validate_json(
        get(base, f"/api/logs/{quoted(uri)}", **{"header-only": HEADER_ONLY_MB})
    )

    assert header.status == whole.status == "success"
    assert header.eval.model == "demo/oracle"
    assert header.results and {s.name for s in header.results.scores} == {name for name, _ in stored}
    assert whole.samples is not None
    check_samples(whole.samples, stored)
    assert "Traceback" not in server_log.read_text(encoding="utf-8")


def test_the_viewer_serves_the_eval_zip_by_byte_ranges(exported, viewer):
    """What the front end does with a `.eval`: its size, then byte ranges of the zip."""
    logs, stored = exported
    base, server_log = viewer
    path = logs / f"{STEM}.eval"
    name = quoted(path.as_uri())

    size = int(get(base, f"/api/log-size/{name}"))
    served = get(base, f"/api/log-bytes/{name}", start="0", end=str(size - 1))  # end inclusive
    tail = get(base, f"/api/log-bytes/{name}", start=str(size - 22), end=str(size - 1))

    assert served == path.read_bytes()
    assert tail.startswith(b"PK\x05\x06")  # the end-of-central-directory record the front end reads first
    with zipfile.ZipFile(io.BytesIO(served)) as zf:
        members = zf.namelist()
        samples = [log_models.EvalSample.model_validate_json(zf.read(m)) for m in members if m.startswith("samples/")]
        summaries = json.loads(zf.read("summaries.json"))
    check_samples(samples, stored)
    assert sorted((s["id"], s["epoch"]) for s in summaries) == sorted((s.id, s.epoch) for s in samples)
    assert "Traceback" not in server_log.read_text(encoding="utf-8")
