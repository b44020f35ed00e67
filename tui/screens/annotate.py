"""Annotation mode (``prefscope annotate QUEUE``): a queue's items one at a time, labelled from the
keyboard by a named annotator, blind.

The queue and its items are :mod:`storage.annotation_queues`', the labels
:mod:`storage.annotation_labels`'; every read and write goes through the Workbench. The screen shows
the query, the user's preference and what is labelled: one answer (``answer``: the three RealPref
rubric dimensions, 1–5), two answers side by side as A and B (``pair``), a turn or an attribute
(``relevance``: relevant or not), or an extracted attribute (``attribute``: accept / uncertain /
reject).

Blind: while an item is unlabelled nothing on screen names a model, the method, the context or a
judge's score (the :class:`storage.annotation_queues.Item` shown carries none of them). Once the
label is saved the revealed panel shows them (``storage.annotation_queues.reveal``) and ``enter``
goes on. A queue built with ``blind=False`` shows that panel from the start.

Resumable: every label is stored with the record that the item is done, so leaving (``esc``) loses
nothing and reopening serves the annotator's next unfinished item in their own order.

Keys: answer ``1``–``5`` score the marked dimension (the mark moves on), ``tab`` / ``↑`` ``↓`` mark
another, ``s`` or ``ctrl+s`` save, ``c`` the rubric's criteria; pair ``a`` / ``b`` / ``t`` (as shown);
relevance ``y`` / ``n``; attribute ``a`` / ``u`` / ``r``; every kind ``o`` a note, ``x`` skip,
``enter`` (or ``n``) the next item once the label is revealed, ``pgup`` / ``pgdn`` scroll, ``esc`` leave.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from app.labels import ANSWER_DIMENSIONS, AnnotationError, Item, Label, Queue, Revealed, check_annotator
from tui.safe_text import safe_text
from tui.widgets.worker_errors import store_or_notify

#: What the annotator decides per kind, in the words the footer and the panel use.
PAIR_CHOICES = {"A": "A is better", "B": "B is better", "tie": "tie"}
SCORE_KEYS = Binding.Group("Score", compact=True)


def _key(key: str, action: str, label: str, tooltip: str, *, id: str, show: bool = True, group=None) -> Binding:
    return Binding(key, action, label, id=f"annotate.{id}", tooltip=tooltip, show=show, group=group)


def rubric(dimension: str) -> tuple[str, str]:
    """(definition, criteria) of a RealPref rubric dimension: what the rubric judge is told."""
    from core.judges.templates import template

    fields = template("realpref_rubric", dimension).fields
    return fields["definition"], fields["criteria"]


def shown_as(item, n: int) -> str:
    """Which letter stored answer ``n`` (1 or 2) of a pair item was shown as."""
    return "AB"[(n - 1) ^ int(item.swapped)]


def keys_text(question: str, *keys: tuple[str, str]) -> Text:
    """``question  a A · b B · t tie``: the question, then each key and what it means."""
    text = Text(question, "bold").append("  ")
    for i, (key, meaning) in enumerate(keys):
        text.append(" · " if i else "").append(key, "bold cyan").append(f" {meaning}")
    return text


def score_text(score: float | None) -> str:
    return "–" if score is None else f"{score:g}"


class AnswerPane(VerticalScroll, can_focus=False):
    """One answer (or the turn / attribute labelled); scrolled with pgup / pgdn, never focused, so
    the screen's keys always reach the screen."""


