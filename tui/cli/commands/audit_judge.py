"""`prefscope audit-judge JUDGE --batch B`: is this judge biased?

- **position**: every two answers to the same prompt judged by JUDGE in both presentation orders
  (:mod:`core.judges.preference_pair`; model calls, stored as ``pairwise/preferred`` judgments and
  reused on the next audit): the share of pairs whose winner flips with the order, and how often
  the answer shown first wins (fair: 50%);
- **length**: JUDGE's stored scores against answer length (slope per 100 words) and a
  length-controlled score per model (:func:`core.analysis.judge_audit.length_audit`);
- **self-preference**: JUDGE's scores on answers of its own model family against others';
- **test–retest**: its agreement with itself where it judged an answer more than once.

Human labels on the same answers (``prefscope annotate``) give each audit its reference.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import click
from rich.table import Table
from rich.text import Text

from tui.cli.cells import number
from tui.cli.command_info import CommandInfo
from tui.cli.common import console, open_workbench, resolve_filter
from tui.cli.stored_runs import filters, run_filter
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="audit-judge",
    help="Is this judge biased? Position flips, length bias, self-preference, test-retest.",
    examples=(
        "prefscope audit-judge demo:heuristic --batch fig5",
        "prefscope audit-judge openai:gpt-4o-mini --batch fig5 --no-pairs",
    ),
    writes=True,
    order=240,
)


def judge_model_of(given: str) -> str | None:
    """The judge model an audit calls (None: the offline heuristic) from a model id or judge string."""
    from core.judges import HEURISTIC, JudgeSpecError, parse_judge

    if given.strip() in (HEURISTIC, "heuristic"):
        return None
    try:
        return parse_judge(given)[1] or given
    except JudgeSpecError:
        return given.strip()


def pct(value: float | None, ci: tuple | None = None) -> str:
    if value is None:
        return "–"
    text = f"{value:.0%}"
    if ci and ci[0] is not None:
        text += f" [{ci[0]:.0%}, {ci[1]:.0%}]"
    return text


@click.command("audit-judge")
@click.argument("judge")
@filters
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="kind:dimension for length and self-preference (default: every one JUDGE scored).",
)
@click.option(
    "--pairs/--no-pairs",
    default=True,
    show_default=True,
    help="Judge every two answers to the same prompt in both orders (model calls) for the position audit.",
)
@click.option(
    "--max-pairs", type=click.IntRange(1), default=200, show_default=True, help="Judge at most this many pairs."
)
@click.pass_obj
def audit_judge(
    obj, judge, run_ids, users, models, methods, contexts, labels, since, metrics, pairs, max_pairs
) -> None:
    """Position flips, length bias, self-preference and test–retest of JUDGE (a judge model id such
    as openai:gpt-4o-mini, or demo:heuristic) on the answers of the selected runs (--batch B …)."""
    from core.analysis.judge_audit import family_of

    model = judge_model_of(judge)
    name = model or "demo:heuristic"
    wb = open_workbench(obj, sample_data=False)
    f = replace(resolve_filter(wb, run_filter(run_ids, users, models, methods, contexts, labels, since)), probes=False)
    if model is not None:
        from tui.cli.common import check_models

        check_models(wb.settings, [model])
    console.print(safe_text(f"audit of {name}", "bold"))

    _position(wb, f, model, name, pairs, max_pairs)
    dims = list(metrics) or wb.judged_dimensions(f, name)
    if not dims:
        console.print(
            safe_text(f"length, self-preference: {name} scored no answer here (prefscope judge --judge …)", "dim")
        )
    for metric in dims:
        kind, _, dimension = metric.partition(":")
        rows = wb.scored_answers(f, name, kind, dimension)
        _length(metric, rows)
        _self_preference(metric, family_of(name), rows)
        _retest(metric, name, wb.retest_table(metric, f))
    console.print(Text(LC_NOTE, style="dim"))
    wb.close()


def _position(wb, f, model: str | None, name: str, judge_now: bool, max_pairs: int) -> None:
    from core.analysis.judge_audit import position_audit

    candidates = wb.same_prompt_pairs(f)[:max_pairs]
    if not candidates:
        console.print(
            Text("position: no two answers to the same prompt here (a batch with two models has them)", style="dim")
        )
        return
    judged, _ = wb.stored_pair_orders(f, name)
    todo = [p for p in candidates if None in judged.get(p.key, [None, None])]
    if todo and judge_now:
        failed = _judge_pairs(wb, model, todo)
        console.print(
            safe_text(f"position: judged {len(todo)} pairs in both orders ({failed} judgments failed)", "dim")
        )
    judged, human = wb.stored_pair_orders(f, name)
    keys = [p.key for p in candidates if p.key in judged]
    if not keys:
        console.print(Text("position: no pair judged yet (run without --no-pairs)", style="dim"))
        return
    a = position_audit([tuple(judged[k]) for k in keys], [human.get(k) for k in keys])  # type: ignore[misc]
    t = Table(
        title=safe_text(f"position (pairwise, both orders) · {name}"), title_justify="left", box=None, pad_edge=False
    )
    t.add_column("")
    t.add_column("", justify="right")
    t.add_row("pairs", f"{a.n_pairs} ({a.decided} decided in both orders, {a.undecided} not)")
    t.add_row("winner flips with the order", f"{a.flips} · {pct(a.flip_rate, a.flip_ci)}")
    t.add_row("  both orders chose the first shown", str(a.flips_to_first))
    t.add_row("  both orders chose the second shown", str(a.flips_to_second))
    t.add_row("first shown wins (fair: 50%)", pct(a.first_shown_wins, a.first_shown_ci))
    t.add_row("tie verdicts", str(a.ties))
    if a.human_n:
        t.add_row(
            "consistent and agrees with humans", f"{pct(a.consistent_and_agrees_with_human, a.human_ci)} of {a.human_n}"
        )
    else:
        t.add_row("human reference", "none (label a pair queue: annotate Q --kind pair)")
    console.print(t)


def _judge_pairs(wb, model: str | None, todo) -> int:
    """Judge each pair in both orders and store the verdicts under answer 1's run; failures counted."""
    from core.judges.preference_pair import PreferencePairJudge

    judge = PreferencePairJudge(model)
    complete = wb.complete()
    texts = wb.response_texts([r for p in todo for r in (p.response_1, p.response_2)])
    asks = {p.run_id: wb.query_and_preference(p.run_id) for p in todo}
    gate = asyncio.Semaphore(8)

    async def one(p):
        query, preference = asks[p.run_id]
        async with gate:
            return await judge.judge_both_orders(query, preference, texts[p.response_1], texts[p.response_2], complete)

    async def all_pairs():
        return await asyncio.gather(*(one(p) for p in todo))

    failed = 0
    for p, judgments in zip(todo, asyncio.run(all_pairs())):
        items = [(p.response_1, replace(j, extra={**j.extra, "other_response": p.response_2})) for j in judgments]
        failed += sum(1 for _, j in items if not j.parse_ok)
        wb.save_judgments(p.run_id, items)
    return failed


