import pytest

from core.methods.answers import answer_instruction, parse_choice, parse_yes_no


@pytest.mark.parametrize(
    "text,expected",
    [
        ("**B**", "B"),
        ("Option B.", "B"),
        ("(b)", "B"),
        ("b)", "B"),
        ("B", "B"),
        ("A. The sleek hotel", "A"),
        ("The answer is B) A traditional ryokan in Kyoto", "B"),
        ("Answer: (c)", "C"),
        ("answer: d", "D"),
        ("The correct option is **C**.", "C"),
        ("I would go with option D because it is quiet.", "D"),
        ("Between A and B, I choose B.", "B"),
        ("**Answer: A**", "A"),
        ("My answer is B.\n\nA is too modern.", "B"),
        ("The best choice would be A - the ryokan", "A"),
    ],
)
def test_parse_choice(text, expected):
    assert parse_choice(text, 4) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I'd choose A or B",
        "B and C are both good",
        "Both A and B",
        "Option B or option C",
        "A sleek hotel would be best",
        "I think a ryokan is best",
        "",
        "E",
        "The answer is E",
    ],
)
def test_parse_choice_ambiguous_or_missing(text):
    assert parse_choice(text, 4) is None


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Yes, definitely — it fits you.", "yes"),
        ("I'd say no", "no"),
        ("No.", "no"),
        ("**Yes**", "yes"),
        ("Nope, not for you", "no"),
        ("Absolutely not.", "no"),
        ("Absolutely! It fits", "yes"),
        ("Not really — you dislike crowds", "no"),
        ("Answer: yes", "yes"),
        ("My answer is no.", "no"),
    ],
)
def test_parse_yes_no(text, expected):
    assert parse_yes_no(text) == expected


@pytest.mark.parametrize("text", ["Yes and no", "Maybe", "There's no better choice", "I think yes, but I'd say no", ""])
def test_parse_yes_no_ambiguous(text):
    assert parse_yes_no(text) is None


def test_answer_instructions(mara):
    assert (
        answer_instruction(mara.query("q1-mcq"))
        == "Answer with the letter of one option (A, B, C or D) first, then explain briefly."
    )
    assert answer_instruction(mara.query("q1-t")).startswith("Answer yes or no first")
    assert answer_instruction(mara.query("q1-open")) == ""
