"""`prefscope` command line. With no subcommand it opens the workbench.

Subcommands live one per module in this package and are imported only when invoked, so
``prefscope --help`` and the TUI start without loading litellm, anthropic or torch.
"""

from __future__ import annotations

import importlib

import click

#: command name -> "module:attribute" (a click.Command). Order is the help order.
COMMANDS: dict[str, str] = {
    "demo": "tui.cli.open_app:demo",
    "serve": "tui.cli.open_app:serve",
    "import": "tui.cli.data:import_cmd",
    "import-results": "tui.cli.import_results:import_results",
    "embed": "tui.cli.embed:embed",
    "users": "tui.cli.data:users",
    "show": "tui.cli.data:show",
    "schema": "tui.cli.data:schema",
    "paths": "tui.cli.data:paths",
    "prompt": "tui.cli.prompt:prompt",
    "run": "tui.cli.run:run",
    "runs": "tui.cli.run:runs",
    "judge": "tui.cli.judge:judge",
    "attributes": "tui.cli.judge:attributes",
    "relevance": "tui.cli.judge:relevance",
    "pairwise": "tui.cli.pairwise:pairwise",
    "diagnose": "tui.cli.diagnose:diagnose",
    "batch": "tui.cli.batch:batch",
    "export": "tui.cli.export:export",
    "report": "tui.cli.export:report",
    "compare": "tui.cli.compare:compare",
    "annotate": "tui.cli.annotate:annotate",
    "agreement": "tui.cli.agreement:agreement",
    "audit-judge": "tui.cli.audit_judge:audit_judge",
    "benchmarks": "tui.cli.benchmarks:benchmarks",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        if name in EXAMPLES and "Examples:" not in (command.epilog or ""):
            lines = "\n".join(f"  {example}" for example in EXAMPLES[name])
            command.epilog = "\n\n".join(filter(None, [command.epilog, f"\b\nExamples:\n{lines}"]))
        return command

    def invoke(self, ctx: click.Context):
        """Every command (and the TUI) under one handler: a database damaged past the pages the open
        checks read, or a model id no provider serves, ends in one line and exit 1, not a traceback."""
        import sqlite3

        try:
            return super().invoke(ctx)
        except sqlite3.DatabaseError as exc:
            from tui.cli.errors import database_failure

            database_failure(ctx, exc)
        except (ValueError, RuntimeError) as exc:
            from tui.cli.errors import known_failure

            known_failure(ctx, exc)
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help without importing each command's module (keeps --help instant).
        rows = [(name, HELP.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


HELP = {
    "demo": "Open the workbench on the sample users with offline demo models.",
    "serve": "Serve the workbench in a browser (textual-serve).",
    "import": "Import a dataset file or folder (auto-detected format).",
    "import-results": "Import answers produced elsewhere (PrefEval results, JSONL) as runs.",
    "embed": "Embed users' histories now, so RAG runs start warm.",
    "users": "List imported users.",
    "show": "Print a user's session timeline with gold evidence marked.",
    "schema": "Print the JSON Schema of the native bundle format.",
    "paths": "Print where the database, config and cache live.",
    "prompt": "Print the exact prompt plan for a user, query and method.",
    "run": "Stream models side by side for one case and store the run.",
    "runs": "List stored runs.",
    "judge": "Re-judge stored runs (ids or a --label) without regenerating.",
    "attributes": "Extract or list a user's attributes.",
    "relevance": "Show relevance decisions for a run.",
    "pairwise": "InterPref pass and win rate for two runs with opposed preferences.",
    "diagnose": "Why each answer failed: not in context, not retrieved, not known, or not applied.",
    "batch": "Run a grid of cases with bounded concurrency (resumable).",
    "export": "Export runs to CSV or JSONL.",
    "report": "Aggregate tables of stored runs (by model, method, context …).",
    "compare": "Is B better than A? Paired tests on the items both answered, and what regressed.",
    "annotate": "Label answers blind as a named annotator (queues), or import labels from a CSV.",
    "agreement": "Agreement of annotators and judges per dimension: kappa, weighted kappa, alpha, confusion.",
    "audit-judge": "Is this judge biased? Position flips, length bias, self-preference, test-retest.",
    "benchmarks": "List the installed benchmarks: formats, methods, judges, report sections, profile.",
}


EPILOG = """Ids: every command takes a full run, user or query id or any unique prefix of it (a run also by
the start of its random tail, the short form `prefscope runs` prints in a narrow terminal).

\b
Exit codes:
  0    ok
  1    failed, the message says why and what to do; also a run, judge or
       batch whose every model, judgment or cell failed (e.g. a key unset)
  2    usage error: an unknown option, command or value
  3    partly failed: some models, judgments or batch cells failed; the
       rest are stored
  130  interrupted (Ctrl+C): partial answers are stored as cancelled

\b
Examples:
  prefscope demo
  prefscope run maya p1-open --model demo:oracle --model openai:gpt-4o-mini"""


#: Two examples per command, shown at the end of its --help (ids: a full id or a unique prefix).
EXAMPLES: dict[str, tuple[str, str]] = {
    "demo": ("prefscope demo", "prefscope --db /tmp/demo.db demo"),
    "serve": ("prefscope serve", "prefscope serve --host 0.0.0.0 --port 8080  # prints the URL with its token"),
    "import": ("prefscope import ../shared/datasets/prefeval", "prefscope import locomo10.json --user-speaker b"),
    "embed": ("prefscope embed", "prefscope embed maya priya"),
    "import-results": (
        "prefscope import-results ../shared/datasets/prefeval/SFT",
        "prefscope import-results answers.jsonl --format jsonl",
    ),
    "users": ("prefscope users", "prefscope users --json | jq -r '.users[].id'"),
    "show": ("prefscope show maya --query p1-open", "prefscope show maya --session maya-p1-e4a"),
    "schema": ("prefscope schema > user.schema.json", "prefscope schema --filler"),
    "paths": ("prefscope paths", "PREFSCOPE_CONFIG=~/lab.toml prefscope paths"),
    "prompt": (
        "prefscope prompt maya p1-open --context long --method rag",
        "prefscope prompt maya p1-open --json",
    ),
    "run": (
        "prefscope run maya p1-open --model demo:oracle --model openai:gpt-4o-mini",
        "prefscope run maya p1-o --method rag --plain  # p1-o: a unique prefix of p1-open",
    ),
    "runs": ("prefscope runs --user maya --limit 10", "prefscope runs --json | jq -r '.[0].id'"),
    "judge": (
        "prefscope judge 3e59b2be --judge demo:heuristic --dry-run",
        "prefscope judge --label 'imported:single_pref_remind/*' --judge demo:heuristic  # every imported answer",
    ),
    "attributes": ("prefscope attributes maya", "prefscope attributes maya --model openai:gpt-4o-mini --no-dedup"),
    "relevance": (
        "prefscope relevance 3e59b2be --no-embedding",
        "prefscope relevance 3e59b2be --model openai:gpt-4o-mini",
    ),
    "pairwise": (
        "prefscope pairwise 3e59b2be 9c01d4aa --judge openai:gpt-4o-mini",
        "prefscope pairwise 3e59b2be 9c01d4aa --judge anthropic:claude-3-5-haiku-latest",
    ),
    "diagnose": (
        "prefscope diagnose 3e59b2be --probe --steps",
        "prefscope diagnose --batch mybatch --json",
    ),
    "batch": (
        "prefscope batch --user maya --query-kind open --model demo:oracle --model demo:generic --dry-run",
        "prefscope batch --grid grid.toml --retry-failed --yes",
    ),
    "export": ("prefscope export --runs 3e59b2be --format jsonl", "prefscope export --batch mybatch --out runs.csv"),
    "report": (
        "prefscope report --by model,expression_type",
        "prefscope report --batch mybatch --metric accuracy --csv t.csv",
    ),
    "compare": (
        "prefscope compare zs-batch reminder-batch --metric rubric:alignment",
        "prefscope compare method=zero-shot method=reminder --batch fig5 --tui",
    ),
    "annotate": (
        "prefscope annotate lab1 --batch fig5 --sample 30 --annotator ann",
        "prefscope annotate --import labels.csv",
    ),
    "agreement": (
        "prefscope agreement --queue lab1",
        "prefscope agreement --batch fig5 --csv agreement.csv --png figs/",
    ),
    "audit-judge": (
        "prefscope audit-judge demo:heuristic --batch fig5",
        "prefscope audit-judge openai:gpt-4o-mini --batch fig5 --no-pairs",
    ),
    "benchmarks": ("prefscope benchmarks", "prefscope benchmarks locomo --json"),
}


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EPILOG,
)
@click.option("--db", type=click.Path(dir_okay=False), envvar="PREFSCOPE_DB", help="SQLite database file.")
@click.option("--config", type=click.Path(dir_okay=False), envvar="PREFSCOPE_CONFIG", help="Settings TOML file.")
@click.option("--user", default=None, help="Open the workbench on this user (an id or a unique prefix of one).")
@click.pass_context
def main(ctx: click.Context, db: str | None, config: str | None, user: str | None) -> None:
    """prefscope: take preference-following failures apart, model by model."""
    ctx.ensure_object(dict)
    ctx.obj["db"] = db
    ctx.obj["config"] = config
    ctx.obj["user"] = user  # `prefscope --user ID demo` opens the demo on it too
    if ctx.invoked_subcommand is None:
        from tui.cli.open_app import open_app

        open_app(ctx.obj, demo=False, user=user)
