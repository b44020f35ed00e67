"""`prefscope show` names a LoCoMo query's category (number and inferred name)."""

from __future__ import annotations

import json

from tests.cli_runner import cli
from tests.core.formats.builders import locomo_sample


def test_show_names_the_locomo_category(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([locomo_sample()]), encoding="utf-8")
    db = str(tmp_path / "r.db")
    cli(db, "import", str(data))
    assert "LoCoMo category 4 single-hop" in cli(db, "show", "locomo-demo-1")
    assert "LoCoMo category 5 adversarial" in cli(db, "show", "locomo-demo-1", "--query", "locomo-demo-1-qa002")
