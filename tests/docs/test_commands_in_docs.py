"""Every command line on the tutorial and how-to pages runs, in order, as a reader would paste it.

One test per page, in a fresh home (temp HOME, XDG folders and database) holding what `make demo`
leaves (the sample data imported), in a working folder whose ``../shared`` is the project's shared
datasets when they are present. Titled blocks (```toml title="fig5.toml"```) are written there
before the commands after them run. Real models (``openai:…``, ``anthropic:…``, ``rubric:openai:…``,
``--via openai-batch`` / ``anthropic-batch``) answer from the loopback servers of ``tests/servers``
through the providers' usual ``*_BASE_URL`` variables and dummy keys. Each command must exit 0, or
the code a trailing ``# exit N`` comment states.

What the runner does not run, or changes, is declared below, each with its reason: lines that open
the workbench or a server (:data:`INTERACTIVE`; checked with ``--help`` instead, which fails on an
unknown command or option), setup lines (:data:`OTHER_COMMANDS`), the local-server URL
(:data:`SUBSTITUTIONS`), files a reader downloads or makes by hand (:data:`STAND_INS`: the repository's
small hand-made fixtures in the official layouts), and lines naming ``../shared/datasets`` or
``../shared/reference`` when that folder is absent (skipped, with the rest of their block).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click
import pytest

from tests.conftest import REPO, SHARED
from tests.docs.doc_blocks import CommandStep, FileStep, argv, page_lines, steps, unrunnable
from tests.servers import AnthropicBatchServer, OpenAIBatchServer, Reply
from tests.tui.conftest import child_env
from tui.cli import main

DOCS = REPO / "docs"
PAGES = [DOCS / "tutorial.md", *sorted(p for p in (DOCS / "how-to").glob("*.md") if p.name != "index.md")]
#: Pages whose commands take long enough to keep them out of the default run (CI runs them).
SLOW_PAGES = frozenset(
    {
        "how-to/audit-judge.md",
        "how-to/export-for-a-paper.md",
        "how-to/paper-scale.md",
        "how-to/real-models.md",
        "how-to/sweeps-and-repeats.md",
    }
)
#: Bounds a command that hangs; no command on a page comes near it.
HANG_S = 300
#: What every loopback model says: an answer, and a reply every LLM judge parses (a rubric score,
#: a pair verdict).
LOOPBACK_REPLY = '{"score": 4, "better": "A", "reason": "It acts on the preference the user stated."}'
FORMAT_FIXTURES = REPO / "tests" / "core" / "formats" / "fixtures"
FIXTURES = REPO / "tests" / "fixtures"
PERSONAMEM = FORMAT_FIXTURES / "personamem"


# ---- what the runner does not run as it stands ----------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    kind: Literal["run", "interactive", "setup", "unrunnable"]
    reason: str = ""


def _subcommand(args: list[str]) -> tuple[str | None, dict]:
    """(command name, its parsed parameters) of ``prefscope ARGS``, values not converted (a file
    the page has not written yet is no error here)."""
    parser = main.make_parser(click.Context(main, info_name="prefscope", resilient_parsing=True))
    _, rest, _ = parser.parse_args(list(args))
    if not rest:
        return None, {}
    command = main.get_command(click.Context(main), rest[0])
    if command is None:  # running it will say so
        return rest[0], {}
    ctx = click.Context(command, info_name=rest[0], resilient_parsing=True)
    params, _, _ = command.make_parser(ctx).parse_args(rest[1:])
    return rest[0], params


def _annotate_opens(opts: dict) -> bool:
    return bool(opts.get("queue_name")) and not any(opts.get(k) for k in ("status", "import_path", "no_open"))


#: (rule, reason): a line a rule matches opens the workbench or a server and waits for a person.
INTERACTIVE: list[tuple[Callable[[str | None, dict], bool], str]] = [
    (lambda name, opts: name is None, "opens the workbench (TUI)"),
    (lambda name, opts: name == "demo", "opens the workbench on the demo (TUI)"),
    (lambda name, opts: name == "serve", "serves the workbench until stopped"),
    (lambda name, opts: name == "annotate" and _annotate_opens(opts), "opens the labelling screen (TUI)"),
    (
        lambda name, opts: name == "compare" and bool(opts.get("open_tui")),
        "opens the comparison in the workbench (TUI)",
    ),
]
#: Lines that are not ``prefscope …`` commands, with what the runner does with them.
OTHER_COMMANDS: dict[tuple[str, ...], Verdict] = {
    ("make", "install"): Verdict("setup", "installs the checkout this test runs in"),
    ("make", "demo"): Verdict("interactive", "opens the workbench on the demo (TUI)"),
}
#: Text in a command replaced before it runs: the local server a page points at is a loopback one.
SUBSTITUTIONS: dict[str, Callable[[Servers], str]] = {
    "http://localhost:8000/v1": lambda servers: servers.openai.base_url,
}


def classify(code: str) -> Verdict:
    why = unrunnable(code)
    if why:
        return Verdict("unrunnable", why)
    args = argv(code)
    if args[0] != "prefscope":
        return OTHER_COMMANDS.get(tuple(args), Verdict("unrunnable", "not a prefscope command (see OTHER_COMMANDS)"))
    name, opts = _subcommand(args[1:])
    reason = next((why for rule, why in INTERACTIVE if rule(name, opts)), None)
    return Verdict("interactive", reason) if reason else Verdict("run")


# ---- files a reader brings ------------------------------------------------------------------------


def _personamem_release(work: Path) -> None:
    """PersonaMem's questions and contexts as released: the test's small copy of that layout."""
    (work / "data").mkdir(exist_ok=True)
    for name in ("questions_32k.csv", "shared_contexts_32k.jsonl"):
        shutil.copyfile(PERSONAMEM / name, work / "data" / name)


def _personamem_results(work: Path) -> None:
    """The result CSV of PersonaMem's inference script for those questions."""
    header = ["score", "persona_id", "question_id", "user_question_or_message", "question_type"]
    header += ["model_response", "len_of_model_response", "predicted_answer", "correct_answer"]
    rows = [
        ("True", "7", "q-lena-1", "recall_user_shared_facts", "<final_answer>(b)</final_answer>", "(b)", "(b)"),
        ("False", "7", "q-lena-2", "acknowledge_latest_user_preferences", "<final_answer>(a)", "(a)", "(c)"),
    ]
    with (work / "gpt-4o_32k.csv").open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(header)
        for score, persona, qid, qtype, reply, predicted, correct in rows:
            out.writerow([score, persona, qid, "the question", qtype, reply, len(reply), predicted, correct])