class AnnotateScreen(Screen[None]):
    DEFAULT_CSS = """
    AnnotateScreen > Vertical { height: 1fr; }
    AnnotateScreen #ann-status { height: 1; padding: 0 1; background: $boost; }
    AnnotateScreen #ann-name { margin: 1 1; }
    AnnotateScreen #ann-context { height: auto; max-height: 45%; padding: 0 1; }
    AnnotateScreen #ann-answers { height: 1fr; min-height: 5; }
    AnnotateScreen AnswerPane { width: 1fr; height: 1fr; border: round $primary; padding: 0 1; scrollbar-size-vertical: 1; }
    AnnotateScreen AnswerPane > Static { width: 1fr; }
    AnnotateScreen #ann-decide { height: auto; padding: 0 1; }
    AnnotateScreen #ann-decide.rubric { height: 3; }
    AnnotateScreen #ann-criteria { height: auto; max-height: 8; padding: 0 1; color: $text-muted; }
    AnnotateScreen #ann-note { height: auto; padding: 0 1; }
    AnnotateScreen #ann-note-input { margin: 0 1; }
    AnnotateScreen #ann-reveal { height: auto; max-height: 40%; border: round $success; padding: 0 1; }
    AnnotateScreen #ann-message { height: auto; padding: 1 2; }
    """
    AUTO_FOCUS = ""  # nothing focused: the keys below reach the screen (a focused Input would take the letters)
    BINDINGS = [
        _key("escape", "leave", "Leave", "Leave the queue (every saved label stays; reopening resumes)", id="leave"),
        # answer: the rubric's three dimensions
        *[
            _key(
                str(n), f"set_score({n})", "Score", f"Score the marked dimension {n}", id=f"score{n}", group=SCORE_KEYS
            )
            for n in range(1, 6)
        ],
        _key("tab,down", "next_dimension", "Dimension", "Mark the next dimension", id="next_dimension", show=False),
        _key("shift+tab,up", "previous_dimension", "Previous", "Mark the previous dimension", id="prev", show=False),
        _key("backspace", "clear_score", "Clear", "Clear the marked dimension's score", id="clear", show=False),
        _key("s,ctrl+s", "save", "Save", "Save the scores given (at least one)", id="save"),
        _key("c", "criteria", "Criteria", "Show or hide the rubric's criteria for the marked dimension", id="criteria"),
        # pair
        _key("a", "choose('A')", "A better", "A follows the preference better (saves)", id="pair.a"),
        _key("b", "choose('B')", "B better", "B follows the preference better (saves)", id="pair.b"),
        _key("t", "choose('tie')", "Tie", "Neither is better (saves)", id="pair.tie"),
        # relevance
        _key("y", "relevant(True)", "Relevant", "It is relevant to the query (saves)", id="relevant.yes"),
        _key("n", "relevant(False)", "Not relevant", "It is not relevant to the query (saves)", id="relevant.no"),
        # attribute
        _key("a", "verdict('accept')", "Accept", "The attribute is right about the user (saves)", id="attr.accept"),
        _key("u", "verdict('uncertain')", "Uncertain", "Cannot tell (saves)", id="attr.uncertain"),
        _key("r", "verdict('reject')", "Reject", "The attribute is wrong (saves)", id="attr.reject"),
        # every kind
        _key("o", "note", "Note", "Write a one-line note stored with the label", id="note"),
        _key("x", "skip", "Skip", "Pass on this item (not served again, no label)", id="skip"),
        _key("enter", "next", "Next", "The next item", id="next"),
        _key("n", "next", "Next", "The next item", id="next_n", show=False),
        _key("pagedown", "scroll(1)", "Scroll", "Scroll the answers down", id="page_down", show=False),
        _key("pageup", "scroll(-1)", "Scroll", "Scroll the answers up", id="page_up", show=False),
    ]
    #: Actions that label the item, per queue kind (disabled for the other kinds and once labelled).
    KIND_ACTIONS = {
        "answer": {"set_score", "next_dimension", "previous_dimension", "clear_score", "save", "criteria"},
        "pair": {"choose"},
        "relevance": {"relevant"},
        "attribute": {"verdict"},
    }
    LABELLING = {"note", "skip"}

    def __init__(self, workbench, queue_name: str, annotator: str | None = None, *, exit_on_leave: bool = False):
        """``annotator`` None: the config's ``annotator``, else the screen asks for a name first.
        ``exit_on_leave``: ``esc`` quits the app (annotation mode opened from the command line)
        instead of going back to the screen below."""
        super().__init__()
        self.workbench = workbench
        self.queue_name = queue_name
        self.annotator: str | None = annotator or workbench.settings.annotator
        self.exit_on_leave = exit_on_leave
        self.queue: Queue | None = None  # once read
        self.item: Item | None = None  # on screen
        self.revealed: Revealed | None = None  # once it may be shown
        #: asking (for the name) | labelling | revealed (label saved) | finished | failed
        self.state = "asking"
        self.order: list[int] = []  # the annotator's serving order
        self.done = (0, 0)  # (labelled, skipped)
        self.scores: dict[str, float] = {}
        self.dimension = 0  # index into ANSWER_DIMENSIONS
        self.note = ""
        self.saved_label = ""  # what was saved, for the revealed panel
        self.show_criteria = False
        self.message = ""

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="ann-status")
            yield Input(placeholder="your name as annotator (letters, digits, _ . @ -), then enter", id="ann-name")
            yield VerticalScroll(Static(id="ann-context-text"), id="ann-context", can_focus=False)
            with Horizontal(id="ann-answers"):
                yield AnswerPane(Static(id="ann-a-text"), id="ann-a")
                yield AnswerPane(Static(id="ann-b-text"), id="ann-b")
            yield Static(id="ann-decide")
            yield VerticalScroll(Static(id="ann-criteria-text"), id="ann-criteria", can_focus=False)
            yield Static(id="ann-note")
            yield Input(placeholder="a note stored with the label; enter keeps it, esc drops it", id="ann-note-input")
            yield VerticalScroll(Static(id="ann-reveal-text"), id="ann-reveal", can_focus=False)
            yield Static(id="ann-message")
        yield Footer()

    def on_mount(self) -> None:
        try:
            self.queue = self.workbench.annotation_queue(self.queue_name)
        except AnnotationError as exc:
            self._fail(str(exc))
            return
        if self.annotator is None:
            self._ask_name()
            return
        try:
            self.annotator = check_annotator(self.annotator)
        except AnnotationError as exc:
            self.notify(safe_text(str(exc)).plain, severity="error", markup=False)
            self._ask_name()
            return
        self._start()

    # -- the annotator's name --------------------------------------------------------------
    def _ask_name(self) -> None:
        self.state = "asking"
        self._draw()
        self.query_one("#ann-name", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "ann-name":
            try:
                self.annotator = check_annotator(event.value)
            except AnnotationError as exc:
                self.notify(safe_text(str(exc)).plain, severity="error", markup=False, timeout=6)
                return
            self.set_focus(None)
            self._start()
        elif event.input.id == "ann-note-input":
            self.note = event.value.strip()
            self._close_note()

    # -- serving items ---------------------------------------------------------------------
    def _start(self) -> None:
        assert self.annotator is not None
        self.order = self.workbench.annotation_order(self.queue_name, self.annotator)
        self._next_item()

    def _next_item(self) -> None:
        assert self.annotator is not None and self.queue is not None
        try:
            self.item = self.workbench.next_annotation_item(self.queue_name, self.annotator)
            self.done = self.workbench.annotation_progress(self.queue_name, self.annotator)
        except AnnotationError as exc:
            self._fail(str(exc))
            return
        self.scores, self.dimension, self.note, self.saved_label = {}, 0, "", ""
        self.revealed = None
        if self.item is None:
            self.state = "finished"
        else:
            self.state = "labelling"
            if not self.queue.blind:
                self.revealed = self.workbench.reveal_annotation(self.item)
        self._draw()
        for pane in self.query(AnswerPane):
            pane.scroll_home(animate=False)

    def _fail(self, message: str) -> None:
        self.state, self.message = "failed", message
        self._draw()

    # -- drawing ---------------------------------------------------------------------------
    def _draw(self, *, item_changed: bool = True) -> None:
        """Show the current state. ``item_changed`` False (a label was just saved): the query, the
        preference and the answers on screen stay as they are."""
        state, item = self.state, self.item
        labelling = state in ("labelling", "revealed") and item is not None
        self.query_one("#ann-status", Static).update(self._status())
        self.query_one("#ann-name").display = state == "asking"
        for selector in ("#ann-context", "#ann-answers", "#ann-decide"):
            self.query_one(selector).display = labelling
        self.query_one("#ann-criteria").display = labelling and self._criteria_shown()
        self.query_one("#ann-note-input").display = False
        self._draw_note()
        self.query_one("#ann-reveal").display = labelling and self.revealed is not None
        self.query_one("#ann-message").display = state in ("finished", "failed", "asking")
        self.query_one("#ann-message", Static).update(self._message())
        if labelling:
            assert item is not None
            if item_changed:
                self.query_one("#ann-context-text", Static).update(self._context_table())
                self._draw_answers()
            self._draw_decision()
            if self._criteria_shown():
                self.query_one("#ann-criteria-text", Static).update(self._criteria())
            if self.revealed is not None:
                self.query_one("#ann-reveal-text", Static).update(self._reveal())
        self.refresh_bindings()

    def _status(self) -> Text:
        text = Text("queue ").append_text(safe_text(self.queue_name, "bold"))
        if self.annotator:
            text.append(" · ").append_text(safe_text(self.annotator, "bold"))
        if self.queue is not None and self.annotator and self.state != "asking":
            labelled, skipped = self.done
            if self.item is not None:
                k = (
                    self.order.index(self.item.position) + 1
                    if self.item.position in self.order
                    else labelled + skipped + 1
                )
                text.append(f" · item {k} of {self.queue.size}")
            else:
                text.append(f" · {self.queue.size} item{'' if self.queue.size == 1 else 's'}")
            text.append(f" (done {labelled}, skipped {skipped})")
            text.append(" · blind" if self.queue.blind else " · not blind", "dim")
        return text

    def _message(self) -> Text:
        if self.state == "asking":
            return Text("Who is labelling? Type your name and press enter (stored with every label).")
        if self.state == "failed":
            return safe_text(self.message, "bold red")
        if self.state == "finished":
            labelled, skipped = self.done
            text = Text(f"queue finished: {labelled} labelled, {skipped} skipped", "bold green")
            text.append("\n\nEvery label is stored. esc leaves.", "dim")
            return text
        return Text()

    def _context_table(self) -> Table:
        assert self.item is not None
        item = self.item
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_row("Query", safe_text(item.query))
        grid.add_row("Preference", safe_text(item.preference) if item.preference else Text("(none stored)", "dim"))
        return grid

    def _draw_answers(self) -> None:
        assert self.item is not None
        item = self.item
        a, b = self.query_one("#ann-a", AnswerPane), self.query_one("#ann-b", AnswerPane)
        b.display = item.kind == "pair"
        if item.kind == "answer":
            a.border_title = "answer"
            self._set_text("#ann-a-text", item.shown[0] if item.shown else "")
        elif item.kind == "pair":
            a.border_title, b.border_title = "A", "B"
            self._set_text("#ann-a-text", item.shown[0] if item.shown else "")
            self._set_text("#ann-b-text", item.shown[1] if len(item.shown) > 1 else "")
        else:
            a.border_title = "attribute" if item.kind == "attribute" or item.target_kind == "attribute" else "turn"
            self._set_text("#ann-a-text", item.target_text)

    def _set_text(self, selector: str, text: str) -> None:
        self.query_one(selector, Static).update(safe_text(text) if text.strip() else Text("(empty)", "dim"))

    def _draw_decision(self, *, layout: bool = True) -> None:
        """``layout`` False: only the scores changed (the panel keeps its fixed height of 3)."""
        assert self.item is not None
        panel = self.query_one("#ann-decide", Static)
        panel.set_class(self.item.kind == "answer" and self.state == "labelling", "rubric")
        panel.update(self._decision(), layout=layout)

    def _decision(self) -> Text | Group:
        item = self.item
        assert item is not None
        if self.state == "revealed":
            return Text("saved: ", "bold green").append_text(safe_text(self.saved_label))
        if item.kind == "answer":
            return self._rubric_panel()
        if item.kind == "pair":
            return keys_text("Which answer follows the user's preference better?", ("a", "A"), ("b", "B"), ("t", "tie"))
        if item.kind == "relevance":
            what = "attribute" if item.target_kind == "attribute" else "turn"
            return keys_text(f"Is this {what} relevant to the query?", ("y", "yes"), ("n", "no"))
        return keys_text(
            "Is this extracted attribute right about the user?", ("a", "accept"), ("u", "uncertain"), ("r", "reject")
        )

    def _rubric_panel(self) -> Group:
        """The three dimensions on one line (the marked one ▸, each with its score so far), the
        marked one's definition under it."""
        line = Text()
        for i, dim in enumerate(ANSWER_DIMENSIONS):
            marked = i == self.dimension
            score = self.scores.get(dim)
            line.append("▸ " if marked else "  ", "bold cyan")
            line.append(dim, "bold reverse" if marked else "")
            line.append(f" {score_text(score)}", "bold green" if score is not None else "dim")
            line.append("   ")
        line.append("1–5 score · tab next", "dim")
        definition = rubric(ANSWER_DIMENSIONS[self.dimension])[0]
        return Group(line, Text(definition, "dim"))

    def _criteria_shown(self) -> bool:
        return self.show_criteria and self.item is not None and self.item.kind == "answer" and self.state == "labelling"

    def _criteria(self) -> Text:
        dim = ANSWER_DIMENSIONS[self.dimension]
        _, criteria = rubric(dim)
        return Text(f"{dim} (RealPref rubric, as the rubric judge is told)\n", "bold").append(criteria)

    def _reveal(self) -> Group:
        """The revealed panel: models in stored order (and which was shown as A / B), the method,
        the context and each judge's latest scores."""
        item, r = self.item, self.revealed
        assert item is not None and r is not None
        title = Text("revealed", "bold green") if self.queue and self.queue.blind else Text("not blind", "bold")
        if item.kind == "pair":
            models = Text(" · ").join(
                Text(f"answer {n}: ").append_text(safe_text(m, "bold")).append(f" (shown as {shown_as(item, n)})")
                for n, m in enumerate(r.models, 1)
            )
        else:
            models = Text(" · ").join(safe_text(m, "bold") for m in r.models) if r.models else Text("–")
        head = Text.assemble(
            title, " · ", models, " · method ", safe_text(r.method), " · context ", safe_text(r.context)
        )
        if not r.scores:
            return Group(head, Text("no judge scored this answer", "dim"), self._next_hint())
        table = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), show_header=True, header_style="bold")
        table.add_column("judge")
        table.add_column("dimension")
        columns = sorted({n for n, *_ in r.scores})
        for n in columns:
            table.add_column("score" if item.kind != "pair" else f"answer {n} ({shown_as(item, n)})", justify="right")
        rows: dict[tuple[str, str], dict[int, float | None]] = {}
        for n, judge, metric, score in r.scores:
            rows.setdefault((judge, metric), {})[n] = score
        for (judge, metric), by_answer in rows.items():
            cells = [safe_text(score_text(by_answer[n])) if n in by_answer else Text("") for n in columns]
            table.add_row(safe_text(judge), safe_text(metric), *cells)
        return Group(head, table, self._next_hint())

    def _next_hint(self) -> Text:
        return Text("enter / n: next item" if self.state == "revealed" else "", "dim")

    # -- which keys work now ---------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only the keys that mean something now: the item's kind's labels while it is unlabelled
        (none while a name or a note is typed), ``enter`` once the label is saved."""
        if action in ("leave", "scroll"):
            return True
        if action == "next":
            return self.state == "revealed"
        kind = next((k for k, actions in self.KIND_ACTIONS.items() if action in actions), None)
        if kind is None and action not in self.LABELLING:
            return True
        if self.state != "labelling" or self.item is None or self._typing():
            return False
        return kind is None or kind == self.item.kind

    def _typing(self) -> bool:
        focused = self.focused
        return isinstance(focused, Input)

    # -- labelling -------------------------------------------------------------------------
    def action_set_score(self, score: int) -> None:
        dim = ANSWER_DIMENSIONS[self.dimension]
        self.scores[dim] = float(score)
        if self.dimension < len(ANSWER_DIMENSIONS) - 1:  # on to the next dimension, as in a form
            self.dimension += 1
        self._draw_decision(layout=False)
        self._redraw_criteria()

    def action_clear_score(self) -> None:
        self.scores.pop(ANSWER_DIMENSIONS[self.dimension], None)
        self._draw_decision(layout=False)

    def action_next_dimension(self) -> None:
        self.dimension = (self.dimension + 1) % len(ANSWER_DIMENSIONS)
        self._draw_decision(layout=False)
        self._redraw_criteria()

    def action_previous_dimension(self) -> None:
        self.dimension = (self.dimension - 1) % len(ANSWER_DIMENSIONS)
        self._draw_decision(layout=False)
        self._redraw_criteria()

    def action_criteria(self) -> None:
        self.show_criteria = not self.show_criteria
        self.query_one("#ann-criteria").display = self._criteria_shown()
        self._redraw_criteria()

    def _redraw_criteria(self) -> None:
        if self._criteria_shown():
            self.query_one("#ann-criteria-text", Static).update(self._criteria())

    def action_save(self) -> None:
        if not self.scores:
            self.notify("Score at least one dimension (1–5) first, or skip the item (x).", severity="warning")
            return
        shown = ", ".join(f"{d} {self.scores[d]:g}" for d in ANSWER_DIMENSIONS if d in self.scores)
        self._save(Label(scores=dict(self.scores), note=self.note), shown)

    def action_choose(self, choice: str) -> None:
        self._save(Label(choice=choice, note=self.note), PAIR_CHOICES[choice])

    def action_relevant(self, relevant: bool) -> None:
        self._save(Label(relevant=relevant, note=self.note), "relevant" if relevant else "not relevant")

    def action_verdict(self, verdict: str) -> None:
        self._save(Label(verdict=verdict, note=self.note), verdict)

    def _save(self, label: Label, shown: str) -> None:
        item, annotator, q = self.item, self.annotator, self.queue
        assert item is not None and annotator is not None and q is not None

        def save() -> None:
            self.workbench.save_annotation(item, annotator, label, blind=q.blind)

        if not self._store(save):
            return
        self.saved_label = shown + (f" · note: {label.note}" if label.note else "")
        if not q.blind:  # everything was on screen already: straight on
            self.notify(safe_text(f"saved: {self.saved_label}").plain, timeout=2, markup=False)
            self._next_item()
            return
        self.state = "revealed"
        self.done = (self.done[0] + 1, self.done[1])
        try:
            self.revealed = self.workbench.reveal_annotation(item)
        except AnnotationError as exc:
            self.notify(safe_text(str(exc)).plain, severity="error", markup=False)
        self._draw(item_changed=False)

    def action_skip(self) -> None:
        item, annotator = self.item, self.annotator
        assert item is not None and annotator is not None
        if self._store(lambda: self.workbench.skip_annotation(item, annotator)):
            self.notify("skipped (not served to you again)", timeout=2)
            self._next_item()

    def _store(self, save) -> bool:
        """Run a write; a refused label (AnnotationError, a score off the scale) or a database that
        cannot take it is shown, and the item stays on screen with what was chosen."""
        try:
            return store_or_notify(self, save)
        except ValueError as exc:
            self.notify(safe_text(f"not stored: {exc}").plain, severity="error", timeout=10, markup=False)
            return False

    def action_next(self) -> None:
        self._next_item()

    # -- the note --------------------------------------------------------------------------
    def action_note(self) -> None:
        box = self.query_one("#ann-note-input", Input)
        box.value = self.note
        box.display = True
        box.focus()
        self.refresh_bindings()

    def _close_note(self) -> None:
        box = self.query_one("#ann-note-input", Input)
        box.display = False
        self.set_focus(None)
        self._draw_note()
        self.refresh_bindings()

    def _draw_note(self) -> None:
        line = self.query_one("#ann-note", Static)
        line.display = bool(self.note) and self.state == "labelling"
        line.update(
            Text("your note: ", "bold").append_text(safe_text(self.note, "italic")).append("  (o edits)", "dim")
        )

    # -- moving around ---------------------------------------------------------------------
    def action_scroll(self, direction: int) -> None:
        for pane in self.query(AnswerPane):
            if pane.display:
                if direction > 0:
                    pane.scroll_page_down()
                else:
                    pane.scroll_page_up()

    def action_leave(self) -> None:
        if self.query_one("#ann-note-input", Input).has_focus:  # esc in the note box drops the edit
            self._close_note()
            return
        if self.exit_on_leave:
            self.app.exit()
        else:
            self.dismiss(None)
