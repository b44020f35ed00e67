"""The run bar: what to run — user, query, expression type, context (+ seed, inter turns for a
context that takes them, or session ids for ``custom``), method, models, judge, and whether to
force a context larger than a model's window.

It only holds choices and reports them (``choices()``; ``UserChosen`` and ``Changed`` when the
operator changes one); the screen turns them into a RunSpec. Three compact rows (four on a narrow
screen, where the query takes a row of its own), so it fits 80 columns and leaves the panes their
height.

A user of a benchmark starts from its profile (:mod:`core.run.profile`: context, turns, method,
judge), named by the "profile" button (pressed: back to it; marked * when a choice differs). A
choice the operator made otherwise than the profile (or the defaults) gives stays when another
user is chosen, as an option given on the command line wins over the profile; the others follow
the new user's profile, or prefscope's defaults for a user of no benchmark. What a re-opened run
set (its context, method, judge, seed, models …) belongs to that run: another user starts clean.

Models: a re-opened run shows its models, but only those that can run here arm ``ctrl+r``
(``imported:*`` answers were recorded elsewhere: :func:`runnable`); with none of them, the
operator's models (or the configured ones) stay.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, OptionList, Select

from core.history.configs import CONFIGS
from core.model import EXPRESSION_TYPES, UserBundle
from core.providers.base import ModelSpec
from core.run.profile import DEFAULT_CONTEXT, DEFAULT_METHOD, Choice, Resolved, resolve, takes_turns
from core.run.spec import RunSpec
from tui.safe_text import safe_text
from tui.user_index import UserIndex

if TYPE_CHECKING:
    from core.benchmark import Benchmark

#: Context configurations offered in the picker: (name, label) of those with a picker label. A
#: label names the filler a context adds, never a total: the prompt's size is on the estimate line.
CONTEXTS = [(c.name, c.picker_label) for c in CONFIGS.values() if c.picker_label]
CONTEXT_TOOLTIP = (
    "The history the model sees. +35K: filler tokens added around the user's own sessions; "
    "the line below shows the prompt's real size"
)
#: The choices a profile sets, and the run bar's widget for each.
PROFILE_WIDGETS = {"context": "rb-context", "turns": "rb-turns", "method": "rb-method", "judge": "rb-judge"}
#: Providers whose answers were recorded elsewhere and are never generated here.
RECORDED_PROVIDERS = {"imported"}
#: The choices a re-opened run sets besides the profile's and the models, with their defaults.
RUN_DEFAULTS = {"rb-seed": "0", "rb-force": False, "rb-sessions": ""}


def runnable(model_id: str) -> bool:
    """Whether ctrl+r can call this model (``imported:*`` answers cannot be generated again)."""
    return model_id.partition(":")[0] not in RECORDED_PROVIDERS


def session_ids(text: str) -> list[str]:
    """The custom context's sessions as typed: ids separated by commas or spaces, in order."""
    return [s for s in text.replace(",", " ").split() if s]


#: Characters of a query entry in the picker (one line each; the highlighted one shows its whole text).
QUERY_WIDTH = 72


@dataclass(frozen=True)
class Choices:
    user_id: str | None
    query_id: str | None
    expression_type: int | None
    context: str
    seed: int
    method: str
    models: list[str]
    judge: str | None
    force: bool
    #: The one filler pool chosen, or "" for the user's own source's pools (the spec's default).
    filler_pool: str = ""
    #: Inter turns, for a context that takes them (None: not set).
    turns: int | None = None
    #: The custom context's session ids, in order (ignored by the other contexts).
    sessions: tuple[str, ...] = ()

    def spec(self) -> RunSpec | None:
        """The run these choices describe; None until a user, a query and a model are chosen."""
        if not (self.user_id and self.query_id and self.models):
            return None
        return RunSpec(
            user_id=self.user_id,
            query_id=self.query_id,
            expression_type=self.expression_type,
            context=self.context,
            seed=self.seed,
            method=self.method,
            models=[ModelSpec(id=m) for m in self.models],
            judges=[self.judge] if self.judge else [],
            force=self.force,
            filler_pools=[self.filler_pool] if self.filler_pool else None,
            turns=self.turns,
            method_options={"session_ids": list(self.sessions)} if self.context == "custom" and self.sessions else {},
        )


