"""RunSpec.evidence_depth and RunSpec.repeat: validated, and left out of the dump when unset, so
stored runs and the cell keys of batches made before these fields existed stay the same."""

from __future__ import annotations

import hashlib
import json

import pytest
from pydantic import ValidationError

from core.run.grid import cell_key
from core.run.spec import RunSpec

#: What a spec dumped (model_dump(mode="json"), label left out) before either field existed.
BEFORE = {
    "user_id": "maya",
    "query_id": "p1-open",
    "expression_type": 1,
    "context": "normal",
    "seed": 0,
    "method": "zero_shot",
    "method_options": {},
    "models": [
        {
            "id": "demo:generic",
            "params": {
                "temperature": None,
                "max_tokens": None,
                "reasoning_effort": None,
                "seed": None,
                "timeout_s": 300.0,
            },
            "base_url": None,
        }
    ],
    "judges": ["demo:heuristic"],
    "force": False,
    "replay": False,
}
#: The cell key a batch stored for BEFORE (sha256 of its canonical JSON), written down, not recomputed.
BEFORE_KEY = "aab1c068aef27290344bdb1c1eaee7627aa99c64396f396f2999c3f685001178"


def spec(**update) -> RunSpec:
    return RunSpec.model_validate({**BEFORE, "label": "fig5", **update})


def test_the_written_down_key_is_the_hash_of_the_old_dump():
    raw = json.dumps(BEFORE, sort_keys=True, separators=(",", ":")).encode()
    assert hashlib.sha256(raw).hexdigest() == BEFORE_KEY


def test_a_spec_without_depth_or_repeat_dumps_and_hashes_as_before():
    s = spec()
    assert s.evidence_depth is None and s.repeat == 0
    assert s.model_dump(mode="json", exclude={"label"}) == BEFORE
    assert cell_key(s) == BEFORE_KEY
    assert cell_key(spec(repeat=0)) == BEFORE_KEY  # repeat 0 is the first answer: the old cell
    assert RunSpec.model_validate(s.model_dump(mode="json")) == s


@pytest.mark.parametrize("depth", [0.0, 0.25, 1.0])
def test_a_depth_is_dumped_and_makes_another_cell(depth):
    s = spec(evidence_depth=depth)
    dumped = s.model_dump(mode="json")
    assert dumped["evidence_depth"] == depth  # 0 is a depth, not "unset"
    assert cell_key(s) != BEFORE_KEY
    assert RunSpec.model_validate(dumped) == s


def test_depths_and_repeats_make_distinct_keys():
    keys = {cell_key(spec(evidence_depth=d, repeat=r)) for d in (None, 0.0, 0.5, 1.0) for r in (0, 1, 2)}
    assert len(keys) == 12
    assert spec(repeat=2).model_dump(mode="json")["repeat"] == 2


@pytest.mark.parametrize("bad", [{"evidence_depth": -0.1}, {"evidence_depth": 1.01}, {"repeat": -1}])
def test_out_of_range_values_are_refused(bad):
    with pytest.raises(ValidationError):
        spec(**bad)
