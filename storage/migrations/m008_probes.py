"""008: knowledge probes are runs linked to the run whose answers they probe (``runs.probe_of``).

The link is the probed run's id; a probe's answer and the probed answer are paired by model (the
probe run asks the same models). No foreign key, like every link between runs: deleting the probed
run leaves its probes readable.
"""

from __future__ import annotations

from sqlite_utils import Database

SCHEMA = """
ALTER TABLE runs ADD COLUMN probe_of TEXT;
CREATE INDEX runs_by_probe_of ON runs(probe_of) WHERE probe_of IS NOT NULL;
"""


def up(db: Database) -> None:
    db.executescript(SCHEMA)
