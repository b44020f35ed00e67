"""The run bar: what to run — user, query, expression type, context, method, models, judge.

It only holds choices and reports them (``choices()``); the screen turns them into a RunSpec.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Select

from core.model import EXPRESSION_TYPES, UserBundle

CONTEXTS = [
    ("simple", "Simple ~2K"), ("normal", "Normal 37K"), ("long", "Long 72K"), ("very_long", "Very Long 142K"),
    ("extended", "Extended 142K (tail)"), ("extreme", "Extreme 247K (tail)"), ("full", "CUPID full"),
    ("oracle", "CUPID oracle"), ("none", "No history"),
]


@dataclass(frozen=True)
class Choices:
    user_id: str | None
    query_id: str | None
    expression_type: int | None
    context: str
    method: str
    models: list[str]
    judge: str | None


def query_label(bundle: UserBundle, query_id: str) -> str:
    q = bundle.query(query_id)
    target = f" {q.preference_id}" if q.preference_id else ""
    if q.preference_id:
        pref = bundle.preference(q.preference_id)
        if pref.origin == "generalized":
            target += "(gen)"
    text = q.text if len(q.text) <= 48 else q.text[:47] + "…"
    return f"[{q.kind}]{target} {text}"


class RunBar(Horizontal):
    DEFAULT_CSS = """
    RunBar { height: auto; }
    RunBar Select { width: 22; }
    RunBar #rb-user { width: 24; }
    RunBar #rb-query { width: 1fr; min-width: 24; }
    RunBar #rb-models { width: auto; min-width: 10; }
    RunBar #rb-run { width: auto; min-width: 7; }
    """

    def __init__(self, methods: list[tuple[str, str]], models: list[str], judges: list[str], *, id: str | None = None):
        super().__init__(id=id)
        self._methods = methods
        self.models = list(models)
        self._judges = judges

    def compose(self) -> ComposeResult:
        yield Select([], prompt="user", id="rb-user", allow_blank=True)
        yield Select([], prompt="query", id="rb-query", allow_blank=True)
        yield Select([(f"E{k} {v}", k) for k, v in EXPRESSION_TYPES.items()], prompt="expression",
                     id="rb-expression", allow_blank=True)
        yield Select([(label, key) for key, label in CONTEXTS], value="simple", id="rb-context", allow_blank=False)
        yield Select([(label, key) for key, label in self._methods], value=self._methods[0][0], id="rb-method",
                     allow_blank=False)
        yield Select([(j, j) for j in self._judges] + [("no judge", "")], value=self._judges[0] if self._judges else "",
                     id="rb-judge", allow_blank=False)
        yield Button(self._models_label(), id="rb-models", tooltip="Choose models (ctrl+m)")
        yield Button("▶ Run", id="rb-run", variant="success", tooltip="Run (ctrl+r)")

    def _models_label(self) -> str:
        return f"models {len(self.models)}"

    def set_models(self, models: list[str]) -> None:
        self.models = list(models)
        self.query_one("#rb-models", Button).label = self._models_label()

    def set_users(self, users: list[tuple[str, str]], selected: str | None) -> None:
        select = self.query_one("#rb-user", Select)
        select.set_options(users)
        if selected is not None:
            select.value = selected

    def set_queries(self, bundle: UserBundle, selected: str | None) -> None:
        select = self.query_one("#rb-query", Select)
        select.set_options([(query_label(bundle, q.id), q.id) for q in bundle.queries])
        if selected is not None:
            select.value = selected
        types = bundle.expression_types()
        expr = self.query_one("#rb-expression", Select)
        expr.set_options([(f"E{t} {EXPRESSION_TYPES.get(t, 'untyped')}", t) for t in types])
        expr.value = types[-1]

    def choices(self) -> Choices:
        def val(sel_id: str):
            v = self.query_one(sel_id, Select).value
            return None if v is Select.BLANK else v

        return Choices(
            user_id=val("#rb-user"), query_id=val("#rb-query"), expression_type=val("#rb-expression"),
            context=val("#rb-context") or "simple", method=val("#rb-method") or "zero_shot",
            models=list(self.models), judge=val("#rb-judge") or None,
        )