#: How queries are labelled by kind in the pickers.
KIND_LABELS = {"open": "open", "mcq": "MCQ", "tf": "TF"}


def query_label(bundle: UserBundle, query_id: str, width: int | None = QUERY_WIDTH) -> str:
    """``[open] p1-open I've got four days…`` — kind, id, the preference it targets when the id does
    not say it (``→p3``, ``(gen)`` = generalized), then the text (whole when ``width`` is None)."""
    q = bundle.query(query_id)
    target = ""
    if q.preference_id:
        if not q.id.startswith(q.preference_id):
            target = f" →{q.preference_id}"
        try:
            if bundle.preference(q.preference_id).origin == "generalized":
                target += " (gen)"
        except (KeyError, LookupError):
            pass
    head = f"[{KIND_LABELS.get(q.kind, q.kind)}] {q.id}{target} "
    text = " ".join(q.text.split())
    if width is None:
        return head + text
    room = max(10, width - len(head))
    return head + (text if len(text) <= room else text[: room - 1] + "…")


def user_label(user) -> str:
    """``Maya Okafor (maya, sample)``; a user without a name by id: ``pe-travel-3 (prefeval)``."""
    if user.name and user.name != user.id:
        return f"{user.name} ({user.id}, {user.source})"
    return f"{user.id} ({user.source})"


