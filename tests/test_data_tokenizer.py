"""The BPE tokenizer: exact round trips, merges equal to a slow recount-everything BPE written here,
and JSON files that load back to the same behaviour or are refused with the file's name."""
import json
from collections import Counter

import pytest

from minishare.data.corpus import default_corpus
from minishare.data.tokenizer import SPECIAL_TOKENS, Tokenizer, pretokenize

TRICKY = [
    "Hello,  world!\n\tTabs and   spaces ",
    "   leading spaces and a trailing newline\n",
    "snake_case_name = 42; x__y -> [MASK] (not special)",
    "naïve café — “quotes” … ½ 東京",
    "▁ a literal SentencePiece marker ▁▁ stays",
    "\n\n\r\n",
]


@pytest.fixture(scope="module")
def corpus_texts():
    return [sentence for document in default_corpus() for sentence in document]


@pytest.fixture(scope="module")
def corpus_tokenizer(corpus_texts):
    return Tokenizer.train(corpus_texts, vocab_size=8000)


def test_pretokenize_keeps_every_character():
    for text in TRICKY:
        assert "".join(pretokenize(text)) == text
    assert pretokenize("a  b, c") == ["a", " ", " b", ",", " c"]


def test_special_tokens_come_first():
    tokenizer = Tokenizer.train(["a b"], vocab_size=20)
    assert tokenizer.vocab[:5] == list(SPECIAL_TOKENS) == ["[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                            "[MASK]"]
    assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
            tokenizer.mask_id) == (0, 1, 2, 3, 4)


def test_round_trip_on_training_text():
    tokenizer = Tokenizer.train(TRICKY * 3, vocab_size=120)
    for text in TRICKY:
        ids = tokenizer.encode(text)
        assert all(i >= len(SPECIAL_TOKENS) for i in ids)   # "[MASK]" in text is just text
        assert tokenizer.decode(ids) == text
    # Unseen text made of seen characters also round-trips.
    assert tokenizer.decode(tokenizer.encode("café_42  ▁東")) == "café_42  ▁東"


def test_unseen_character_becomes_unk():
    tokenizer = Tokenizer.train(["abc"], vocab_size=10)
    assert tokenizer.encode("aXc")[1] == tokenizer.unk_id
    assert tokenizer.decode(tokenizer.encode("aXc")) == "a[UNK]c"


def test_default_corpus_round_trip_and_size(corpus_tokenizer, corpus_texts):
    assert corpus_tokenizer.vocab_size == 8000
    for document in default_corpus()[::7]:
        text = " ".join(document)   # whole documents: text never seen as one piece
        assert corpus_tokenizer.decode(corpus_tokenizer.encode(text)) == text
    n_tokens = sum(len(corpus_tokenizer.encode(text)) for text in corpus_texts)
    n_words = sum(len(text.split()) for text in corpus_texts)
    assert n_tokens < 1.5 * n_words   # subwords, far fewer than characters


def test_training_is_deterministic(corpus_tokenizer, corpus_texts):
    again = Tokenizer.train(corpus_texts, vocab_size=8000)
    assert again.vocab == corpus_tokenizer.vocab and again.merges == corpus_tokenizer.merges


def slow_bpe(texts, n_merges):
    """Textbook BPE: recount every pair before each merge; the most frequent pair wins, ties to
    the smaller (left id, right id); a merge spelling an existing token reuses its id."""
    vocab = list(SPECIAL_TOKENS) + sorted({c for text in texts for c in text})
    words = Counter(tuple(vocab.index(c) for c in piece)
                    for text in texts for piece in pretokenize(text))
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        text = vocab[best[0]] + vocab[best[1]]
        if text not in vocab:
            vocab.append(text)
        merges.append(best)
        merged = Counter()
        for word, count in words.items():
            out, i = [], 0
            while i < len(word):
                if word[i:i + 2] == best:
                    out.append(vocab.index(text))
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += count
        words = merged
    return vocab, merges


def test_merges_match_a_slow_recounting_bpe(corpus_texts):
    texts = corpus_texts[:300]
    fast = Tokenizer.train(texts, vocab_size=400)
    vocab, merges = slow_bpe(texts, len(fast.merges))
    assert fast.merges == merges
    assert fast.vocab == vocab


def test_too_small_a_vocabulary_or_no_text_is_refused():
    with pytest.raises(ValueError, match="vocab_size=6"):
        Tokenizer.train(["abc"], vocab_size=6)
    with pytest.raises(ValueError, match="no text"):
        Tokenizer.train(["", ""], vocab_size=100)


def test_decode_refuses_unknown_ids_and_can_skip_special_tokens():
    tokenizer = Tokenizer.train(["abc"], vocab_size=12)
    with pytest.raises(ValueError, match="token id 99"):
        tokenizer.decode([99])
    ids = [tokenizer.cls_id, *tokenizer.encode("abc"), tokenizer.sep_id, tokenizer.pad_id]
    assert tokenizer.decode(ids) == "[CLS]abc[SEP][PAD]"
    assert tokenizer.decode(ids, skip_special_tokens=True) == "abc"


def test_save_and_load_behave_the_same(tmp_path, corpus_tokenizer, corpus_texts):
    path = tmp_path / "bpe.json"
    path.write_text("an older file to be replaced", encoding="utf-8")
    corpus_tokenizer.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["bpe.json"]   # no temporary file left
    assert json.loads(path.read_text(encoding="utf-8"))["vocab"][:5] == list(SPECIAL_TOKENS)
    loaded = Tokenizer.load(path)
    assert loaded.vocab == corpus_tokenizer.vocab and loaded.merges == corpus_tokenizer.merges
    for text in corpus_texts[::50] + TRICKY[:1]:
        assert loaded.encode(text) == corpus_tokenizer.encode(text)


def test_load_refuses_missing_and_corrupt_files(tmp_path, corpus_tokenizer):
    with pytest.raises(FileNotFoundError, match="nothing.json"):
        Tokenizer.load(tmp_path / "nothing.json")
    good = tmp_path / "good.json"
    corpus_tokenizer.save(good)
    truncated = tmp_path / "truncated.json"
    truncated.write_text(good.read_text(encoding="utf-8")[:500], encoding="utf-8")
    with pytest.raises(ValueError, match="truncated.json"):
        Tokenizer.load(truncated)
    state = json.loads(good.read_text(encoding="utf-8"))
    for name, broken in [("format", {**state, "format": "something else"}),
                         ("specials", {**state, "vocab": state["vocab"][1:]}),
                         ("merge", {**state, "merges": state["merges"] + [["zz", "qq"]]})]:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(broken), encoding="utf-8")
        with pytest.raises(ValueError, match=f"{name}.json"):
            Tokenizer.load(path)
