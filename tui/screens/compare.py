"""2–4 stored answers side by side: what differs in their cases and scores, then each answer with
a word diff against the first one (A). Opened from the results grid's marked rows
(:func:`compared_answers`) or from (run id, response id) references (:func:`compared_refs`, the
paired comparison's items).

Words an answer has and A lacks are shown on green, A's words it lacks struck through in red
(``difflib`` on words; whitespace is kept as written but not compared). Every data text reaches
the screen as ``rich.text.Text`` built by :func:`tui.safe_text.safe_text`, never as markup.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from app.records import GridRow
from tui.safe_text import safe_text
from tui.widgets.response_pane import cost_text
from tui.widgets.results_grid_rows import Column, score_text

INSERTED = "bold black on green"
DELETED = "strike red"
LETTERS = "ABCD"


@dataclass
class ComparedAnswer:
    row: GridRow
    text: str
    facts: dict[str, str]  # name -> value, in display order


def compared_answers(workbench, rows: list[GridRow], columns: list[Column]) -> list[ComparedAnswer]:
    """The answers' texts and facts, reading each of their runs once."""
    runs = {run_id: workbench.load_run(run_id) for run_id in dict.fromkeys(r.run_id for r in rows)}
    out = []
    for row in rows:
        run = runs[row.run_id]
        response = next(r for r in run.responses if r.id == row.response_id)
        facts = {
            c.label: (score_text(v) if c.score is not None else str(v))
            for c in columns
            if (v := c.value(row)) is not None
        }
        facts["run"] = row.run_id  # in full: it is what `prefscope` commands take
        facts["seed"] = str(run.spec.seed)
        facts["prompt tokens"] = f"{run.plan.total_tokens:,}"
        facts["output tokens"] = "" if response.output_tokens is None else f"{response.output_tokens:,}"
        facts["cost"] = cost_text(response.cost_usd, response.is_demo)
        out.append(ComparedAnswer(row, response.text or "", facts))
    return out


def compared_refs(workbench, refs: Sequence[tuple[str, str]]) -> list[ComparedAnswer]:
    """The answers of (run id, response id) references, with the facts the results grid shows for
    them; an answer no longer stored is left out."""
    from tui.widgets.results_grid_rows import columns_for

    data = workbench.grid_rows([response_id for _, response_id in refs])
    return compared_answers(workbench, data.rows, columns_for(data.columns, {}))


_TOKEN = re.compile(r"\S+\s*")


def word_diff(base: str, other: str) -> tuple[Text, int, int]:
    """``other`` marked against ``base``: (text, words inserted, words deleted)."""
    a, b = _TOKEN.findall(base), _TOKEN.findall(other)
    matcher = difflib.SequenceMatcher(None, [t.strip() for t in a], [t.strip() for t in b], autojunk=False)
    out = Text()
    inserted = deleted = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append_text(safe_text("".join(b[j1:j2])))
            continue
        if op in ("delete", "replace"):
            deleted += i2 - i1
            words = "".join(a[i1:i2])
            out.append_text(safe_text(words.rstrip(), DELETED))
            out.append(" " if op == "replace" else words[len(words.rstrip()) :])  # a deleted line keeps its break
        if op in ("insert", "replace"):
            inserted += j2 - j1
            words = "".join(b[j1:j2])
            out.append_text(safe_text(words.rstrip(), INSERTED))
            out.append(words[len(words.rstrip()) :])
    return out, inserted, deleted


def differing_facts(answers: list[ComparedAnswer]) -> list[str]:
    names = dict.fromkeys(name for a in answers for name in a.facts)
    return [n for n in names if len({a.facts.get(n, "—") for a in answers}) > 1]


def facts_table(answers: list[ComparedAnswer]) -> Table:
    """One row per fact, one column per answer; ≠ where the answers differ."""
    table = Table(box=None, padding=(0, 1), show_edge=False)
    table.add_column("")
    for letter in LETTERS[: len(answers)]:
        table.add_column(Text(letter, "bold"))
    differing = set(differing_facts(answers))
    for name in dict.fromkeys(name for a in answers for name in a.facts):
        values = [a.facts.get(name, "—") for a in answers]
        differs = name in differing
        label = safe_text(name + (" ≠" if differs else ""), "bold yellow" if differs else "dim")
        table.add_row(label, *(safe_text(v) for v in values))
    return table


class CompareScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    CompareScreen { align: center middle; }
    CompareScreen > Vertical { width: 98%; height: 95%; border: round $accent; background: $surface; }
    CompareScreen #compare-facts { height: auto; max-height: 45%; overflow-y: auto; padding: 0 1; }
    CompareScreen #compare-columns { height: 1fr; }
    CompareScreen .compare-answer { width: 1fr; border-left: vkey $accent; padding: 0 1; }
    CompareScreen .compare-head { text-style: bold; }
    """
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Close", id="close_compare", tooltip="Close")]

    def __init__(self, answers: list[ComparedAnswer], *, sides: Sequence[str] = (), title: str = ""):
        """``sides``: what each answer stands for (a paired comparison's A and B), named after its
        letter; ``title``: the frame's title (default "compare N answers")."""
        super().__init__()
        self.answers = answers
        self.title_text = title or f"compare {len(answers)} answers"
        self.bodies: list[Text] = []  # per answer, as shown (A plain, the others diffed against A)
        self.heads: list[str] = []
        base = answers[0].text
        for i, a in enumerate(answers):
            letter = f"{LETTERS[i]} {sides[i]}" if i < len(sides) else LETTERS[i]
            if i == 0:
                self.bodies.append(safe_text(base))
                self.heads.append(f"{letter} · {a.row.model} · the base of the diff")
            else:
                body, ins, dele = word_diff(base, a.text)
                self.bodies.append(body)
                self.heads.append(f"{letter} · {a.row.model} · +{ins} / −{dele} words vs A")

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = safe_text(self.title_text)
            box.border_subtitle = "green: not in A · red struck: only in A · esc closes"
            yield Static(facts_table(self.answers), id="compare-facts")
            with Horizontal(id="compare-columns"):
                for i, (head, body) in enumerate(zip(self.heads, self.bodies)):
                    with VerticalScroll(classes="compare-answer", id=f"compare-{LETTERS[i].lower()}"):
                        yield Static(safe_text(head), classes="compare-head")
                        yield Static(body, classes="compare-body")
