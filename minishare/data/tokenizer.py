"""A byte-pair-encoding (BPE) subword tokenizer, written from scratch (Sennrich et al., 2016).

Why BPE: its training rule fits in one sentence (repeatedly merge the most frequent pair of adjacent
symbols into a new symbol) and encoding replays the learned merges in order, so a student can
follow every id it produces. ALBERT itself tokenizes with SentencePiece, V = 30,000 (Lan et al.,
2019, Sec. 4.1); for this course what matters is the same: a fixed vocabulary of V subwords, the
rows of the V × E embedding matrix.

The design is lossless. Text is first cut into pieces that concatenate back to it exactly: a word
(letters and digits) or a run of punctuation, each carrying the single space before it, or a run
of other whitespace; a piece longer than ``MAX_PIECE_CHARS`` characters is cut into pieces of at
most that many (a base64 blob or a minified line is one "word" of thousands of characters, and
BPE's work per merge grows with the length of the words it merges in). The leading space plays the role of SentencePiece's "▁" word-start marker,
but it is kept as a real space, so ``decode`` is plain concatenation and the round trip
``decode(encode(t)) == t`` holds for every text made of characters seen in training. A character
never seen becomes ``[UNK]``, the one place where information is lost.

    tokenizer = Tokenizer.train(sentences, vocab_size=8000)
    ids = tokenizer.encode("The if statement.")      # [..]; never a special id
    tokenizer.decode(ids) == "The if statement."
    tokenizer.save("bpe.json"); Tokenizer.load("bpe.json")
"""
import heapq
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from minishare import safeio
from minishare.checks import is_int
from minishare.errors import InvalidType, InvalidValue
from minishare.files import atomic_write
from minishare.progress import bar as progress_bar

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")   # ids 0..4
FORMAT = "minishare-bpe"
VERSION = 1
MAX_PIECE_CHARS = 32      # longer than nearly every word of a natural language
MAX_FILE_BYTES = 256 << 20

# A word with the space before it | punctuation with the space before it | other whitespace, each
# at most MAX_PIECE_CHARS long. The lookahead leaves the last space of a run to the word after it:
# "a  b" -> "a", " ", " b".
_PIECE = re.compile(r" ?[^\W_]{1,%d}| ?(?:[^\w\s]|_){1,%d}|\s{1,%d}(?!\S)|\s{1,%d}"
                    % ((MAX_PIECE_CHARS - 1,) * 2 + (MAX_PIECE_CHARS,) * 2))


def pretokenize(text):
    """Cut text into the pieces BPE works inside; ``"".join(pretokenize(t)) == t``."""
    return _PIECE.findall(text)


def _pieces(texts):
    """The pieces of every text, one at a time (a 200 MB corpus never becomes a list of them)."""
    for text in texts:
        for match in _PIECE.finditer(text):
            yield match.group()


