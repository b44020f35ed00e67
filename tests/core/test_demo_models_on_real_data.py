"""The demo models behave sensibly on any imported data (issue 36, item 4), end to end: the core
readers → prepare with each benchmark's own profile (context, turns, method) → the engine streams
demo:generic, demo:retrieval, demo:oracle and demo:violator → the engine runs demo:heuristic (and
LoCoMo's F1 judge on LoCoMo users).

For every open query with a target preference, heuristic alignment is oracle ≥ generic ≥ violator,
and oracle > generic > violator on most queries. Every templated answer reads as prose: no word of
the prompt's own scaffolding ("CONVERSATION"), no template remnant, every line a sentence.
demo:generic never quotes the history; demo:retrieval quotes only a turn it retrieved for the
query (one the plan retrieved, when the method retrieves); demo:violator contradicts the preference
in the preference's own words and never answers as demo:generic does.

Data: the sample users (as shipped, and with their hand-written reference answers taken away, which
is what imported data looks like), the CUPID and PersonaMem fixtures, and PrefEval and LoCoMo from
../shared/datasets (skipped cleanly when absent). Before issue 36 the violator answered word for word
as the generic model on PrefEval users 000 and 019, and the templates read "Start simple with the
due" and "choice for CONVERSATION".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core import benchmark as benchmarks
from core.formats import load_path
from core.judges import judges_for
from core.judges.common import gold_preference
from core.model import UserBundle
from core.providers import demo_phrases as dp
from core.providers import demo_text as dt
from core.providers import get_provider
from core.providers.base import ModelSpec
from core.run.engine import Engine
from core.run.prepare import prepare
from core.run.profile import Choice, prefscope_defaults, resolve
from core.run.spec import JudgeScored, ResponseFinished, ResponseStarted, RunSpec
from core.settings import load_settings
from core.text.words import content_stems
from tests.cli_runner import unpaced_demo_models  # noqa: F401  (a fixture)
from tests.conftest import REPO, SAMPLE_DATA, dataset

MODELS = ("demo:generic", "demo:retrieval", "demo:oracle", "demo:violator")
FIXTURES = REPO / "tests" / "core"
#: PrefEval's users are one per topic record; every topic's first users, in id order.
PREFEVAL_USERS_PER_TOPIC = 56


@dataclass
class Outcome:
    """One query answered by the four demo models."""

    label: str
    preference: str | None
    question: str
    texts: dict[str, str]
    alignment: dict[str, float | None]
    f1: dict[str, float | None]
    #: What the prompt showed as the user's earlier turns, and what the plan retrieved.
    history: list[str]
    retrieved: list[str]
    notes: list[str] = field(default_factory=list)


def profile_of(bundle: UserBundle) -> tuple[str, int | None, str]:
    """(context, turns, method) a run of this user starts from: its benchmark's profile, as the TUI
    and the CLI resolve it."""
    found = benchmarks.for_source(bundle.user.source)
    chosen = resolve(Choice(), found if found and found.profile else None, prefscope_defaults(None), None)
    return chosen.context, chosen.turns, chosen.method


async def answer(bundle: UserBundle, query_id: str, pools, method: str | None = None, **options) -> Outcome:
    settings = load_settings()
    context, turns, profile_method = profile_of(bundle)
    judges = ["demo:heuristic"] + (["locomo"] if bundle.user.source == "locomo" else [])
    spec = RunSpec(
        user_id=bundle.user.id,
        query_id=query_id,
        context=context,
        turns=turns,
        method=method or profile_method,
        method_options=options,
        models=[ModelSpec(id=m) for m in MODELS],
        judges=judges,
    )
    prepared = await prepare(spec, bundle, pools, settings)
    events: list = []
    engine = Engine(lambda m: get_provider(m, settings), events.append, judges=judges_for(spec, settings))
    await engine.run(spec, prepared.plan, bundle)
    model_of = {e.response_id: e.model.id for e in events if isinstance(e, ResponseStarted) and e.is_final_step}
    texts = {model_of[e.response_id]: e.text for e in events if isinstance(e, ResponseFinished) and e.is_final_step}
    assert sorted(texts) == sorted(MODELS), texts
    alignment: dict[str, float | None] = {}
    f1: dict[str, float | None] = {}
    for e in events:
        if isinstance(e, JudgeScored) and e.response_id in model_of:
            j = e.judgment
            if j.heuristic and j.dimension == "alignment":
                alignment[model_of[e.response_id]] = j.score
            elif j.kind == "locomo":
                f1[model_of[e.response_id]] = j.score
    query = bundle.query(query_id)
    final = prepared.plan.steps[-1].messages
    return Outcome(
        label=f"{bundle.user.id}/{query_id} ({context}, {spec.method})",
        preference=gold_preference(bundle, query),
        question=query.text,
        texts=texts,
        alignment=alignment,
        f1=f1,
        history=dt.read_prompt(final).user_turns,
        retrieved=[r.text for r in prepared.plan.retrieved],
    )


# ---- what each check reads ---------------------------------------------------------------------
#: Lines a draft may end without punctuation (its greeting and sign-off).
_SIGN_OFFS = ("Hello everyone,", "Best regards", "Thanks,")
_QUOTED = re.compile(r'(?:mentioned|asked|said:?) "([^"]+?)…?"')


def quoted_turns(text: str) -> list[str]:
    return _QUOTED.findall(text)


def prose_problems(text: str, sources: str) -> list[str]:
    """Why a templated answer does not read as written prose (empty: it does). ``sources`` is what
    the answer may take words from: the query, the preference and the turns it quotes."""
    problems = []
    for word in re.findall(r"\b[A-Z]{3,}\b", text):
        if word not in sources:
            problems.append(f"{word!r} is from the prompt, not the question or the preference")
    for sentence in sentences(text):
        for word in re.findall(r"(?<![\w'’-])[A-Z][a-z]+\b", sentence)[1:]:
            if word not in sources and word not in _TEMPLATE_CAPITALS:
                problems.append(f"capitalised {word!r} mid-sentence comes from neither question nor preference")
    if re.search(r"[{}]|\s,|\b(\w+) \1\b|\.\.(?!\.)", text):
        problems.append("a template remnant (braces, doubled word, space before a comma)")
    if re.search(r"\bthe (?:due|lost|short|words|conversation)\b|choice for [A-Z]{3,}", text, re.I):
        problems.append("a data word torn out of its phrase")
    for line in (ln.strip() for ln in text.splitlines()):
        if not line or line in _SIGN_OFFS:
            continue
        if not re.match(r"^(?:\d+\. |- )?[\"“A-Z0-9<]", line):
            problems.append(f"line does not open a sentence: {line[:60]!r}")
        if not re.search(r"[.:!?…\"”)]$", line):
            problems.append(f"line does not end a sentence: {line[-60:]!r}")
    return problems


#: Capitalised words the templates themselves use mid-sentence.
_TEMPLATE_CAPITALS = frozenset({"I"})


def sentences(text: str) -> list[str]:
    """Sentences of an answer, list markers and quotes cut off."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:\d+\. |- )", "", line)
        out += [s for s in re.split(r"(?<=[.!?:])\s+|[\"“”]", line) if s.strip()]
    return out


