"""Real token counts, offline, with tiktoken's bundled encodings.

litellm ships three tiktoken encoding files (``cl100k_base``, ``o200k_base``, ``p50k_base``) under
``litellm/litellm_core_utils/tokenizers``. We point ``TIKTOKEN_CACHE_DIR`` there (unless the user
set it) so tiktoken never reaches the network, and we locate the folder with ``find_spec`` only:
importing litellm itself takes seconds.

Counting conventions (the same everywhere in prefscope):

* ``count_tokens(text)`` – ``encode_ordinary`` length (special-token text is counted as plain text).
* ``count_messages(messages)`` – each message costs its content plus :data:`MESSAGE_OVERHEAD`
  tokens (role and delimiters, as OpenAI's chat format counts them), and the whole request
  :data:`REPLY_PRIMING` tokens for the assistant reply header. Other providers' tokenizers differ
  by a few percent; these counts are for comparing contexts and methods, not for billing.

Counts of individual texts are memoised in-process by a digest of the text, so a 250K-token
history counted once while building a context costs nothing when a method counts it again, and
kept between processes once the application plugs in a store (:func:`use_count_cache`), so a later
process counting the same texts does not load the tokenizer at all.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import cache, lru_cache
from pathlib import Path

from core.model import Session
from core.ports import TokenCountCache

DEFAULT_ENCODING = "cl100k_base"
#: Encodings whose files litellm bundles (verified with tiktoken 0.14 / litellm 1.106).
BUNDLED_ENCODINGS = ("cl100k_base", "o200k_base", "p50k_base")
#: Tokens a chat message costs beyond its content (role + start/end markers).
MESSAGE_OVERHEAD = 4
#: Tokens the request costs once, for priming the assistant's reply.
REPLY_PRIMING = 3

_COUNT_CACHE: dict[tuple[str, bytes], int] = {}
_COUNT_CACHE_LIMIT = 500_000
#: Counts kept between processes (``storage.token_counts``), plugged in by the application.
_STORE: TokenCountCache | None = None


def use_count_cache(store: TokenCountCache | None) -> None:
    """Keeps counts in ``store`` from now on (None: in memory only)."""
    global _STORE
    _STORE = store


class TokenizerUnavailable(RuntimeError):
    """The requested encoding is not available offline."""


def bundled_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        candidate = Path(base) / "litellm_core_utils" / "tokenizers"
        if candidate.is_dir():
            return candidate
    return None


def _ensure_cache_dir() -> None:
    if os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR"):
        return  # the user chose where tiktoken looks
    folder = bundled_tokenizer_dir()
    if folder is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


#: Loading an encoding takes ~0.1-0.3 s of the GIL; the workbench's first prepare and its timeline's
#: count start together in two threads, and without this both would load it.
_ENCODER_LOCK = threading.Lock()


def encoder(name: str = DEFAULT_ENCODING):
    """The tiktoken encoding, loaded once per process (by one thread at a time)."""
    with _ENCODER_LOCK:
        return _encoder(name)


@lru_cache(maxsize=4)
def _encoder(name: str):
    if name not in BUNDLED_ENCODINGS and not os.environ.get("TIKTOKEN_CACHE_DIR"):
        raise TokenizerUnavailable(
            f"encoding {name!r} is not bundled offline; use one of {', '.join(BUNDLED_ENCODINGS)}"
        )
    _ensure_cache_dir()
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # tiktoken raises requests/OSError flavours when the file is absent
        raise TokenizerUnavailable(
            f"cannot load encoding {name!r} offline (looked in TIKTOKEN_CACHE_DIR="
            f"{os.environ.get('TIKTOKEN_CACHE_DIR')!r}): {exc}"
        ) from exc


encoder.cache_clear = _encoder.cache_clear  # type: ignore[attr-defined]  # tests forget loaded encodings


#: Texts longer than this are encoded in pieces: BPE time grows with the square of a run of
#: characters without whitespace (a pasted base64 blob), so a 20 MB turn would take minutes.
_PIECE_CHARS = 8_192


def _pieces(text: str) -> list[str]:
    """``text`` cut into pieces of at most :data:`_PIECE_CHARS`, just before a space where there is
    one (the space starts the next word's token, so counts match the whole text's almost exactly)."""
    if len(text) <= _PIECE_CHARS:
        return [text]
    out: list[str] = []
    start = 0
    while len(text) - start > _PIECE_CHARS:
        end = start + _PIECE_CHARS
        cut = text.rfind(" ", start + _PIECE_CHARS // 2, end)
        cut = cut if cut > start else end
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def _encode_len(enc, texts: list[str]) -> list[int]:
    """Token counts of ``texts``: long ones in pieces, all pieces in one batch when there are many."""
    spans: list[tuple[int, int]] = []
    pieces: list[str] = []
    for text in texts:
        parts = _pieces(text)
        spans.append((len(pieces), len(pieces) + len(parts)))
        pieces += parts
    if len(pieces) > 8 and sum(map(len, pieces)) > _PARALLEL_CHARS:
        encoded = list(_pool().map(enc.encode_ordinary, pieces))
    else:
        encoded = [enc.encode_ordinary(p) for p in pieces]
    return [sum(len(encoded[i]) for i in range(a, b)) for a, b in spans]


#: Below this many characters a batch is encoded on the calling thread: handing pieces to threads
#: costs more than it saves (tiktoken's own ``encode_ordinary_batch`` starts a new pool per call).
_PARALLEL_CHARS = 256 * 1024


@cache
def _pool() -> ThreadPoolExecutor:
    """One pool for the process: tiktoken leaves the GIL while it encodes, so pieces use every core."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 2, thread_name_prefix="prefscope-tokens")