def _labels_from_export(work: Path) -> None:
    """What a reader makes in a spreadsheet: the exported answers, every column kept, with
    annotator, dimension and score columns added to the first five."""
    with (work / "answers.csv").open(newline="", encoding="utf-8") as fh:
        export = csv.DictReader(fh)
        columns = [*(export.fieldnames or []), "annotator", "dimension", "score"]
        rows = list(export)[:5]
    with (work / "labels.csv").open("w", newline="", encoding="utf-8") as fh:
        out = csv.DictWriter(fh, columns)
        out.writeheader()
        for n, row in enumerate(rows):
            out.writerow(row | {"annotator": "carol", "dimension": "alignment", "score": 3 + n % 3})


def _copy(source: Path, name: str) -> Callable[[Path], None]:
    """A file the reader has, stood in for by a hand-made fixture of the same layout."""

    def make(work: Path) -> None:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, work / name)

    return make


#: LongMemEval questions (one per type, one abstention) in the released layout, and the hypotheses
#: and judge labels a run on them gave (3 of 4 true), as the bring-your-own-results page tells it.
LONGMEMEVAL = FORMAT_FIXTURES / "longmemeval_small.json"
LONGMEMEVAL_ANSWERS = [
    ("q_user_1", "A border collie.", True),
    ("q_pref_2", "A vegetarian chili in your new cast-iron pan.", True),
    ("q_ms_3_abs", "You did not mention buying a guitar.", True),
    ("q_tr_4", "10 days.", False),
]