#: Words of a request that say nothing about what it is about.
_REQUEST = frozenset("recommend suggest try must-try visit visiting want like good best great top local".split())


def about_the_question(question: str, turn: str) -> bool:
    """The turn shares a content word with what the question asks about."""
    return bool((content_stems(question) - _REQUEST) & content_stems(turn))


def long_spans(text: str, n: int = 6) -> set[str]:
    ws = re.findall(r"[\w'’-]+", text.lower())
    return {" ".join(ws[i : i + n]) for i in range(len(ws) - n + 1)}


def preference_words_used(text: str, preference: str, question: str) -> bool:
    """The answer uses the preference's own words: two or more in a row, or one the question does not."""
    own = content_stems(preference) - content_stems(question)
    return bool(long_spans(text, 2) & long_spans(preference, 2)) or bool(own & content_stems(text))


@dataclass
class Tally:
    queries: int = 0
    with_preference: int = 0
    #: oracle > generic > violator, and oracle > violator (strict somewhere along the chain).
    strict: int = 0
    ends_apart: int = 0
    #: LoCoMo: oracle > generic ≥ violator on F1.
    f1_apart: int = 0
    order_broken: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    quotes: int = 0
    counts: Counter = field(default_factory=Counter)

    def check(self, o: Outcome, *, templated: bool) -> None:
        """Record every way ``o`` breaks the rules in the module docstring."""
        self.queries += 1
        a, texts = o.alignment, o.texts
        sources = " ".join([o.question, o.preference or "", *o.history])
        if o.preference:
            self.with_preference += 1
            g, r, orc, v = (a.get(m) for m in MODELS)
            if None in (g, orc, v):
                self.problems.append(f"{o.label}: no alignment score {a}")
            elif not orc >= g >= v:  # type: ignore[operator]
                self.order_broken.append(f"{o.label}: oracle {orc:g}, generic {g:g}, violator {v:g}")
            else:
                self.strict += orc > g > v  # type: ignore[operator]
                self.ends_apart += orc > v  # type: ignore[operator]
                self.counts[f"oracle {orc:g} / generic {g:g} / violator {v:g}"] += 1
            if texts["demo:violator"] == texts["demo:generic"]:
                self.problems.append(f"{o.label}: the violator answered as the generic model")
            if templated and not preference_words_used(texts["demo:violator"], o.preference, o.question):
                self.problems.append(f"{o.label}: the violator never uses the preference's words")
        else:
            if any(v is not None for v in a.values()):
                self.problems.append(f"{o.label}: alignment scored without a target preference {a}")
            if o.f1:  # LoCoMo: the gold answer is the oracle's; the violator denies it
                if not o.f1["demo:oracle"] >= o.f1["demo:generic"] >= o.f1["demo:violator"]:  # type: ignore[operator]
                    self.order_broken.append(f"{o.label}: F1 {o.f1}")
                self.f1_apart += o.f1["demo:oracle"] > o.f1["demo:generic"]  # type: ignore[operator]
        generic = texts["demo:generic"]
        if quoted_turns(generic) or long_spans(generic) & set().union(*map(long_spans, o.history or [""])) - long_spans(
            o.question
        ):
            self.problems.append(f"{o.label}: the generic model quotes the history")
        said = texts["demo:retrieval"]
        short = "\n" not in said and said != generic  # a short answer quotes the turn bare (LoCoMo)
        for quote in quoted_turns(said) or ([said.rstrip("…")] if short else []):
            self.quotes += 1
            pool = o.retrieved or o.history
            turn = next((t for t in pool if quote.replace("'", '"') in " ".join(t.split()).replace("'", '"')), None)
            if turn is None:
                self.problems.append(f"{o.label}: retrieval quotes {quote[:60]!r}, which was not retrieved")
            elif not about_the_question(o.question, turn):
                self.problems.append(f"{o.label}: retrieval quotes an irrelevant turn {quote[:60]!r}")
        if templated:
            for model in MODELS:
                if model == "demo:oracle" and not o.preference:
                    continue  # LoCoMo's oracle streams the gold answer itself
                quoted = " ".join(quoted_turns(o.texts[model]))
                for problem in prose_problems(o.texts[model], sources + " " + quoted):
                    self.problems.append(f"{o.label} {model}: {problem}")

    def summary(self, name: str) -> str:
        return (
            f"{name}: {self.queries} open queries, {self.with_preference} with a preference, "
            f"oracle > generic > violator on {self.strict}, oracle > violator on {self.ends_apart}; "
            f"F1 oracle > generic on {self.f1_apart}; retrieval quoted {self.quotes}; "
            + "; ".join(f"{k}: {n}" for k, n in self.counts.most_common())
        )


