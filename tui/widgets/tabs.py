"""The analysis tabs under the panes: Prompt, Evidence, Attributes, Relevance, Judges, Runs,
Diagnosis (keys 1…7 on the main screen, in this order).

A container that composes a ``TabbedContent`` (so the tab strip shows) with one widget per tab.
Each tab renders what the screen hands it and handles its own keys; those that store the
operator's input or read stored runs do it through the Workbench they are given.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, TabbedContent, TabPane

from tui.widgets.attributes_tab import AttributesView
from tui.widgets.diagnosis_tab import DiagnosisView
from tui.widgets.evidence_tab import EvidenceTable
from tui.widgets.judges_tab import JudgesTable
from tui.widgets.prompt_tab import PromptView
from tui.widgets.relevance_tab import RelevanceView
from tui.widgets.runs_tab import RunsView

TABS = {
    "prompt": "Prompt",
    "evidence": "Evidence",
    "attributes": "Attributes",
    "relevance": "Relevance",
    "judges": "Judges",
    "runs": "Runs",
    "diagnosis": "Diagnosis",
}


class AnalysisTabs(Vertical):
    DEFAULT_CSS = """
    AnalysisTabs { height: 16; }
    AnalysisTabs TabbedContent { height: 1fr; }
    AnalysisTabs TabPane { padding: 0; height: 1fr; }
    AnalysisTabs DataTable { height: 1fr; }
    """

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id)
        self.workbench = workbench

    def compose(self) -> ComposeResult:
        with TabbedContent(id="analysis", initial="tab-prompt"):
            with TabPane(TABS["prompt"], id="tab-prompt"):
                yield PromptView(id="prompt-view")
            with TabPane(TABS["evidence"], id="tab-evidence"):
                yield EvidenceTable(id="evidence-table")
            with TabPane(TABS["attributes"], id="tab-attributes"):
                yield AttributesView(self.workbench, id="attributes-view")
            with TabPane(TABS["relevance"], id="tab-relevance"):
                yield RelevanceView(self.workbench, id="relevance-view")
            with TabPane(TABS["judges"], id="tab-judges"):
                yield JudgesTable(id="judges-table")
            with TabPane(TABS["runs"], id="tab-runs"):
                yield RunsView(self.workbench, id="runs-view")
            with TabPane(TABS["diagnosis"], id="tab-diagnosis"):
                yield DiagnosisView(self.workbench, id="diagnosis-view")

    def show_tab(self, name: str) -> None:
        """Show a tab. If the focus was in another tab it follows into this one: left in a tab
        being hidden, Textual would hand it to a sibling (the Runs filter box), whose focus then
        switches back to that tab."""
        focused = self.screen.focused
        if focused is not None and self in focused.ancestors and self.active != name:
            self.focus_tab(name)
        else:
            self.query_one(TabbedContent).active = f"tab-{name}"

    def focus_tab(self, name: str) -> None:
        """Show the tab and put the focus on its first control, so its keys work at once."""
        self.query_one(TabbedContent).active = f"tab-{name}"
        # The pane is displayed (and so focusable) only after the switch is laid out.
        self.call_after_refresh(self._focus_first, name)

    def _focus_first(self, name: str, attempts: int = 5) -> None:
        pane = self.query_one(f"#tab-{name}", TabPane)
        focused = self.screen.focused
        # Already inside, on a control (a text input is never a tab's first control: keys typed
        # there would be its text).
        if focused is not None and pane in focused.ancestors and not isinstance(focused, Input):
            return
        if name == "runs":  # the grid, not its filter box: enter then opens the answer's run
            self.runs.grid.focus()
        else:
            chain = [w for w in self.screen.focus_chain if pane in w.ancestors]
            first = next((w for w in chain if not isinstance(w, Input)), chain[0] if chain else None)
            if first is not None:
                first.focus()
        # A busy app may lay the switch out a refresh later, and hiding the old tab's focused
        # widget can move the focus to the tab strip after us: check again once things settle.
        if attempts > 1:
            self.call_after_refresh(self._focus_first, name, attempts - 1)

    @property
    def active(self) -> str:
        return (self.query_one(TabbedContent).active or "tab-prompt").removeprefix("tab-")

    @property
    def prompt(self) -> PromptView:
        return self.query_one(PromptView)

    @property
    def evidence(self) -> EvidenceTable:
        return self.query_one(EvidenceTable)

    @property
    def attributes(self) -> AttributesView:
        return self.query_one(AttributesView)

    @property
    def relevance(self) -> RelevanceView:
        return self.query_one(RelevanceView)

    @property
    def judges(self) -> JudgesTable:
        return self.query_one(JudgesTable)

    @property
    def runs(self) -> RunsView:
        return self.query_one(RunsView)

    @property
    def diagnosis(self) -> DiagnosisView:
        return self.query_one(DiagnosisView)