def _longmemeval_outputs(work: Path) -> None:
    """``run_generation.py``'s hypothesis file and the log ``evaluate_qa.py gpt-4o`` wrote from it."""
    hyp = [{"question_id": q, "hypothesis": h} for q, h, _ in LONGMEMEVAL_ANSWERS]
    label = [{"model": "gpt-4o-2024-08-06", "label": ok} for _, _, ok in LONGMEMEVAL_ANSWERS]
    (work / "gpt-4o_s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in hyp), encoding="utf-8")
    log = "".join(json.dumps(r | {"autoeval_label": x}) + "\n" for r, x in zip(hyp, label, strict=True))
    (work / "gpt-4o_s.jsonl.eval-results-gpt-4o").write_text(log, encoding="utf-8")


def _personamem_v2_release(work: Path) -> None:
    """PersonaMem-v2's benchmark CSV and the chat histories it links, as released under ``data/``."""
    shutil.copytree(FIXTURES / "personamem_v2" / "data", work / "data", dirs_exist_ok=True)


PERSONAMEM_V2_RESULTS = "results/gpt-4o/evaluation_results_mcq_10012025_120000.csv"


def _personamem_v2_results(work: Path) -> None:
    """``inference.py``'s result CSV for the first three benchmark rows: every input column, then the
    32k MCQ reply, the letter extracted and the verdict (two right)."""
    with (FIXTURES / "personamem_v2" / "data" / "benchmark" / "text" / "benchmark.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:3]
    replies = [("Final Answer: A", "A", "True"), ("Final Answer: C", "C", "True"), ("Final Answer: B", "B", "False")]
    columns = [*rows[0], "model_response_mcq_32k", "predicted_answer_mcq_32k", "is_correct_mcq_32k"]
    (work / PERSONAMEM_V2_RESULTS).parent.mkdir(parents=True, exist_ok=True)
    with (work / PERSONAMEM_V2_RESULTS).open("w", newline="", encoding="utf-8") as fh:
        out = csv.DictWriter(fh, columns)
        out.writeheader()
        for row, (reply, letter, verdict) in zip(rows, replies, strict=True):
            cells = {"model_response_mcq_32k": reply, "predicted_answer_mcq_32k": letter, "is_correct_mcq_32k": verdict}
            out.writerow(row | cells)


#: Files a command names that the reader downloads or makes by hand, made by the test when a
#: command names them and they are not there yet.
STAND_INS: dict[str, Callable[[Path], None]] = {
    "data/questions_32k.csv": _personamem_release,
    "gpt-4o_32k.csv": _personamem_results,
    "labels.csv": _labels_from_export,
    "gpt-4o_s.jsonl": _longmemeval_outputs,
    "gpt-4o_s.jsonl.eval-results-gpt-4o": _longmemeval_outputs,
    "longmemeval_s.json": _copy(LONGMEMEVAL, "longmemeval_s.json"),
    "longmemeval_s_cleaned.json": _copy(
        FIXTURES / "longmemeval-cleaned" / "longmemeval_s_cleaned.json", "longmemeval_s_cleaned.json"
    ),
    "gpt-4o_s_cleaned.jsonl.eval-results-gpt-4o": _copy(
        FIXTURES / "longmemeval-cleaned" / "gpt-4o_s_cleaned.jsonl.eval-results-gpt-4o",
        "gpt-4o_s_cleaned.jsonl.eval-results-gpt-4o",
    ),
    "data/benchmark/text/benchmark.csv": _personamem_v2_release,
    PERSONAMEM_V2_RESULTS: _personamem_v2_results,
    "data/locomo10.json": _copy(FIXTURES / "locomo_mem0" / "annotations.json", "data/locomo10.json"),
    "outputs/locomo10_qa.json": _copy(FIXTURES / "locomo_mem0" / "predictions.json", "outputs/locomo10_qa.json"),
    "evaluation_metrics.json": _copy(FIXTURES / "locomo_mem0" / "mem0_metrics.json", "evaluation_metrics.json"),
}


# ---- running a page -------------------------------------------------------------------------------


@dataclass
class Servers:
    openai: OpenAIBatchServer
    anthropic: AnthropicBatchServer


@pytest.fixture
def servers():
    def answer(body: dict) -> Reply:
        return Reply.text(LOOPBACK_REPLY)

    openai, anthropic = OpenAIBatchServer(responder=answer), AnthropicBatchServer(responder=answer)
    with openai, anthropic:  # streamed calls get the script, batch requests the responder
        openai.script(Reply.text(LOOPBACK_REPLY))
        anthropic.script(Reply.text(LOOPBACK_REPLY))
        yield Servers(openai, anthropic)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory) -> Path:
    """What `make demo` leaves: the sample data imported (copied for each page)."""
    root = tmp_path_factory.mktemp("docs-demo")
    db = root / "prefscope.db"
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", "--db", str(db), "import", str(REPO / "sample_data")],
        env=child_env(root / "home"),
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 0, done.stderr
    return db


def page_env(tmp_path: Path, demo_db: Path, servers: Servers) -> tuple[Path, dict[str, str]]:
    """A working folder beside ``shared`` (the project's, when present) and the environment."""
    work = tmp_path / "work"
    work.mkdir()
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    db = tmp_path / "prefscope.db"
    for file in demo_db.parent.glob(demo_db.name + "*"):
        shutil.copyfile(file, tmp_path / file.name)
    env = child_env(
        tmp_path / "home",
        PREFSCOPE_DB=str(db),
        PREFSCOPE_DEMO_TOKENS_PER_S="0",
        OPENAI_API_KEY="sk-docs-test-not-a-key",
        ANTHROPIC_API_KEY="sk-ant-docs-test-not-a-key",
        OPENAI_BASE_URL=servers.openai.base_url,
        ANTHROPIC_BASE_URL=servers.anthropic.base_url,
    )
    return work, env


def substituted(args: list[str], servers: Servers) -> list[str]:
    out = []
    for arg in args:
        for text, value in SUBSTITUTIONS.items():
            arg = arg.replace(text, value(servers))
        out.append(arg)
    return out


def absent_shared(args: list[str], shared: Path = SHARED) -> str | None:
    """The folder of ``../shared`` a line names (``datasets``, ``reference``) when it is absent, else None."""
    for arg in args:
        if "../shared/" in arg:
            folder = arg.split("../shared/", 1)[1].split("/", 1)[0]
            if not (shared / folder).is_dir():
                return f"../shared/{folder}"
    return None


def failure(page: str, step: CommandStep, done: subprocess.CompletedProcess, expected: int) -> str:
    def tail(text: str, n: int) -> str:
        return "\n".join(text.strip().splitlines()[-n:]) or "(nothing)"

    return (
        f"{page}:{step.line}: `{step.code}` exited {done.returncode}, not {expected}\n"
        f"stderr:\n{tail(done.stderr, 15)}\nstdout (end):\n{tail(done.stdout, 5)}"
    )


def run_page(page: Path, tmp_path: Path, demo_db: Path, servers: Servers) -> list[str]:
    """Run the page's commands in order; the log says what ran and what was skipped, and why."""
    name = page.relative_to(DOCS).as_posix()
    work, env = page_env(tmp_path, demo_db, servers)
    log: list[str] = []
    skipped_blocks: set[int] = set()
    for step in steps(page_lines(page, REPO)):
        if isinstance(step, FileStep):
            (work / step.name).parent.mkdir(parents=True, exist_ok=True)
            (work / step.name).write_text(step.text, encoding="utf-8")
            continue
        verdict = classify(step.code)
        assert verdict.kind != "unrunnable", f"{name}:{step.line}: `{step.code}`: {verdict.reason}"
        args = argv(step.code)
        if verdict.kind != "run":
            log.append(f"skipped ({verdict.kind}: {verdict.reason}): {step.code}")
        elif step.block in skipped_blocks:
            log.append(f"skipped (after a skipped line of its block): {step.code}")
        elif absent := absent_shared(args):
            skipped_blocks.add(step.block)
            log.append(f"skipped (needs {absent}, absent): {step.code}")
        else:
            log.append(run_line(name, step, substituted(args, servers), work, env))
    return log


def run_line(page: str, step: CommandStep, args: list[str], work: Path, env: dict[str, str]) -> str:
    for arg in args:
        if arg in STAND_INS and not (work / arg).exists():
            STAND_INS[arg](work)
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", *args[1:]],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == step.expected_exit, failure(page, step, done, step.expected_exit)
    return f"ran ({time.monotonic() - start:.1f} s): {step.code}"


def _page_param(page: Path):
    name = page.relative_to(DOCS).as_posix()
    marks = [pytest.mark.slow] if name in SLOW_PAGES else []
    return pytest.param(page, id=name, marks=marks)


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES if p.exists()])
def test_every_command_on_the_page_runs(page, tmp_path, demo_db, servers):
    start = time.monotonic()
    log = run_page(page, tmp_path, demo_db, servers)
    print(f"{page.relative_to(DOCS)}: {time.monotonic() - start:.1f} s", *log, sep="\n  ")
    skipped = [line for line in log if line.startswith("skipped (needs ../shared")]
    if skipped:
        ran = sum(line.startswith("ran") for line in log)
        pytest.skip(f"ran {ran} lines; part of ../shared is absent, so these did not run: {'; '.join(skipped)}")


