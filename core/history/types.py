"""What a built context is: its sessions in order, their tokens, and where the gold evidence sits."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.history.tokens import DEFAULT_ENCODING
from core.model import Session
from core.plan import EvidencePosition


@dataclass
class ContextSession:
    session: Session
    tokens: int
    is_filler: bool
    #: "user" (user-specific), "interval" or "tail" filler.
    segment: str = "user"
    pool_id: str | None = None
    #: 1 for the first use of a filler session; 2, 3 … when a too-small pool is reused.
    copy: int = 1
    truncated: bool = False
    #: Summaries configuration: the model-written summary shown instead of the turns.
    summary: str | None = None

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def key(self) -> str:
        """Unique within a built context (reused filler sessions get ``@<copy>``)."""
        return self.session.id if self.copy == 1 else f"{self.session.id}@{self.copy}"


@dataclass
class BuiltContext:
    config: str
    seed: int
    expression_type: int | None
    query_id: str | None
    sessions: list[ContextSession]
    history_tokens: int
    user_tokens: int = 0
    interval_tokens: int = 0
    tail_tokens: int = 0
    #: Filler tokens aimed at (interval + tail); None when the configuration adds no filler.
    target_tokens: int | None = None
    #: Whether interval and tail each landed within ±2 % of their targets (None: no target).
    within_target: bool | None = None
    evidence: list[EvidencePosition] = field(default_factory=list)
    #: Gold evidence sessions the configuration left out.
    missing_evidence: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reused_filler: bool = False
    truncated_filler: bool = False
    #: Summaries configuration: session ids whose summary is not available yet.
    summary_requests: list[str] = field(default_factory=list)
    encoding: str = DEFAULT_ENCODING

    @property
    def filler_tokens(self) -> int:
        return self.interval_tokens + self.tail_tokens

    @property
    def evidence_ids(self) -> set[str]:
        return {e.session_id for e in self.evidence} | set(self.missing_evidence)

    def summary_row(self) -> dict:
        """A compact JSON-able description (for the CLI and the runs table)."""
        return {
            "config": self.config,
            "seed": self.seed,
            "expression_type": self.expression_type,
            "sessions": len(self.sessions),
            "filler_sessions": sum(1 for s in self.sessions if s.is_filler),
            "history_tokens": self.history_tokens,
            "user_tokens": self.user_tokens,
            "interval_tokens": self.interval_tokens,
            "tail_tokens": self.tail_tokens,
            "target_tokens": self.target_tokens,
            "within_target": self.within_target,
            "reused_filler": self.reused_filler,
            "truncated_filler": self.truncated_filler,
            "evidence": [e.model_dump() for e in self.evidence],
            "missing_evidence": self.missing_evidence,
            "notes": self.notes,
        }