def _length(metric: str, rows) -> None:
    from core.analysis.judge_audit import length_audit

    if not rows:
        console.print(safe_text(f"{metric}: no parsed scores by this judge", "dim"))
        return
    a = length_audit((r.model, r.score, r.words) for r in rows)
    humans = [r for r in rows if r.human is not None]
    h = length_audit((r.model, r.human, r.words) for r in humans) if len(humans) >= 3 else None
    slope = (
        "–" if a.slope is None else f"{a.slope:+.3f} per 100 words [{number(a.slope_ci[0])}, {number(a.slope_ci[1])}]"
    )
    t = Table(
        title=safe_text(f"{metric} length bias: slope {slope}, r = {number(a.r, 2)}, n = {a.n}"),
        title_justify="left",
        caption=safe_text(_length_caption(a, h)),
        caption_justify="left",
    )
    for col in ("model", "n", "mean words", "mean score", "length-controlled"):
        t.add_column(col, justify="left" if col == "model" else "right")
    for m in a.models:
        t.add_row(safe_text(m.model), str(m.n), f"{m.mean_length:.0f}", f"{m.mean_score:.2f}", number(m.lc_score, 2))
    console.print(t)


LC_NOTE = (
    "length-controlled: each model's score at the mean answer length, from score ~ model + length "
    "fitted together (AlpacaEval-LC's length control, on pointwise scores)"
)


def _retest(metric: str, name: str, table) -> None:
    """One line of the judge's test–retest (storage.report.retest_table's row for it)."""
    cols = table.columns
    rows = [dict(zip(cols, r)) for r in table.rows if r[cols.index("judge")] == name and r[cols.index("answers")]]
    if not rows:
        console.print(
            safe_text(
                f"{metric} test–retest: {name} judged each answer once (judge --judge-repeats 3 measures it)", "dim"
            )
        )
        return
    r = rows[0]
    console.print(
        safe_text(
            f"{metric} test–retest: {r['answers']} answers judged {r['judgings']} times on average: exact "
            f"{pct(r['exact'])}, within 1 {pct(r['within1'])}, verdict flips "
            f"{pct(r['flip_rate'], (r['flip_ci_low'], r['flip_ci_high']))}"
        )
    )


def _length_caption(a, h) -> str:
    parts = [reason for reason in (a.reason, a.lc_reason) if reason]
    if h is not None and h.slope is not None:
        parts.append(f"humans on the same answers: slope {h.slope:+.3f} per 100 words (n = {h.n})")
    else:
        parts.append("no human reference (fewer than 3 human-scored answers)")
    return "; ".join(parts)


def _self_preference(metric: str, family: str, rows) -> None:
    from core.analysis.judge_audit import self_preference_audit

    if not rows:
        return
    a = self_preference_audit(family, [(r.model, r.score, r.human) for r in rows])
    if a.difference is None:
        console.print(safe_text(f"{metric} self-preference ({family}): {a.reason}", "dim"))
        return
    ci = f"[{number(a.difference_ci[0])}, {number(a.difference_ci[1])}]"
    line = (
        f"{metric} self-preference ({family} family): own {number(a.mean_own, 2)} (n {a.n_own}) vs others "
        f"{number(a.mean_other, 2)} (n {a.n_other}), difference {number(a.difference)} {ci}"
    )
    if a.gap_difference is not None:
        line += f"; judge − human gap own vs others: {number(a.gap_difference)}"
    elif a.human_reason:
        line += f"; {a.human_reason}"
    console.print(safe_text(line))