# ---- what is declared, not run --------------------------------------------------------------------


def shell_lines() -> list[tuple[str, CommandStep]]:
    return [
        (page.relative_to(DOCS).as_posix(), step)
        for page in PAGES
        if page.exists()
        for step in steps(page_lines(page, REPO))
        if isinstance(step, CommandStep)
    ]


def test_every_shell_line_in_the_docs_is_a_command_the_runner_knows():
    unknown = [
        f"{page}:{step.line}: `{step.code}`: {verdict.reason}"
        for page, step in shell_lines()
        if (verdict := classify(step.code)).kind == "unrunnable"
    ]
    assert unknown == []


def _interactive_params():
    for page, step in shell_lines():
        verdict = classify(step.code)
        if verdict.kind == "interactive" and argv(step.code)[0] == "prefscope":
            yield pytest.param(step, id=f"{page}:{step.line} {verdict.reason}")


@pytest.mark.parametrize("step", list(_interactive_params()))
def test_an_interactive_line_names_a_real_command_and_options(step, tmp_path):
    """It is not run (it waits for a person), but ``--help`` after it still fails on an unknown
    command or option."""
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", *argv(step.code)[1:], "--help"],
        cwd=tmp_path,
        env=child_env(tmp_path / "home", PREFSCOPE_DB=str(tmp_path / "p.db")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 0, f"`{step.code} --help`: {done.stderr.strip()}"


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("prefscope diagnose RUN_ID --steps", "unrunnable"),
        ("prefscope report --batch fig5 [--png out.png]", "unrunnable"),
        ("prefscope compare FACTOR=VALUE method=rag --batch fig5", "unrunnable"),
        ("prefscope judge --label rep --judge rubric:<provider>:<model>", "unrunnable"),
        ("prefscope export --runs ID…", "unrunnable"),
        ("prefscope runs --json | head", "unrunnable"),
        ("prefscope import $DATA", "unrunnable"),
        ("python scripts/make_figure.py", "unrunnable"),
        ("prefscope", "interactive"),
        ("prefscope --user maya", "interactive"),
        ("prefscope serve --host 0.0.0.0", "interactive"),
        ("prefscope annotate lab1 --annotator bob", "interactive"),
        ("prefscope annotate lab1 --batch fig5 --annotator ann --no-open", "run"),
        ("prefscope annotate --import labels.csv", "run"),
        ("prefscope compare method=zero-shot method=reminder --batch fig5 --tui", "interactive"),
        ("prefscope judge --label 'imported:single_pref_remind/*' --judge demo:heuristic", "run"),
        ("prefscope import-results ../shared/datasets/prefeval/SFT", "run"),
        ("make install", "setup"),
    ],
)
def test_the_runner_refuses_placeholders_and_declares_what_waits_for_a_person(code, kind):
    assert classify(code).kind == kind


