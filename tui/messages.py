"""Typed Textual messages for domain events. Widgets post them; the main screen handles them.

Engine events reach the UI through :class:`tui.bridge.EngineBridge`, which turns the flood of
token events into at most one pending :class:`TokensPending` message (see style.md: coalesce).
"""

from __future__ import annotations

from textual.message import Message


class RunRequested(Message):
    """The operator asked for a run with the run bar's current choices."""


class EngineEvent(Message):
    """One non-token engine event (run/response started or finished, a judge's score)."""

    def __init__(self, event):
        super().__init__()
        self.event = event


class TokensPending(Message):
    """Streamed text is waiting in the bridge's buffers. Carries nothing, so any later one can
    replace an earlier one: the handler drains every buffer at once."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TokensPending)


class SessionChosen(Message):
    def __init__(self, session_id: str):
        super().__init__()
        self.session_id = session_id


class RunChosen(Message):
    """A stored run was picked in the Runs tab to be re-opened."""

    def __init__(self, run_id: str):
        super().__init__()
        self.run_id = run_id


class PaneCancelRequested(Message):
    def __init__(self, slot: int):
        super().__init__()
        self.slot = slot


class PaneRetryRequested(Message):
    def __init__(self, slot: int):
        super().__init__()
        self.slot = slot


class JudgmentOpened(Message):
    """Show one judgment in full (rationale and raw judge output)."""

    def __init__(self, model: str, response_id: str | None, judgment):
        super().__init__()
        self.model = model
        self.response_id = response_id
        self.judgment = judgment


class HumanScoreRequested(Message):
    """The operator wants to score an answer (None: the focused pane's answer)."""

    def __init__(self, response_id: str | None):
        super().__init__()
        self.response_id = response_id


class PairwiseRequested(Message):
    """The operator wants to pick the better of two answers."""


class AttributeVerdictChosen(Message):
    def __init__(self, extraction_id: str, attribute_id: str, verdict: str):
        super().__init__()
        self.extraction_id = extraction_id
        self.attribute_id = attribute_id
        self.verdict = verdict


class RelevanceLabelled(Message):
    def __init__(self, target_kind: str, target_id: str, relevant: bool):
        super().__init__()
        self.target_kind = target_kind
        self.target_id = target_id
        self.relevant = relevant


class RelevanceDecideRequested(Message):
    def __init__(self, embeddings: bool):
        super().__init__()
        self.embeddings = embeddings


class RunsCompareRequested(Message):
    def __init__(self, run_ids: list[str]):
        super().__init__()
        self.run_ids = run_ids


class RunsExportRequested(Message):
    def __init__(self, run_ids: list[str]):
        super().__init__()
        self.run_ids = run_ids
