"""009: annotation queues (the judge lab) and labels by several named annotators.

A queue is a fixed, shuffled list of items built once from a filter; each annotator works through
it in their own order and ``annotation_done`` records what they finished (or skipped), which makes
labelling resumable. Where a label goes depends on what it labels, so every existing reader sees it:

- answer scores and pairwise verdicts: ``judgments`` with ``human = 1`` and ``judge_model =
  'human:<annotator>'``, the queue, blind flag and shown order in ``extra``;
- turn / attribute relevance: ``relevance`` with ``decider = 'human'``, ``decider_model`` the
  annotator, the same facts in the new ``relevance.extra``;
- attribute verdicts: ``attribute_labels`` (one row per annotator; ``attributes_extracted``'s
  ``operator_verdict`` stays the single operator's verdict it always was).
"""

from __future__ import annotations

from sqlite_utils import Database

SCHEMA = """
CREATE TABLE annotation_queues (
    name       TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('answer','pair','relevance','attribute')),
    filter     TEXT NOT NULL DEFAULT '{}',        -- JSON: what the queue was built from
    seed       INTEGER NOT NULL,
    blind      INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE TABLE annotation_items (
    queue             TEXT NOT NULL REFERENCES annotation_queues(name) ON DELETE CASCADE,
    position          INTEGER NOT NULL,
    run_id            TEXT NOT NULL,
    response_id       TEXT,                       -- answer; a pair's answer 1
    other_response_id TEXT,                       -- a pair's answer 2
    swapped           INTEGER NOT NULL DEFAULT 0, -- pair: answer 2 is shown as A (drawn at creation)
    target_kind       TEXT,                       -- relevance: 'turn' | 'attribute'; attribute: 'attribute'
    target_id         TEXT,
    extraction_id     TEXT,
    PRIMARY KEY (queue, position)
);
CREATE TABLE annotation_done (
    queue      TEXT NOT NULL,
    position   INTEGER NOT NULL,
    annotator  TEXT NOT NULL,
    skipped    INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    PRIMARY KEY (queue, position, annotator),
    FOREIGN KEY (queue, position) REFERENCES annotation_items(queue, position) ON DELETE CASCADE
);
CREATE TABLE attribute_labels (
    id            INTEGER PRIMARY KEY,
    extraction_id TEXT NOT NULL,
    attribute_id  TEXT NOT NULL,
    annotator     TEXT NOT NULL,
    verdict       TEXT NOT NULL CHECK (verdict IN ('accept','uncertain','reject')),
    note          TEXT NOT NULL DEFAULT '',
    extra         TEXT NOT NULL DEFAULT '{}',
    created_at    TEXT NOT NULL
);
CREATE INDEX attribute_labels_by_attribute ON attribute_labels(extraction_id, attribute_id);
ALTER TABLE relevance ADD COLUMN extra TEXT NOT NULL DEFAULT '{}';
"""


def up(db: Database) -> None:
    db.executescript(SCHEMA)