@pytest.mark.parametrize(
    ("present", "args", "absent"),
    [
        ((), ["prefscope", "import", "../shared/datasets/locomo/locomo10_conv-30.json"], "../shared/datasets"),
        (("datasets",), ["prefscope", "import-results", "../shared/reference/formats/x.eval"], "../shared/reference"),
        (("reference",), ["prefscope", "import-results", "../shared/reference/formats/x.eval"], None),
        ((), ["prefscope", "import-results", "answers.jsonl"], None),
    ],
)
def test_a_line_naming_an_absent_shared_folder_is_skipped(tmp_path, present, args, absent):
    for folder in present:
        (tmp_path / folder).mkdir()
    assert absent_shared(args, tmp_path) == absent


def test_every_stand_in_makes_the_file_it_stands_for(tmp_path):
    for name, make in STAND_INS.items():
        if name != "labels.csv":  # made from an export the page wrote before
            make(tmp_path)
            assert (tmp_path / name).is_file(), name


def test_a_page_reads_as_files_and_commands_in_order(tmp_path):
    (tmp_path / "README.md").write_text(
        "intro\n<!-- --8<-- [start:tour] -->\n```bash\nprefscope users\n```\n<!-- --8<-- [end:tour] -->\n",
        encoding="utf-8",
    )
    page = tmp_path / "page.md"
    page.write_text(
        '--8<-- "README.md:tour"\n\n'
        '```toml title="g.toml"\nname = "g"\n```\n\n'
        "* in a list:\n\n"
        "  ```bash\n"
        "  # a comment line\n"
        "  prefscope batch --grid g.toml \\\n"
        "      --yes          # runs it\n"
        "  prefscope judge --label 'imported:#1' --judge rubric:openai:gpt-4o-mini   # exit 3\n"
        "  ```\n",
        encoding="utf-8",
    )

    got = steps(page_lines(page, tmp_path))

    assert got == [
        CommandStep(1, 0, "prefscope users", ""),
        FileStep(3, "g.toml", 'name = "g"\n'),
        CommandStep(11, 1, "prefscope batch --grid g.toml --yes", "runs it"),
        CommandStep(13, 1, "prefscope judge --label 'imported:#1' --judge rubric:openai:gpt-4o-mini", "exit 3"),
    ]
    assert [s.expected_exit for s in got if isinstance(s, CommandStep)] == [0, 0, 3]