class RunBar(Vertical):
    @dataclass
    class UserChosen(Message):
        user_id: str

    @dataclass
    class Changed(Message):
        """The operator changed a choice that shapes the prompt (not the judge, not the user)."""

    @dataclass
    class RunRequested(Message):
        """Run the current choices (▶ Run, or the screen's ctrl+r)."""

    DEFAULT_CSS = """
    RunBar { height: auto; padding: 0 1; }
    RunBar Horizontal { height: 1; }
    RunBar #rb-lower { height: auto; layout: vertical; }
    RunBar #rb-row2, RunBar #rb-row3 { width: 1fr; height: 1; }
    RunBar Select { width: 20; margin-right: 1; }
    RunBar #rb-user { width: 30; }
    RunBar #rb-query { width: 1fr; min-width: 24; margin-left: 1; }
    /* Entries are one line (labels are cut to fit); the highlighted query shows its whole text. */
    RunBar #rb-user > SelectOverlay, RunBar #rb-query > SelectOverlay {
        min-width: 78; max-width: 100vw; constrain: inside inside;
    }
    RunBar #rb-user > SelectOverlay { min-width: 60; text-wrap: nowrap; text-overflow: ellipsis; }
    RunBar SelectCurrent #label { text-wrap: nowrap; text-overflow: ellipsis; }
    RunBar #rb-method { width: 24; }
    RunBar #rb-judge { width: 22; }
    RunBar #rb-seed, RunBar #rb-turns { width: 10; margin-right: 1; }
    RunBar #rb-sessions { width: 1fr; min-width: 12; margin-right: 1; }
    RunBar #rb-turns, RunBar #rb-sessions { display: none; }
    RunBar.takes-turns #rb-turns, RunBar.takes-sessions #rb-sessions { display: block; }
    RunBar.takes-turns #rb-seed, RunBar.takes-sessions #rb-seed { display: none; }
    RunBar #rb-profile { display: none; max-width: 30; text-wrap: nowrap; text-overflow: ellipsis; }
    RunBar.with-profile #rb-profile { display: block; }
    RunBar #rb-filler { width: 38; }
    RunBar #rb-force { width: auto; margin-right: 1; }
    RunBar Button { width: auto; min-width: 8; margin-left: 1; }
    """

    def __init__(
        self,
        methods: list[tuple[str, str]],
        models: list[str],
        judges: list[str],
        *,
        default_judge: str | None = None,
        id: str | None = None,
    ):
        super().__init__(id=id)
        self._methods = methods
        self.models = list(models)
        self._judges = judges
        self._default_judge = default_judge if default_judge in judges else (judges[0] if judges else "")
        #: The choices as the screen knows them: set from code, or last reported by ``Changed``.
        self._known: Choices | None = None
        #: The models the operator picked (ctrl+o), else the configured ones: what a re-opened
        #: run's models give way to when another user is chosen.
        self._own_models = list(models)
        #: What a re-opened run set: widget id -> value (its models under "models"), and the
        #: profile's choices as shown then. A value still shown as the run set it is the run's,
        #: not the operator's.
        self._from_run: dict[str, Any] = {}
        self._run_profile: dict[str, Any] = {}
        self._bundle: UserBundle | None = None  # whose queries the query picker lists
        #: The benchmark whose profile the user started from (None: prefscope's defaults), the
        #: configured judge (a judge model makes a profile's LLM judge), and the values the profile
        #: (or the defaults) give: a choice shown otherwise is the operator's.
        self._benchmark: Benchmark | None = None
        self._judge_setting: str | None = None
        self._base: dict[str, Any] = resolve(Choice(), None, self._defaults(), None).values()
        self._expanded: int | None = None  # the query entry showing its whole text
        #: (label, pool id or "" for the default) of the filler picker, for the command palette.
        self.filler_labels: list[tuple[str, str]] = []
        #: (label, user id) of the user picker; the palette searches them through ``user_index``.
        self._user_entries: list[tuple[str, str]] = []
        self._user_index: UserIndex | None = None

    def compose(self) -> ComposeResult:
        # The query comes last so that on narrow screens it can take a row of its own (styles.tcss).
        with Horizontal(id="rb-row1"):
            yield Select([], prompt="user", id="rb-user", allow_blank=True, compact=True)
            yield Button(self._models_label(), id="rb-models", compact=True, tooltip="Choose models (ctrl+o)")
            yield Button("▶ Run", id="rb-run", variant="success", compact=True, tooltip="Run (ctrl+r)")
            yield Select([], prompt="query", id="rb-query", allow_blank=True, compact=True)
        with Horizontal(id="rb-lower"):
            with Horizontal(id="rb-row2"):
                yield Select(
                    [(f"E{k} {v}", k) for k, v in EXPRESSION_TYPES.items()],
                    prompt="expression",
                    id="rb-expression",
                    allow_blank=True,
                    compact=True,
                )
                yield Select(
                    [(label, key) for key, label in CONTEXTS],
                    value="simple",
                    id="rb-context",
                    allow_blank=False,
                    compact=True,
                    tooltip=CONTEXT_TOOLTIP,
                )
                yield Input(
                    "0",
                    placeholder="seed",
                    id="rb-seed",
                    type="integer",
                    compact=True,
                    tooltip="Seed for filler placement (same seed, same history)",
                )
                yield Input(
                    "",
                    placeholder="turns",
                    id="rb-turns",
                    type="integer",
                    compact=True,
                    tooltip="Inter turns after the preference (N turns: the pool's first 2N messages; empty: none)",
                )
                yield Input(
                    "",
                    placeholder="session ids, comma-separated",
                    id="rb-sessions",
                    compact=True,
                    tooltip="The custom context's sessions, in the order given (the timeline lists their ids)",
                )
                yield Select([("filler: default", "")], value="", id="rb-filler", allow_blank=False, compact=True)
            with Horizontal(id="rb-row3"):
                yield Select(
                    [(label, key) for key, label in self._methods],
                    value=self._methods[0][0],
                    id="rb-method",
                    allow_blank=False,
                    compact=True,
                )
                yield Select(
                    [(j, j) for j in self._judges] + [("no judge", "")],
                    value=self._default_judge,
                    id="rb-judge",
                    allow_blank=False,
                    compact=True,
                )
                yield Checkbox(
                    "force",
                    id="rb-force",
                    compact=True,
                    tooltip="Send even when the prompt is larger than a model's context window",
                )
                yield Button("profile", id="rb-profile", compact=True)

    def _models_label(self) -> str:
        return f"models {len(self.models)}"

    def set_models(self, models: list[str], *, own: bool = True) -> None:
        """Show ``models``; ``own``: the operator's (or configured) choice, not a re-opened run's."""
        self.models = list(models)
        if own:
            self._own_models = list(models)
            self._from_run.pop("models", None)
        self.query_one("#rb-models", Button).label = self._models_label()
        self.query_one("#rb-models", Button).tooltip = "Models: " + ", ".join(self.models) + " (ctrl+o to change)"

    def on_mount(self) -> None:
        self.set_models(self.models)
        overlay = self.query_one("#rb-query", Select).query_one("SelectOverlay", OptionList)
        self.watch(overlay, "highlighted", self._show_whole_query, init=False)

    def _show_whole_query(self, index: int | None) -> None:
        """The highlighted entry of the query picker shows the query's whole text (others one line)."""
        select = self.query_one("#rb-query", Select)
        overlay = select.query_one("SelectOverlay", OptionList)
        options = select._options  # (prompt, value) in overlay order, the blank entry first
        if self._bundle is None:
            return
        if self._expanded is not None and self._expanded < len(options) and self._expanded != index:
            overlay.replace_option_prompt_at_index(self._expanded, options[self._expanded][0])
            self._expanded = None
        if index is None or index >= len(options) or options[index][1] is Select.NULL:
            return
        whole = safe_text(query_label(self._bundle, str(options[index][1]), width=None))
        overlay.replace_option_prompt_at_index(index, whole)
        self._expanded = index

    @contextlib.contextmanager
    def setting_from_code(self) -> Iterator[None]:
        """Choices set inside are not the operator's: no ``Changed`` for them. Their change
        events arrive later, after any number of refreshes (a re-opened run mounts its panes
        meanwhile), so what they are compared with is the choices as this block left them."""
        try:
            yield
        finally:
            self._known = self.choices()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "rb-run":
            self.post_message(self.RunRequested())
        elif event.button.id == "rb-models":
            self.pick_models()
        elif event.button.id == "rb-profile":
            self.back_to_profile()

    def pick_models(self) -> None:
        """Let the operator choose the models to run (from the app's available ones)."""
        from tui.screens.models import ModelPicker

        def chosen(models: list[str] | None) -> None:
            if models:
                self.set_models(models)
                self.post_message(self.Changed())

        self.app.push_screen(ModelPicker(self.app.available_models(), self.models), chosen)

    def pick_user(self) -> None:
        """Open the user picker (the palette's "Switch user…")."""
        select = self.query_one("#rb-user", Select)
        select.focus()
        select.action_show_overlay()

    @on(Select.Changed, "#rb-user")
    def _user_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL:
            self.post_message(self.UserChosen(str(event.value)))

    @on(Select.Changed, "#rb-query")
    @on(Select.Changed, "#rb-expression")
    @on(Select.Changed, "#rb-context")
    @on(Select.Changed, "#rb-method")
    @on(Select.Changed, "#rb-filler")
    @on(Checkbox.Changed, "#rb-force")
    @on(Input.Changed, "#rb-seed")
    @on(Input.Changed, "#rb-turns")
    @on(Input.Changed, "#rb-sessions")
    def _choice_changed(self) -> None:
        self._show_turns()
        self._show_profile()
        now = self.choices()
        if now != self._known:
            self._known = now
            self.post_message(self.Changed())

    @on(Select.Changed, "#rb-judge")
    def _judge_changed(self) -> None:
        self._show_profile()  # the judge does not shape the prompt: no Changed

    # -- the profile -----------------------------------------------------------------------
    def _defaults(self) -> Choice:
        """prefscope's own choices (a user of no benchmark, ``--profile none``)."""
        method = self._methods[0][0] if self._methods else DEFAULT_METHOD  # as the picker starts
        return Choice(DEFAULT_CONTEXT, None, method, (self._default_judge,))

    def _values(self) -> dict[str, Any]:
        """context / turns / method / judge as shown ("" for no judge)."""
        c = self.choices()
        return {"context": c.context, "turns": c.turns, "method": c.method, "judge": c.judge or ""}

    def _operators(self) -> dict[str, Any]:
        """The choices the operator changed away from the profile's (or the defaults)."""
        return {k: v for k, v in self._values().items() if v != self._base[k]}

    def _resolve(self, benchmark: Benchmark | None, keep: dict[str, Any]) -> Resolved:
        return resolve(Choice.of(keep), benchmark, self._defaults(), self._judge_setting)

    def use_profile(self, benchmark: Benchmark | None, judge_setting: str | None) -> None:
        """Start from ``benchmark``'s profile (None: prefscope's defaults), keeping the choices the
        operator changed (a newly chosen user); what a re-opened run set is dropped."""
        run = self._run_profile
        keep = {k: v for k, v in self._operators().items() if k not in run or run[k] != v}
        self._forget_run()
        self._judge_setting = judge_setting
        self._benchmark = benchmark
        self._base = self._resolve(benchmark, {}).values()
        self._set(self._resolve(benchmark, keep))

    def _forget_run(self) -> None:
        """The re-opened run's seed, force, sessions and models give way to the defaults / the
        operator's own, unless the operator changed them since."""
        with self.setting_from_code():
            for widget_id, default in RUN_DEFAULTS.items():
                widget = self.query_one(f"#{widget_id}")
                shown = widget.value if isinstance(widget, Input | Checkbox) else None
                if widget_id in self._from_run and shown == self._from_run[widget_id]:
                    self.set_value(widget_id, default)
        if self._from_run.get("models") == self.models:
            self.set_models(self._own_models)
        self._from_run, self._run_profile = {}, {}

    def back_to_profile(self) -> None:
        """Every choice back to the profile's (or prefscope's defaults): the profile button."""
        self._set(self._resolve(self._benchmark, {}))
        self.post_message(self.Changed())

    def _set(self, resolved: Resolved) -> None:
        values = resolved.values()
        with self.setting_from_code():
            judge = self.query_one("#rb-judge", Select)
            if values["judge"] not in judge._legal_values:  # e.g. taxonomy:<model> next to a rubric setting
                judge.set_options([(j, j) for j in [*self._judges, values["judge"]]] + [("no judge", "")])
            for name, widget_id in PROFILE_WIDGETS.items():
                self.set_value(widget_id, "" if values[name] is None else values[name])
        self._show_turns()
        self._show_profile()

    def profile_now(self) -> Resolved:
        """What the current choices take from the profile (for the run's plan notes)."""
        return self._resolve(self._benchmark, self._operators())

    def _show_profile(self) -> None:
        button = self.query_one("#rb-profile", Button)
        benchmark = self._benchmark
        self.set_class(benchmark is not None, "with-profile")
        if benchmark is None:
            return
        base = self._resolve(benchmark, {})
        changed = [k for k, _ in base.applied if k in self._operators()]
        button.label = safe_text(f"profile {benchmark.title}{'*' if changed else ''}")
        lines = [f"{benchmark.title}'s defaults: " + (", ".join(f"{k} {v}" for k, v in base.applied) or "none")]
        lines += list(base.reasons)
        if changed:
            lines.append("changed here: " + ", ".join(changed))
        lines.append("Press to go back to them")
        button.tooltip = safe_text("\n".join(lines))

    def _show_turns(self) -> None:
        context = self._context_value()
        self.set_class(takes_turns(context), "takes-turns")
        self.set_class(context == "custom", "takes-sessions")

    def _context_value(self) -> str:
        value = self.query_one("#rb-context", Select).value
        return DEFAULT_CONTEXT if value is Select.NULL else str(value)

    def set_users(self, users: list[tuple[str, str]], selected: str | None) -> None:
        self._user_entries, self._user_index = users, None
        select = self.query_one("#rb-user", Select)
        # Names are data: a Text prompt is shown literally (a str would be parsed as markup).
        select.set_options([(safe_text(name), user_id) for name, user_id in users])
        if selected is not None:
            select.value = selected

    @property
    def user_index(self) -> UserIndex:
        """The users of the picker for the command palette, indexed once per ``set_users``."""
        if self._user_index is None:
            self._user_index = UserIndex(self._user_entries)
        return self._user_index

    def set_queries(self, bundle: UserBundle, selected: str | None) -> None:
        self._bundle, self._expanded = bundle, None
        select = self.query_one("#rb-query", Select)
        select.set_options([(safe_text(query_label(bundle, q.id)), q.id) for q in bundle.queries])
        if selected is not None:
            select.value = selected
        types = bundle.expression_types()
        expr = self.query_one("#rb-expression", Select)
        expr.set_options([(f"E{t} {EXPRESSION_TYPES.get(t, 'untyped')}", t) for t in types])
        if types:
            expr.value = types[-1]

    def set_filler_pools(self, choices, *, keep: bool = False) -> None:
        """Offer the stored filler pools (``storage.fillers.PoolChoices``); the first entry is the
        user's default for the current context, named by its pools, so the prompt's provenance is
        visible before a run (a default pool not imported yet says so). ``keep``: the pool the
        operator picked stays chosen when still offered (another context), else the default."""
        select = self.query_one("#rb-filler", Select)
        stored = {p.id for p in choices.pools}
        missing = [p for p in choices.default if p not in stored]
        default = ", ".join(choices.default) or "none"
        note = ", not imported" if missing else ""
        self.filler_labels = [(f"filler: {default} (default{note})", "")]
        self.filler_labels += [(f"filler: {p.id} ({p.sessions} sessions)", p.id) for p in choices.pools]
        chosen = select.value if keep and select.value in stored else ""
        with self.setting_from_code():
            options = [(safe_text(label), value) for label, value in self.filler_labels]
            select.set_options(options)
            select.value = chosen
            # The value may not change ("" before and after), so the shown label is set here.
            shown = next(label for label, value in options if value == chosen)
            select.query_one("SelectCurrent").update(shown)  # type: ignore[attr-defined]
        select.tooltip = "Where filler sessions come from (the plan and exports name the pools used)"

    def set_value(self, widget_id: str, value) -> bool:
        """Set one choice (from the command palette or a re-opened run); False if not offered."""
        widget = self.query_one(f"#{widget_id}")
        if isinstance(widget, Select):
            if value is None:
                if widget._allow_blank:
                    widget.clear()
                    return True
                return False
            if value not in widget._legal_values:
                return False
            widget.value = value
            return True
        if isinstance(widget, Checkbox):
            widget.value = bool(value)
            return True
        if isinstance(widget, Input):
            widget.value = str(value)
            return True
        return False

    def apply_spec(self, spec) -> bool:
        """Show a stored run's choices (``core.run.spec.RunSpec``; its user must already be set);
        False when its method is not offered any more. Its models arm ctrl+r only if they can run
        here; recorded ones (``imported:*``) leave the operator's models in place."""
        values = {
            "rb-query": spec.query_id,
            "rb-expression": spec.expression_type,
            "rb-context": spec.context,
            "rb-seed": str(spec.seed),
            "rb-turns": "" if spec.turns is None else str(spec.turns),
            "rb-sessions": ", ".join(spec.method_options.get("session_ids") or []),
            "rb-method": spec.method,
            "rb-judge": spec.judges[0] if spec.judges else "",
            "rb-force": spec.force,
            "rb-filler": spec.filler_pools[0] if spec.filler_pools and len(spec.filler_pools) == 1 else "",
        }
        offered = {widget_id: self.set_value(widget_id, value) for widget_id, value in values.items()}
        self._from_run = {w: v for w, v in values.items() if offered[w]}
        shown = self._values()
        self._run_profile = {k: shown[k] for k, w in PROFILE_WIDGETS.items() if offered[w]}
        models = [m.id for m in spec.models if runnable(m.id)]
        if models:
            self.set_models(models, own=False)
            self._from_run["models"] = models
        else:
            self.set_models(self._own_models, own=False)
        return offered["rb-method"]

    def choices(self) -> Choices:
        def val(sel_id: str):
            v = self.query_one(sel_id, Select).value
            return None if v is Select.NULL else v

        seed_text = self.query_one("#rb-seed", Input).value.strip()
        turns_text = self.query_one("#rb-turns", Input).value.strip()
        sessions_text = self.query_one("#rb-sessions", Input).value
        context = val("#rb-context") or DEFAULT_CONTEXT
        return Choices(
            user_id=val("#rb-user"),
            query_id=val("#rb-query"),
            expression_type=val("#rb-expression"),
            context=context,
            seed=int(seed_text) if seed_text.lstrip("-").isdigit() else 0,
            method=val("#rb-method") or "zero-shot",
            models=list(self.models),
            judge=val("#rb-judge") or None,
            force=self.query_one("#rb-force", Checkbox).value,
            filler_pool=val("#rb-filler") or "",
            turns=int(turns_text) if turns_text.isdigit() and takes_turns(context) else None,
            sessions=tuple(session_ids(sessions_text)) if context == "custom" else (),
        )
