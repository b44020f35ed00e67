"""004: analyses beside runs – extracted attributes (Re-Centering stage 1) and relevance
decisions (stage 2).

The m001 ``attributes`` table holds a user's imported GOLD attributes; attributes a model
extracted live here, one ``attribute_extractions`` row per extraction (model, prompt version,
settings, every chunk's raw output) and one ``attributes_extracted`` row per merged attribute, with
the verifier's verdict and the operator's own verdict (accept / uncertain / reject).

``relevance`` holds one decision per (run, target, decider): attribute or retrieved turn, decided
by an LLM, BM25, embeddings, the dataset's gold or a human. ``relevant`` is NULL when an LLM
decider's reply could not be parsed (the raw output and error are kept). Human ratings of
responses go into ``judgments`` with ``human = 1`` (m003), not here.
"""

from __future__ import annotations

from sqlite_utils import Database

SCHEMA = """
CREATE TABLE attribute_extractions (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL,               -- no FK: survives re-imports, like runs
    run_id           TEXT REFERENCES runs(id) ON DELETE SET NULL,
    model            TEXT NOT NULL,
    prompt_version   TEXT NOT NULL,
    temperature      REAL,
    chunk_chars      INTEGER NOT NULL,
    min_confidence   REAL NOT NULL,
    threshold        REAL,                         -- NULL: not merged by embedding
    embedding_model  TEXT,
    verifier_model   TEXT,
    verifier_version TEXT,
    chunks           TEXT NOT NULL DEFAULT '[]',   -- JSON [{index, raw, error, candidates, notes}]
    dropped          TEXT NOT NULL DEFAULT '[]',   -- JSON candidates under the confidence threshold
    created_at       TEXT NOT NULL
);
CREATE INDEX attribute_extractions_by_user ON attribute_extractions(user_id, created_at);

CREATE TABLE attributes_extracted (
    extraction_id    TEXT NOT NULL REFERENCES attribute_extractions(id) ON DELETE CASCADE,
    id               TEXT NOT NULL,
    position         INTEGER NOT NULL,
    text             TEXT NOT NULL,
    reasoning        TEXT NOT NULL DEFAULT '',
    confidence       REAL NOT NULL,
    evidence_turns   TEXT NOT NULL DEFAULT '[]',
    source           TEXT NOT NULL,
    merged_from      TEXT NOT NULL DEFAULT '[]',
    chunks           TEXT NOT NULL DEFAULT '[]',
    verifier_verdict TEXT CHECK (verifier_verdict IN ('accept','uncertain','reject')),
    verifier_reason  TEXT NOT NULL DEFAULT '',
    verifier_raw     TEXT NOT NULL DEFAULT '',
    verifier_error   TEXT,
    operator_verdict TEXT CHECK (operator_verdict IN ('accept','uncertain','reject')),
    operator_note    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (extraction_id, id)
);

CREATE TABLE relevance (
    id             INTEGER PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    query_id       TEXT NOT NULL,
    target_kind    TEXT NOT NULL CHECK (target_kind IN ('attribute','turn')),
    target_id      TEXT NOT NULL,
    target_text    TEXT NOT NULL DEFAULT '',
    extraction_id  TEXT,                          -- where an attribute target came from (NULL: gold attributes)
    decider        TEXT NOT NULL CHECK (decider IN ('llm','bm25','embedding','gold','human')),
    decider_model  TEXT,
    relevant       INTEGER,                        -- NULL: undecided (parse failure)
    score          REAL,
    reason         TEXT NOT NULL DEFAULT '',
    raw            TEXT NOT NULL DEFAULT '',
    parse_ok       INTEGER NOT NULL DEFAULT 1,
    prompt_version TEXT NOT NULL DEFAULT '',
    error          TEXT,
    created_at     TEXT NOT NULL
);
CREATE INDEX relevance_by_run ON relevance(run_id, target_kind, target_id);
"""


def up(db: Database) -> None:
    db.executescript(SCHEMA)
