import os

import pytest

from core.history import tokens
from core.plan import Message


def test_counts_match_tiktoken_and_are_offline():
    enc = tokens.encoder("cl100k_base")
    text = "Hello there, how are you doing today? Ça va très bien — merci!"
    assert tokens.count_tokens(text) == len(enc.encode_ordinary(text))
    assert "tokenizers" in os.environ["TIKTOKEN_CACHE_DIR"] or os.environ.get("TIKTOKEN_CACHE_DIR")


@pytest.mark.parametrize("name", tokens.BUNDLED_ENCODINGS)
def test_bundled_encodings_load(name):
    assert tokens.count_tokens("one two three", name) >= 3


def test_unbundled_encoding_is_a_clear_error(monkeypatch):
    tokens.encoder.cache_clear()
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    with pytest.raises(tokens.TokenizerUnavailable, match="not bundled"):
        tokens.encoder("r50k_base")
    tokens.encoder.cache_clear()


def test_special_token_text_is_counted_as_text():
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_count_many_equals_individual_counts():
    texts = [f"sentence number {i} about bread" for i in range(20)] + ["", "x"]
    assert tokens.count_many(texts) == [tokens.count_tokens(t) for t in texts]


def test_count_messages_adds_documented_overhead():
    msgs = [Message(role="user", content="hi there"), {"role": "assistant", "content": "hello"}]
    expected = tokens.count_tokens("hi there") + tokens.count_tokens("hello")
    assert tokens.count_messages(msgs) == expected + 2 * tokens.MESSAGE_OVERHEAD + tokens.REPLY_PRIMING
    assert tokens.count_messages([]) == 0


def test_truncate_to_tokens():
    text = "word " * 100
    cut = tokens.truncate_to_tokens(text, 10)
    assert tokens.count_tokens(cut) <= 10 and text.startswith(cut)
    assert tokens.truncate_to_tokens("short", 10) == "short"


def test_a_large_batch_is_counted_on_one_lasting_pool_with_the_same_counts():
    """A batch past the parallel threshold goes to one pool for the process (tiktoken started a
    new pool of 8 threads per batch: thread start-up dominated the Extreme build), counts unchanged."""
    import threading

    texts = [f"session {i}: " + "the quick brown fox jumps over the lazy dog " * 900 for i in range(40)]
    assert sum(map(len, texts)) > tokens._PARALLEL_CHARS
    enc = tokens.encoder()
    expected = [len(enc.encode_ordinary(t)) for t in texts]
    before = threading.active_count()
    for _ in range(5):
        tokens.clear_cache()
        assert tokens.count_many(texts) == expected
    workers = [t for t in threading.enumerate() if t.name.startswith("prefscope-tokens")]
    assert 0 < len(workers) <= (os.cpu_count() or 2)
    assert threading.active_count() <= before + (os.cpu_count() or 2)