def _merge(symbols, a, b, merged):
    """Replace every occurrence of the pair (a, b) in ``symbols``, left to right, by ``merged``."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            out.append(merged)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


class Tokenizer:
    """A trained BPE vocabulary: ``vocab[i]`` is the text of id i, ``merges`` the learned pairs in
    the order they were learned. Build one with ``Tokenizer.train`` or ``Tokenizer.load``."""

    pad_id, unk_id, cls_id, sep_id, mask_id = range(len(SPECIAL_TOKENS))

    def __init__(self, vocab, merges):
        """``vocab``: list of token strings, the special tokens first; ``merges``: list of
        distinct (left id, right id) pairs in learning order, each producing the id of
        left + right."""
        self.vocab = list(vocab)
        self._ids = {token: i for i, token in enumerate(self.vocab)}
        self.merges = [tuple(pair) for pair in merges]
        # rank (earliest learned first) and result of each merge
        self._ranks = {pair: (rank, self._ids[self.vocab[pair[0]] + self.vocab[pair[1]]])
                       for rank, pair in enumerate(self.merges)}
        self._cache = {}   # piece -> ids; text repeats words, so each is merged only once

    @property
    def vocab_size(self):
        """V, the number of ids, special tokens included."""
        return len(self.vocab)

    # ------------------------------------------------------------ training

    @classmethod
    def train(cls, texts, vocab_size, min_frequency=1, progress=False):
        """Learn merges on ``texts`` (an iterable of str) until the vocabulary has ``vocab_size``
        ids, or until no pair occurs ``min_frequency`` times (with the default 1: until every
        piece of the texts is a single token), so the result can be smaller than asked. Raise
        ``min_frequency`` to keep pairs seen only once or twice from becoming tokens.

        The vocabulary starts with the special tokens and every character of the texts. Each
        distinct piece (see ``pretokenize``) is stored once with its count; pair counts are kept
        up to date incrementally (only the pieces containing the merged pair are recounted), and
        a heap with lazy deletion finds the most frequent pair, ties going to the smaller ids.
        On the default corpus (62k words) V = 8000 takes about 0.5 s on one laptop core.
        ``progress``: show a bar of the merges learned (needs tqdm) on stderr.
        """
        if isinstance(texts, str):
            raise InvalidType("texts must be a list of strings, got a str (its characters would be "
                              "trained on one by one); for a single text pass [text]")
        if not is_int(vocab_size):
            raise InvalidType(f"vocab_size must be an int, got {vocab_size!r}")
        counts = Counter(_pieces(texts))
        if not counts:
            raise InvalidValue("no text to train on")
        alphabet = sorted({char for piece in counts for char in piece})
        vocab = list(SPECIAL_TOKENS) + alphabet
        if vocab_size < len(vocab):
            raise InvalidValue(f"vocab_size={vocab_size} is smaller than the {len(SPECIAL_TOKENS)} "
                               f"special tokens plus the {len(alphabet)} characters of the texts")
        ids = {token: i for i, token in enumerate(vocab)}
        words = [[ids[char] for char in piece] for piece in counts]
        freqs = list(counts.values())

        pair_counts = Counter()
        where = defaultdict(set)   # pair -> indices of the words that (may) contain it
        for w, (symbols, freq) in enumerate(zip(words, freqs)):
            for pair in zip(symbols, symbols[1:]):
                pair_counts[pair] += freq
                where[pair].add(w)
        heap = [(-count, pair) for pair, count in pair_counts.items()]
        heapq.heapify(heap)

        merges, learned = [], set()
        bar = progress_bar(vocab_size - len(vocab), progress, unit="merge", desc="BPE merges")
        while len(vocab) < vocab_size and heap:
            negative_count, pair = heapq.heappop(heap)
            if -negative_count != pair_counts.get(pair, 0):
                continue   # stale entry: the count changed after it was pushed
            if -negative_count < min_frequency:
                break
            text = vocab[pair[0]] + vocab[pair[1]]
            if text not in ids:   # two merge paths can spell the same token; give it one id
                ids[text] = len(vocab)
                vocab.append(text)
                if bar is not None:
                    bar.update(1)
            if pair not in learned:   # a pair can come back when a reused id reappears
                learned.add(pair)
                merges.append(pair)
            delta, merged = defaultdict(int), ids[text]   # the change of each pair's count
            for w in where.pop(pair):
                symbols, freq = words[w], freqs[w]
                new_symbols = _merge(symbols, *pair, merged)
                if len(new_symbols) == len(symbols):
                    continue   # the pair left this word with an earlier merge
                for old in zip(symbols, symbols[1:]):
                    delta[old] -= freq
                for new in zip(new_symbols, new_symbols[1:]):
                    delta[new] += freq
                    if merged in new:      # only pairs with the new id are new to this word
                        where[new].add(w)
                words[w] = new_symbols
            for p, change in delta.items():
                if change:
                    pair_counts[p] += change
                    if pair_counts[p] > 0:
                        heapq.heappush(heap, (-pair_counts[p], p))
                    else:
                        del pair_counts[p]
        if bar is not None:
            bar.close()
        return cls(vocab, merges)

    # ------------------------------------------------------------ encoding

    def _encode_piece(self, piece):
        """Ids of one piece: start from its characters, then apply the learned merge of lowest
        rank among adjacent pairs until none applies (the order training merged them in)."""
        symbols = [self._ids.get(char, self.unk_id) for char in piece]
        while len(symbols) > 1:
            ranked = [self._ranks[pair] for pair in zip(symbols, symbols[1:])
                      if pair in self._ranks]
            if not ranked:
                break
            rank, merged = min(ranked)
            symbols = _merge(symbols, *self.merges[rank], merged)
        return symbols

    def encode(self, text):
        """Token ids of ``text`` (list of int). Special tokens are never produced: "[MASK]" in the
        text is just characters; the pre-training code adds [CLS], [SEP] and [MASK] itself."""
        ids = []
        for piece in pretokenize(text):
            if piece not in self._cache:
                self._cache[piece] = self._encode_piece(piece)
            ids += self._cache[piece]
        return ids

    def decode(self, ids, skip_special_tokens=False):
        """The text of ``ids``: their strings concatenated. Special tokens read as their names
        ("[MASK]") unless ``skip_special_tokens``."""
        out = []
        for i in ids:
            if not (is_int(i) or getattr(i, "shape", None) == () and i.dtype.kind in "iu"):   # or a 0-d array
                raise InvalidType(f"decode: token ids must be integers, got {i!r} ({type(i).__name__})")
            i = int(i)
            if not 0 <= i < len(self.vocab):
                raise InvalidValue(f"token id {i} is outside the vocabulary (size {len(self.vocab)})")
            if not (skip_special_tokens and i < len(SPECIAL_TOKENS)):
                out.append(self.vocab[i])
        return "".join(out)

    # ------------------------------------------------------------ files

    def save(self, path):
        """Write the vocabulary and merges as JSON, atomically: a temporary file in the same
        folder is filled, then renamed over ``path``, so a crash never leaves half a file."""
        path = Path(path)
        state = {"format": FORMAT, "version": VERSION, "vocab": self.vocab,
                 "merges": [[self.vocab[a], self.vocab[b]] for a, b in self.merges]}
        with atomic_write(path, "w", encoding="utf-8") as f:
            json.dump(state, f, ensure_ascii=False, indent=0)

    @classmethod
    def load(cls, path):
        """Read a file written by ``save``. Raises ``FileNotFoundError`` if it is missing and
        ``ValueError`` naming the file if it is not a valid tokenizer file."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such tokenizer file")
        state = safeio.load_json(path, MAX_FILE_BYTES)
        try:
            return cls._from_state(state)
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidValue(f"{path}: not a valid {FORMAT} tokenizer file ({error})") from None

    @classmethod
    def _from_state(cls, state):
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise InvalidValue(f'"format" is not "{FORMAT}"')
        if state.get("version") != VERSION:
            raise InvalidValue(f"version {state.get('version')!r}; this minishare reads version {VERSION}")
        vocab = state["vocab"]
        if not isinstance(vocab, list) or not all(isinstance(t, str) for t in vocab):
            raise InvalidValue('"vocab" must be a list of strings')
        if tuple(vocab[:len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise InvalidValue(f"the vocabulary must start with {SPECIAL_TOKENS}")
        if len(set(vocab)) != len(vocab):
            raise InvalidValue("the vocabulary repeats a token")
        ids = {token: i for i, token in enumerate(vocab)}
        merges = []
        if not isinstance(state["merges"], list) or not all(
                isinstance(m, list) and len(m) == 2 and all(isinstance(t, str) for t in m) for m in state["merges"]):
            raise InvalidValue('"merges" must be a list of [left, right] pairs of strings')
        for left, right in state["merges"]:
            if left not in ids or right not in ids or left + right not in ids:
                raise InvalidValue(f"merge {left!r} + {right!r} uses a token not in the vocabulary")
            merges.append((ids[left], ids[right]))
        if len(set(merges)) != len(merges):
            raise InvalidValue("a merge is listed twice")
        return cls(vocab, merges)

