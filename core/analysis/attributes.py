"""Re-Centering stage 1 (Re-Centering paper §4, App. B): extract user attributes from the history.

1. **Chunk** the user's own sessions by characters (the paper: 50,000-character chunks), never
   splitting a turn. Each turn is shown with a neutral reference ``S<n>#index`` (sessions numbered
   over the whole user; dataset ids can carry gold) so the extractor can cite evidence; citations
   are mapped back to ``core.model.turn_ref`` ids when parsing.
2. **Extract** per chunk (prompt ``recentering-extract-v1``, ours): attributes with reasoning, a
   self-reported confidence 0–1 and evidence turn ids. Parsing is robust and says what it dropped
   (unknown turn ids, missing confidence …); a chunk whose output cannot be parsed is recorded
   with its raw text and error.
3. **Filter** below a confidence threshold (paper: 0.4).
4. **Merge near-duplicates** by agglomerative clustering (average linkage, scipy) on cosine similarity
   of embeddings, merging while the average similarity is ≥ 0.7 (paper; all-MiniLM-L6-v2). The
   ``embed(texts) -> np.ndarray`` callable is injected (e.g. ``core.history.retrieval.Embedder(...).embed``)
   so this module never imports torch. A cluster's representative is the member closest to the
   confidence-weighted centroid (paper). Its confidence: members from the same chunk are
   correlated and count once (their max); chunks combine as independent evidence,
   1 − Π(1 − c) (prefscope's reading of the paper's "independence-aware formula").
5. **Verify** (optional, prompt ``recentering-verify-v1``): accept / uncertain / reject per attribute.

Outputs are ``core.model.Attribute`` objects (``source`` = the extractor's model id) wrapped with
what a researcher needs to audit them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.judges.common import judge_spec, messages
from core.judges.parsing import get_key, json_objects, parse_label
from core.judges.templates import template
from core.methods.aliases import Aliases
from core.model import Attribute, UserBundle, split_turn_ref, turn_ref
from core.providers.calls import Complete

if TYPE_CHECKING:  # numpy is imported where vectors are merged: opening a user's stored extraction needs none
    import numpy as np

Embed = Callable[[list[str]], "np.ndarray"]
DEFAULT_CHUNK_CHARS = 50_000
DEFAULT_MIN_CONFIDENCE = 0.4
DEFAULT_THRESHOLD = 0.7
VERDICTS = {
    "accept": ("accepted", "ok", "supported", "yes"),
    "uncertain": ("unsure", "unclear", "maybe"),
    "reject": ("rejected", "unsupported", "no"),
}
ROLE = {"user": "User", "assistant": "Assistant", "system": "System"}


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    #: Real turn refs of the turns shown (the prompt shows their aliases ``S<n>#i``).
    refs: tuple[str, ...]
    #: alias -> real session id for the sessions this chunk shows (one table for the whole user).
    aliases: dict[str, str] = field(default_factory=dict)


def chunk_history(
    bundle: UserBundle, chunk_chars: int = DEFAULT_CHUNK_CHARS, *, include_filler: bool = False
) -> list[Chunk]:
    """The user's sessions as transcript chunks of at most ``chunk_chars`` characters (a single
    turn longer than that gets a chunk of its own). Sessions are named ``S1, S2, …`` over the whole
    user (dataset ids can carry gold); each chunk keeps the aliases it shows."""
    if chunk_chars < 1:
        raise ValueError("chunk_chars must be positive")
    shown = [s for s in bundle.sessions if include_filler or s.kind != "filler"]
    aliases = Aliases.for_sessions(s.id for s in shown)
    lines: list[tuple[str, str | None]] = []
    for s in shown:
        date = f" ({s.date.isoformat()})" if s.date else ""
        lines.append((f"### Session {aliases.alias(s.id)}{date}", None))
        for i, t in enumerate(s.turns):
            turn = turn_ref(s.id, i)
            lines.append((f"[{aliases.alias_ref(turn)}] {ROLE[t.role]}: {t.content}", turn))
    chunks: list[Chunk] = []
    buf: list[str] = []
    refs: list[str] = []
    size = 0

    def close() -> None:
        sessions = {split_turn_ref(r)[0] for r in refs}
        table = {a: k for a, k in aliases.real.items() if k in sessions}
        chunks.append(Chunk(len(chunks), "\n".join(buf), tuple(refs), table))

    for text, ref in lines:
        if buf and size + len(text) + 1 > chunk_chars and refs:
            close()
            buf, refs, size = [], [], 0
        buf.append(text)
        size += len(text) + 1
        if ref:
            refs.append(ref)
    if refs:
        close()
    return chunks


@dataclass
class Candidate:
    text: str
    reasoning: str
    confidence: float
    evidence: list[str]
    chunk: int


@dataclass
class ChunkOutput:
    index: int
    raw: str
    error: str | None
    candidates: int
    notes: list[str] = field(default_factory=list)
    #: alias -> real session id, as the chunk's prompt showed them (to read ``raw``).
    aliases: dict[str, str] = field(default_factory=dict)


def parse_extraction(
    text: str, chunk: int, valid_refs: Sequence[str], aliases: dict[str, str] | None = None
) -> tuple[list[Candidate], str | None, list[str]]:
    """Candidates from one extractor reply, an error when nothing usable was found, and notes on
    what was repaired or dropped. Cited ``S<n>#i`` aliases are mapped back to real refs first."""
    table = Aliases(dict(aliases or {}))
    notes: list[str] = []
    if not text or not text.strip():
        return [], "empty extractor output", notes
    items = None
    for obj, _, _ in json_objects(text):
        value = get_key(obj, "attributes")
        if isinstance(value, list):
            items = value
            break
    if items is None:
        return [], "no JSON object with an 'attributes' list in the output", notes
    valid = set(valid_refs)
    out: list[Candidate] = []
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            notes.append(f"attributes[{k}] is not an object: dropped")
            continue
        body = get_key(item, "attribute", "text", "statement")
        if not isinstance(body, str) or not body.strip():
            notes.append(f"attributes[{k}] has no attribute text: dropped")
            continue
        conf = _confidence(get_key(item, "confidence"))
        if conf is None:
            notes.append(f"attributes[{k}] has no usable confidence ({get_key(item, 'confidence')!r}): dropped")
            continue
        if conf[1]:
            notes.append(f"attributes[{k}] confidence {conf[1]}")
        evidence = get_key(item, "evidence", "evidence_turns", "turns") or []
        if isinstance(evidence, str):
            evidence = [evidence]
        refs: list[str] = []
        bad: list[str] = []
        for e in evidence if isinstance(evidence, list) else []:
            cited = str(e).strip().strip("[]")
            ref = table.to_real(cited) or cited
            if ref in valid:
                refs.append(ref)
            else:
                bad.append(cited)
        if bad:
            notes.append(f"attributes[{k}] cites turn ids not in this chunk, dropped from its evidence: {bad}")
        reasoning = get_key(item, "reasoning", "reason", "why")
        out.append(
            Candidate(
                body.strip(),
                reasoning.strip() if isinstance(reasoning, str) else "",
                conf[0],
                list(dict.fromkeys(refs)),
                chunk,
            )
        )
    return out, None, notes