def strip_references(bundles: list[UserBundle]) -> list[UserBundle]:
    """The bundles as imported data looks: no hand-written reference answers."""
    out = []
    for b in bundles:
        b = b.model_copy(deep=True)
        for q in b.queries:
            q.meta.pop("reference_answers", None)
        out.append(b)
    return out


async def run_all(bundles: list[UserBundle], pools, *, templated: bool, method: str | None = None, **options) -> Tally:
    tally = Tally()
    for bundle in bundles:
        for query in (q for q in bundle.queries if q.kind == "open"):
            outcome = await answer(bundle, query.id, pools, method, **options)
            tally.check(outcome, templated=templated)
    return tally


def assert_sensible(tally: Tally, name: str, *, strict_share: float) -> None:
    """No query out of order, no problem, oracle > violator everywhere, and the whole chain strict
    (oracle > generic > violator) on ``strict_share`` of the queries or more."""
    print(tally.summary(name))
    assert tally.queries, f"{name}: no open query"
    assert tally.order_broken == [], "\n".join(tally.order_broken)
    assert tally.problems == [], "\n".join(tally.problems[:30])
    assert tally.ends_apart == tally.with_preference, tally.summary(name)
    assert tally.strict >= strict_share * tally.with_preference, tally.summary(name)


# ---- the data -------------------------------------------------------------------------------------
def sample_users() -> tuple[list[UserBundle], list]:
    return load_path(SAMPLE_DATA / "users").bundles, load_path(SAMPLE_DATA / "filler").fillers


async def test_sample_users(unpaced_demo_models):  # noqa: F811
    """As shipped, with hand-written reference answers, and without them (what imported data gets:
    the templated answers, here on the sample's long third-person preferences). Many hand-written
    generic answers go against the preference in passing as much as the violating ones do (both 2,
    or both 3), so about half their chains are strict; the templated ones nearly all."""
    users, pools = sample_users()
    shipped = await run_all(users, pools, templated=False)
    templated = await run_all(strip_references(users), pools, templated=True)
    assert_sensible(shipped, "sample (reference answers)", strict_share=0.5)
    assert_sensible(templated, "sample (templated)", strict_share=0.8)


