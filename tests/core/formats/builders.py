"""Small valid inputs in each format's shape, built in code so tests can break them one field at a time.

The shapes mirror the real datasets (field names, nesting); the contents are our own.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"

TOPIC = "demo_topic"
PREFS = ["I only eat vegetarian food.", "I avoid crowded tourist places."]
QUESTIONS = ["Where should I eat in Naples?", "What should I see in Venice?"]


def prefeval_files() -> dict[str, list[dict]]:
    """relative path -> records, for a two-record topic plus a two-conversation filler file."""
    explicit, choice, persona, mcq = [], [], [], []
    for pref, question in zip(PREFS, QUESTIONS):
        base = {"preference": pref, "question": question, "explanation": f"The answer must respect: {pref}"}
        explicit.append(dict(base))
        choice.append(
            {
                **base,
                "implicit_query": "Any plans for lunch?",
                "options": ["Salad bar", "Steakhouse"],
                "aligned_op": "Salad bar",
                "conversation": {
                    "query": "Any plans for lunch?",
                    "assistant_options": "1. Salad bar 2. Steakhouse",
                    "user_selection": "The salad bar, please.",
                    "assistant_acknowledgment": "Salad bar it is.",
                },
            }
        )
        persona.append(
            {
                **base,
                "persona": "A retired sailor who paints watercolours",
                "conversation": {
                    "0": {"user": "I'm painting the harbour.", "assistant": "Lovely subject."},
                    "1": {"user": f"By the way, {pref[0].lower() + pref[1:]}", "assistant": "Good to know."},
                },
            }
        )
        mcq.append({**base, "classification_task_options": ["aligned", "wrong 1", "wrong 2", "wrong 3"]})
    filler = [
        {
            "conversation_id": "conv-a",
            "model": "m",
            "turn": 1,
            "language": "English",
            "redacted": False,
            "conversation": [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4."}],
        },
        {
            "conversation_id": "conv-b",
            "model": "m",
            "turn": 1,
            "language": "English",
            "redacted": False,
            "conversation": [
                {"role": "user", "content": "Hi"},
                {"role": "user", "content": "Are you there?"},
                {"role": "assistant", "content": "Yes."},
            ],
        },
    ]
    return {
        f"explicit_preference/{TOPIC}.json": explicit,
        f"implicit_preference/choice-based/{TOPIC}.json": choice,
        f"implicit_preference/persona-driven/{TOPIC}.json": persona,
        f"mcq_options/{TOPIC}.json": mcq,
        "filtered_inter_turns.json": filler,
    }


def write_tree(root: Path, files: dict[str, object]) -> Path:
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data), encoding="utf-8")
    return root


def cupid_instances() -> list[dict]:
    lines = (FIXTURES / "cupid_small.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def locomo_sample() -> dict:
    return {
        "sample_id": "demo-1",
        "qa": [
            {"question": "Where did Ana travel in May?", "answer": "Porto", "evidence": ["D1:1"], "category": 4},
            {"question": "When did Ana adopt a cat?", "answer": 2022, "evidence": ["D2:2", "D2:3"], "category": 2},
            {
                "question": "What is Ben's favourite opera?",
                "adversarial_answer": "Tosca",
                "evidence": ["D1:2"],
                "category": 5,
            },
        ],
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Back from Porto, the tiles were amazing!"},
                {
                    "speaker": "Ben",
                    "dia_id": "D1:2",
                    "text": "Welcome back! Any photos?",
                    "img_url": ["https://example.invalid/porto.jpg"],
                    "blip_caption": "a photo of blue tiles",
                },
            ],
            "session_2_date_time": "10:04 am on 2 June, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "How is the new flat?"},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "Great. I adopted a cat last year, she loves it."},
                {"speaker": "Ana", "dia_id": "D2:3", "text": "Her name is Miso."},
            ],
        },
        "observation": {
            "session_1_observation": {
                "Ana": [["Ana travelled to Porto.", "D1:1"]],
                "Ben": [["Ben asks for photos.", "D1:2"]],
            },
            "session_2_observation": {"Ana": [["Ana has a cat named Miso.", ["D2:2", "D2:3"]]]},
        },
        "event_summary": {"events_session_1": {"Ana": ["Ana returns from Porto."], "Ben": [], "date": "8 May, 2023"}},
        "session_summary": {"session_1_summary": "Ana tells Ben about Porto."},
    }


def native_user() -> dict:
    return json.loads((FIXTURES / "native_user.json").read_text(encoding="utf-8"))


def chat_records() -> list:
    return [json.loads(line) for line in (FIXTURES / "chat_openai.jsonl").read_text(encoding="utf-8").splitlines()]


def deep(value: object) -> object:
    return copy.deepcopy(value)