def _key(text: str, encoding: str) -> tuple[str, bytes]:
    return encoding, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens in ``text`` (memoised per text digest)."""
    if not text:
        return 0
    hit = _COUNT_CACHE.get(_key(text, encoding))
    return hit if hit is not None else count_many([text], encoding)[0]


def count_many(texts: Iterable[str], encoding: str = DEFAULT_ENCODING) -> list[int]:
    """Counts for many texts: from memory, else from the disk store, else encoded in one batch."""
    texts = list(texts)
    keys = [_key(t, encoding) if t else None for t in texts]
    out = [0 if k is None else _COUNT_CACHE.get(k, -1) for k in keys]
    missing = [i for i, n in enumerate(out) if n < 0]
    if not missing:
        return out
    digests = list({keys[i][1] for i in missing})  # type: ignore[index]
    stored = _STORE.lookup(encoding, digests) if _STORE is not None else {}
    fresh: dict[bytes, int] = {}
    unknown = [i for i in missing if keys[i][1] not in stored]  # type: ignore[index]
    if unknown:
        counts = _encode_len(encoder(encoding), [texts[i] for i in unknown])
        fresh = {keys[i][1]: n for i, n in zip(unknown, counts, strict=True)}  # type: ignore[index]
        if _STORE is not None:
            _STORE.remember(encoding, fresh)
    if len(_COUNT_CACHE) + len(missing) >= _COUNT_CACHE_LIMIT:
        _COUNT_CACHE.clear()
    for i in missing:
        digest = keys[i][1]  # type: ignore[index]
        out[i] = _COUNT_CACHE[keys[i]] = stored[digest] if digest in stored else fresh[digest]  # type: ignore[index]
    return out


def count_messages(messages: Iterable, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of a chat request: contents + :data:`MESSAGE_OVERHEAD` each + :data:`REPLY_PRIMING`.

    Accepts ``core.plan.Message`` objects or ``{"role", "content"}`` dicts.
    """
    contents = [m["content"] if isinstance(m, dict) else m.content for m in messages]
    if not contents:
        return 0
    return sum(count_many(contents, encoding)) + MESSAGE_OVERHEAD * len(contents) + REPLY_PRIMING


def truncate_to_tokens(text: str, max_tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """The longest prefix of ``text`` of at most ``max_tokens`` tokens (cut at a token boundary)."""
    if max_tokens <= 0:
        return ""
    enc = encoder(encoding)
    kept: list[int] = []
    for piece in _pieces(text):  # stop encoding once the budget is spent
        kept += enc.encode_ordinary(piece)
        if len(kept) > max_tokens:
            return enc.decode(kept[:max_tokens])
    return text


def clear_cache() -> None:
    """Forget memoised counts in memory (benchmarks use it, with ``PREFSCOPE_TOKEN_CACHE=off``, to
    measure cold counting)."""
    _COUNT_CACHE.clear()


def session_tokens(session: Session, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens the session's turns cost as chat messages (memoised per turn text): the one meaning of
    "a session's tokens" for contexts, the timeline and estimates."""
    return sum(count_many([t.content for t in session.turns], encoding)) + MESSAGE_OVERHEAD * len(session.turns)