async def test_cupid_and_personamem_fixtures(unpaced_demo_models):  # noqa: F811
    """The benchmarks not in ../shared/datasets, from the format tests' fixtures. PersonaMem asks
    only multiple-choice questions: the oracle picks the gold option and the violator a wrong one."""
    bundles = [*load_path(FIXTURES / "formats" / "fixtures" / "cupid_small.jsonl").bundles]
    bundles += load_path(FIXTURES / "fixtures" / "cupid.json").bundles
    tally = await run_all(bundles, [], templated=True)
    assert_sensible(tally, "CUPID fixtures", strict_share=0.8)
    result = load_path(FIXTURES / "formats" / "fixtures" / "personamem" / "questions_32k.csv")
    checked = 0
    for bundle in result.bundles:
        for query in bundle.queries:
            outcome = await answer(bundle, query.id, [])
            oracle, violator = outcome.texts["demo:oracle"], outcome.texts["demo:violator"]
            gold = f"<final_answer>({str(query.answer).lower()})"
            assert oracle.endswith(gold) and not violator.endswith(gold), (query.id, oracle, violator)
            checked += 1
    assert checked >= 4


def prefeval_users() -> tuple[list[UserBundle], list]:
    result = load_path(dataset("prefeval"))
    return sorted(result.bundles, key=lambda b: b.user.id)[:PREFEVAL_USERS_PER_TOPIC], result.fillers


async def test_prefeval_users(unpaced_demo_models):  # noqa: F811
    users, pools = prefeval_users()
    tally = await run_all(users, pools, templated=True)
    assert_sensible(tally, "PrefEval", strict_share=0.8)


async def test_prefeval_rag_quotes_only_what_the_plan_retrieved(unpaced_demo_models):  # noqa: F811
    """With a retrieving method the quote comes from the turns the plan retrieved for the query."""
    users, pools = prefeval_users()
    tally = await run_all(users[:20], pools, templated=True, method="prefeval-rag", retriever="bm25")
    assert_sensible(tally, "PrefEval, prefeval-rag", strict_share=0.8)
    assert tally.quotes > 0


@pytest.mark.parametrize("method", [None, "zero-shot"])
async def test_locomo_users(method, unpaced_demo_models):  # noqa: F811
    """LoCoMo's questions name no preference: alignment is not applicable, F1 orders the models
    (the oracle streams the gold answer, the violator denies it), and the answers read as prose,
    as short phrases under LoCoMo's own QA prompt (its profile) and as sentences under zero-shot."""
    result = load_path(dataset("locomo"))
    bundles = result.bundles
    if method is not None:  # every fifth question is enough for the long form
        bundles = [b.model_copy(update={"queries": b.queries[::5]}) for b in bundles]
    tally = await run_all(bundles, [], templated=True, method=method)
    print(tally.summary(f"LoCoMo ({method or 'profile'})"))
    assert tally.queries >= 20 and tally.with_preference == 0
    assert tally.order_broken == [], "\n".join(tally.order_broken)
    assert tally.problems == [], "\n".join(tally.problems[:30])
    assert tally.quotes >= tally.queries // 2


def test_phrases_are_spans_of_the_data_as_written():
    """Every phrase a template may take is the data's own words in their order, never a word torn out
    of its phrase: topics and places of every open question, liked and ruled-out phrases of every
    preference (sample, CUPID, and PrefEval / LoCoMo when present)."""
    paths: list[Path] = [SAMPLE_DATA / "users", FIXTURES / "formats" / "fixtures" / "cupid_small.jsonl"]
    paths += [p for p in (dataset_or_none("prefeval"), dataset_or_none("locomo")) if p is not None]
    checked = 0
    for path in paths:
        for bundle in load_path(path).bundles:
            for query in bundle.queries:
                read = dp.read_question(query.text)
                for phrase in (read.topic, read.place):
                    if phrase and not phrase.startswith(("places to ", "your ")):
                        assert phrase in query.text, (query.text, phrase)
                        assert phrase.split()[-1].lower() not in ("the", "a", "of", "and", "to", "for"), phrase
                pref = gold_preference(bundle, query)
                if pref:
                    liked, ruled_out = dp.preference_phrases(pref)
                    as_read = re.sub(r"\s*\([^)]*\)|\s[–—]\s[^–—]*\s[–—](?=\s)", "", " ".join(pref.split()))
                    for p in liked + ruled_out:  # "anything with" / "a" (for "her") are the reader's own
                        words = re.sub(r"^(?:anything with|a) ", "", p.text)
                        assert words in as_read, (pref, p.text)
                checked += 1
    assert checked > 100


def dataset_or_none(name: str) -> Path | None:
    from tests.conftest import DATASETS

    path = DATASETS / name
    return path if path.exists() else None
