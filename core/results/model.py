"""What a results file says about one answer, before storage links it to a user and a query."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from core.model import UserBundle
from core.plan import Message


class RecordedScore(BaseModel):
    """A score or label the results file recorded for the answer (a judge run elsewhere): stored
    as a judgment of ``recorded:<judge>``, its own source, never pooled with judgments made here."""

    #: Judge kind and dimension as prefscope names them (``longmemeval``/``accuracy``, ``locomo``/``f1``).
    kind: str = Field(min_length=1)
    dimension: str = Field(min_length=1)
    #: None: the file recorded no usable score (kept, counted as a parse failure).
    score: float | None
    scale_min: float | None = None
    scale_max: float | None = None
    #: The judge as the file names it (``gpt-4o-2024-08-06``, ``mem0-llm-judge``); stored as ``recorded:<judge>``.
    judge: str = Field(min_length=1)
    #: The recorded value as written (``true``, ``CORRECT``, ``0.667``).
    raw: str = ""
    rationale: str = ""
    meta: dict = Field(default_factory=dict)


class ImportedAnswer(BaseModel):
    """One answer produced outside prefscope. See ``core.results`` for how it is matched."""

    #: Results format that read it (``prefeval``, ``jsonl`` …).
    format: str
    #: File name as shown in messages, its sha256 (of the bytes read) and the record's position.
    source_file: str
    source_sha256: str
    record: int = Field(ge=0)
    #: How messages name the record: ``record 3`` (JSON array) or ``line 4`` (JSON Lines).
    record_label: str
    # -- matching (first rule that applies wins) ----------------------------------------------------
    user_id: str | None = None
    query_id: str | None = None
    #: Texts to find a stored user by: {"preference": …, "question": …, "kind": "open" (default) or
    #: "mcq" (the stored query of that kind answers it)}.
    match: dict[str, str] | None = None
    #: ``Query.meta`` values to find a stored query by (PersonaMem: question_id, persona_id, size).
    match_meta: dict[str, str] | None = None
    #: Stored when nothing matched: a minimal user whose query ``fallback_query_id`` this answers.
    fallback: UserBundle | None = None
    fallback_query_id: str | None = None
    # -- how the answer was produced ----------------------------------------------------------------
    query_text: str = ""
    #: The producing model as the source names it (``mistral8x7b``); stored as ``imported:<model>``.
    model: str = Field(min_length=1)
    #: A prefscope method name when the source's method maps onto one, else the source's own name.
    method: str = "unknown"
    method_options: dict = Field(default_factory=dict)
    #: A prefscope context name (``prefeval-turns``) or the source's description of the context.
    context: str = "imported"
    #: The preference's expression type the answer was produced under (PrefEval explicit: 1), if known.
    expression_type: int | None = Field(default=None, ge=0, le=4)
    #: Inter turns between the preference exchange and the question, when the source says.
    turns: int | None = Field(default=None, ge=0)
    answer: str
    #: The source says the call failed (an expired batch request, an HTTP error, a runner's error
    #: status): the answer (often empty) is stored as a failed one with this message.
    error: str | None = None
    #: Token counts when the source gives them (an OpenAI Batch result's ``usage``).
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    #: The plan's answer format when the source says how replies are read (``mcq-personamem``).
    answer_format: str | None = None
    #: The exact messages the model was sent, when the source has them.
    messages: list[Message] | None = None
    #: What is known about the prompt when ``messages`` is not (shown as the run's plan notes).
    prompt_notes: list[str] = Field(default_factory=list)
    #: Scores the file recorded for this answer (stored as judgments of their own source).
    recorded: list[RecordedScore] = Field(default_factory=list)
    meta: dict = Field(default_factory=dict)


@dataclass
class ResultsImport:
    format: str
    answers: list[ImportedAnswer] = field(default_factory=list)
    #: Non-fatal notes for the operator.
    notes: list[str] = field(default_factory=list)
