"""The inferred preference is taken exactly as CUPID's PreferenceInferrer.process_output does,
quirks included (they are the benchmark's behaviour, not bugs to fix)."""

from __future__ import annotations

import pytest

from core.benchmarks.cupid.methods import NoPreferenceHeading, inferred_preference

H = "### Most Likely Preference"


@pytest.mark.parametrize(
    "reply,expected",
    [
        (f"### Analysis\n\nlong analysis\n\n{H}\n\nThe user wants blockers first.", "The user wants blockers first."),
        (f"{H}\n\n  Two lines here.  \nSecond line dropped.", "Two lines here."),
        (f"{H}es\n\nThe user wants X.", "es"),  # plural heading: the rest of the heading line wins
        (f"{H}s\n\nThe user wants X.", "s"),
        (f"{H}: Short agendas.", ": Short agendas."),
        (f"{H}\n\n**Bold kept**", "**Bold kept**"),
        (f"{H}\n\nfirst\n\n{H}\n\nsecond", "first"),  # between the first and second heading
        (f"{H}\n\n", ""),  # the empty inference
        (f"{H}\n\n{H}\n\nlater", ""),
        (H, ""),
    ],
)
def test_extraction(reply, expected):
    assert inferred_preference(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "The user wants X.",
        "### most likely preference\n\nX",
        "### Most Likely Preferneces\n\nX",
        "## Most Likely Preference\n\nX",
    ],
)
def test_missing_heading_raises(reply):
    with pytest.raises(NoPreferenceHeading):
        inferred_preference(reply)