def _confidence(value) -> tuple[float, str | None] | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        c = float(str(value).strip().rstrip("%"))
    except ValueError:
        return None
    if 1.0 < c <= 100.0:
        return c / 100.0, f"{value!r} read as a percentage"
    if 0.0 <= c <= 1.0:
        return c, None
    return None


# -- near-duplicate merging ----------------------------------------------------------------------


def cluster(vectors: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> list[list[int]]:
    """Agglomerative clustering, average linkage on cosine similarity (``scipy.cluster.hierarchy``):
    clusters merge while their mean pairwise similarity is ≥ ``threshold``. Average-linkage merge
    heights never decrease, so cutting the tree at distance 1 − threshold is exactly that rule.
    A zero vector is similar to nothing. Clusters are returned with members ascending, ordered
    by their first member (deterministic)."""
    n = len(vectors)
    if n < 2:
        return [[i] for i in range(n)]
    import numpy as np
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = v / np.where(norms == 0, 1, norms)
    distance = np.clip(1.0 - v @ v.T, 0.0, 2.0)
    np.fill_diagonal(distance, 0.0)
    tree = linkage(squareform(distance, checks=False), method="average")
    # + 1e-9: a similarity of exactly ``threshold`` merges despite float rounding of 1 − cos.
    labels = fcluster(tree, t=1.0 - threshold + 1e-9, criterion="distance")
    members: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(int(label), []).append(i)
    return sorted(members.values(), key=lambda c: c[0])


def combined_confidence(members: Sequence[Candidate]) -> float:
    by_chunk: dict[int, float] = {}
    for m in members:
        by_chunk[m.chunk] = max(by_chunk.get(m.chunk, 0.0), m.confidence)
    miss = 1.0
    for c in by_chunk.values():
        miss *= 1.0 - c
    return round(1.0 - miss, 6)


@dataclass
class ExtractedAttribute:
    attribute: Attribute
    merged_from: list[str] = field(default_factory=list)
    chunks: list[int] = field(default_factory=list)
    verifier_verdict: str | None = None
    verifier_reason: str = ""
    verifier_raw: str = ""
    verifier_error: str | None = None


def merge(candidates: list[Candidate], source: str, embed: Embed | None, threshold: float) -> list[ExtractedAttribute]:
    if not candidates:
        return []
    import numpy as np

    if embed is None:  # exact duplicates only
        groups: dict[str, list[int]] = {}
        for i, c in enumerate(candidates):
            groups.setdefault(" ".join(c.text.lower().split()), []).append(i)
        clusters = sorted(groups.values(), key=lambda g: g[0])
        vecs = None
    else:
        vecs = np.asarray(embed([c.text for c in candidates]), dtype=np.float64)
        if vecs.shape[0] != len(candidates):
            raise ValueError(f"embed returned {vecs.shape[0]} vectors for {len(candidates)} texts")
        clusters = cluster(vecs, threshold)
    out = []
    for n, members in enumerate(clusters, 1):
        group = [candidates[i] for i in members]
        rep = members[0]
        if vecs is not None and len(members) > 1:
            v = vecs[members]
            v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            weights = np.array([c.confidence for c in group]) + 1e-9
            centroid = (v * weights[:, None]).sum(axis=0)
            centroid /= max(np.linalg.norm(centroid), 1e-12)
            rep = members[int(np.argmax(v @ centroid))]
        r = candidates[rep]
        evidence = list(dict.fromkeys(e for c in group for e in c.evidence))
        attr = Attribute(
            id=f"x{n}",
            text=r.text,
            reasoning=r.reasoning,
            confidence=combined_confidence(group),
            evidence_turns=evidence,
            source=source,
        )
        out.append(ExtractedAttribute(attr, [c.text for c in group if c is not r], sorted({c.chunk for c in group})))
    return out


# -- the whole stage ----------------------------------------------------------------------------


@dataclass
class Extraction:
    user_id: str
    model: str
    prompt_version: str
    temperature: float | None
    chunk_chars: int
    min_confidence: float
    threshold: float | None
    attributes: list[ExtractedAttribute]
    dropped: list[Candidate]
    chunks: list[ChunkOutput]
    verifier_model: str | None = None
    verifier_version: str | None = None

    @property
    def errors(self) -> list[str]:
        return [f"chunk {c.index}: {c.error}" for c in self.chunks if c.error]


async def extract(
    bundle: UserBundle,
    model_id: str,
    complete: Complete,
    *,
    embed: Embed | None = None,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    threshold: float = DEFAULT_THRESHOLD,
    temperature: float | None = 0.0,
    verifier: str | None = None,
    include_filler: bool = False,
) -> Extraction:
    t = template("recentering", "extract")
    spec = judge_spec(model_id, temperature)
    chunks = chunk_history(bundle, chunk_chars, include_filler=include_filler)

    async def one(ch: Chunk) -> tuple[ChunkOutput, list[Candidate]]:
        user = t.text("user", chunk=ch.index + 1, chunks=len(chunks), transcript=ch.text)
        completion = await complete(spec, messages(t.fields["system"], user))
        if not completion.ok:
            failed = f"extractor call failed: {completion.error}"
            return ChunkOutput(ch.index, completion.text, failed, 0, [], dict(ch.aliases)), []
        cands, error, notes = parse_extraction(completion.text, ch.index, ch.refs, ch.aliases)
        return ChunkOutput(ch.index, completion.text, error, len(cands), notes, dict(ch.aliases)), cands

    results = await asyncio.gather(*(one(ch) for ch in chunks))
    outputs = [r[0] for r in results]
    candidates = [c for r in results for c in r[1]]
    kept = [c for c in candidates if c.confidence >= min_confidence]
    dropped = [c for c in candidates if c.confidence < min_confidence]
    attrs = merge(kept, model_id, embed, threshold)
    ex = Extraction(
        bundle.user.id,
        model_id,
        t.version,
        temperature,
        chunk_chars,
        min_confidence,
        threshold if embed is not None else None,
        attrs,
        dropped,
        outputs,
    )
    if verifier:
        await verify(bundle, attrs, verifier, complete)
        ex.verifier_model = verifier
        ex.verifier_version = template("recentering", "verify").version
    return ex


async def verify(
    bundle: UserBundle,
    attrs: list[ExtractedAttribute],
    model_id: str,
    complete: Complete,
    *,
    temperature: float | None = 0.0,
) -> None:
    """Fill each attribute's verifier verdict (accept / uncertain / reject) in place."""
    t = template("recentering", "verify")
    spec = judge_spec(model_id, temperature)

    async def one(x: ExtractedAttribute) -> None:
        # Neutral names here too: the verifier needs the turns, not the dataset's session ids.
        aliases = Aliases.for_sessions(split_turn_ref(ref)[0] for ref in x.attribute.evidence_turns)
        evidence = (
            "\n".join(
                f"[{aliases.alias_ref(ref)}] {ROLE[bundle.turn(ref).role]}: {bundle.turn(ref).content}"
                for ref in x.attribute.evidence_turns
            )
            or "(the extractor cited no turns)"
        )
        user = t.text(
            "user", attribute=x.attribute.text, reasoning=x.attribute.reasoning or "(none)", evidence=evidence
        )
        completion = await complete(spec, messages(t.fields["system"], user))
        x.verifier_raw = completion.text
        if not completion.ok:
            x.verifier_error = f"verifier call failed: {completion.error}"
            return
        parsed = parse_label(completion.text, VERDICTS, key=("verdict",))
        if parsed.ok:
            x.verifier_verdict, x.verifier_reason = str(parsed.value), parsed.rationale
        else:
            x.verifier_error = parsed.error

    await asyncio.gather(*(one(x) for x in attrs))
