"""ALBERT pre-training examples: segment pairs for SOP or NSP, masked for MLM, batched in NumPy.

Following the reference data pipeline of ALBERT (Lan et al., 2019, Sec. 3.1 and 4.1), which
extends BERT's (Devlin et al., 2019, Sec. 3.1):

1. Segments. Consecutive sentences of one document are packed until they reach a target length
   (``max_seq_length - 3``, or with probability ``short_seq_prob`` a random shorter one); the chunk
   is cut at a random sentence boundary into segment A and segment B. The input reads
   ``[CLS] A [SEP] B [SEP]``, with token_type_ids 0 for ``[CLS] A [SEP]`` and 1 for ``B [SEP]``.
   A pair longer than ``max_seq_length - 3`` is cut as the reference's ``truncate_seq_pair``
   does: token by token from the longer segment, at its front or its back at random. For SOP a
   document is packed from its start or from its end, at random (below says why).
2. Sentence-level task, as Hugging Face names the labels:

   - SOP (ALBERT): ``sentence_order_label`` 0 = A then B as in the text; 1 = the same two
     segments swapped. Probability 0.5 each. Swapped before truncation, as in ALBERT's code.
   - NSP (BERT): ``next_sentence_label`` 0 = B is the true continuation; 1 = B is taken from another
     document (and the sentences it replaced are used for the next pair). Probability 0.5 each.

3. MLM. 15% of the maskable tokens (every token except [CLS], [SEP], [PAD] and [UNK]) are selected,
   at least one per example; of those 80% become [MASK], 10% a random non-special token and 10%
   stay. ``labels`` holds the original id at selected positions and -100 elsewhere. With
   ``max_ngram = 3`` (ALBERT's n-gram masking) whole spans of n <= 3 consecutive tokens are
   selected, n drawn with p(n) = (1/n) / Σ_k 1/k = 6/11, 3/11, 2/11; ``max_ngram = 1`` is BERT.

Nothing but the text may tell the label; ``minishare.analysis.cues`` measures what rules reading
only surface cues (segment ends, lengths, first and last tokens) score. Three leaks had to be
closed for them to score chance on the default corpus (V = 1000, max_seq_length = 64):

- Cutting always A's front and B's back marked the segment that lost its sentence end as the
  second one: a rule reading only whether each segment ends with ".", "!" or "?" scored 84% "SOP
  accuracy". Hence the random ends of ``truncate_pair``.
- A document's first sentence was encoded without the space before it, so its first token marked
  the segment that can only come first (SOP), or a random B that starts its document (NSP, where
  a first-token rule scored 58%). Now every sentence is encoded with its space.
- Packing stops at the sentence that crosses the target, which is longer than the others on
  average (a long sentence is more likely to cross a line), so B, which holds it, was more often
  the longer segment and the one cut: still 55% for SOP with the reference's packing. With
  max_seq_length = 512 that sentence is a small part of a chunk; here, with sentences of 28 tokens
  (median), 88% of the pairs need cutting. So SOP packs each document from its start or, with probability
  1/2, from its end (the crossing sentence is then a chunk's first), a departure from the
  reference that makes A and B alike. NSP keeps the reference's packing: its label swaps nothing,
  and its rules score chance without it.

What remains (at most 52.5%, for first-token rules, on about 20,000 held-out pairs) comes from
the words themselves, which the tasks are meant to read.

Everything random comes from ``numpy.random.default_rng(seed)``: the same seed gives the same
examples and batches.
"""
import numpy as np

from minishare.data import holdout
from minishare.data.tokenizer import SPECIAL_TOKENS
from minishare.errors import InvalidValue

IGNORE_INDEX = -100   # label of positions the MLM loss skips (PyTorch's cross-entropy default)
TASKS = {"sop": "sentence_order_label", "nsp": "next_sentence_label"}
MASKED_LM_PROB = 0.15                    # share of the maskable tokens selected for prediction
REPLACE_MASK, REPLACE_RANDOM = 0.8, 0.1   # of those: [MASK], a random token; the rest stay


def split_documents(documents, eval_fraction=0.1, seed=0):
    """Held-out split at the level of sentences: (train documents, eval documents), each in corpus
    order, such that no held-out document has a sentence of a training document.

    The documents at ``holdout.held_out_documents(len(documents), eval_fraction, seed)`` are held
    out. The grammar corpus writes those stories from held-out sentences only (for the defaults,
    the split every run makes), so for it the split is clean by construction. Text not written that
    way (the default corpus, your own) may repeat sentences across documents; a held-out document
    that shares a sentence with training is then dropped (on the default corpus 9 of the 30 picked,
    most of them sections that Python's help prints under two topic names).
    """
    held_out = holdout.held_out_documents(len(documents), eval_fraction, seed)
    train = [doc for i, doc in enumerate(documents) if i not in held_out]
    seen = {sentence for doc in train for sentence in doc}
    evaluation = [doc for i, doc in enumerate(documents) if i in held_out and seen.isdisjoint(doc)]
    if not evaluation:
        raise InvalidValue("every held-out document shares a sentence with a training document: the corpus "
                           "repeats itself")
    return train, evaluation


# ---------------------------------------------------------------- masked LM

def ngram_probabilities(max_ngram):
    """p(n) = (1/n) / Σ_{k=1..max_ngram} 1/k, n = 1..max_ngram (ALBERT, Sec. 4.1)."""
    weights = 1.0 / np.arange(1, max_ngram + 1)
    return weights / weights.sum()


def select_spans(maskable, rng, masked_lm_prob=MASKED_LM_PROB, max_ngram=3):
    """Choose the positions to predict, as spans (start, length) in the order they were chosen.

    ``maskable``: (T,) bool, False at positions never to be selected ([CLS], [SEP], ...). The
    budget is ``max(1, round(masked_lm_prob * maskable.sum()))`` positions. Candidate starts are
    visited in a random order; each draws a length n from ``ngram_probabilities`` and the span is
    then trimmed, so that it stays within the budget and stops before an unmaskable or already
    selected position (a span never crosses [SEP]). ``max_ngram`` is the reference script's
    ``--ngram`` flag (3 for ALBERT; 1 gives BERT's single tokens).
    """
    maskable = np.asarray(maskable, dtype=bool)
    candidates = np.flatnonzero(maskable)
    if len(candidates) == 0:
        raise InvalidValue("no maskable position: the example has no tokens besides special ones")
    budget = max(1, round(masked_lm_prob * len(candidates)))
    starts = rng.permutation(candidates)
    lengths = rng.choice(np.arange(1, max_ngram + 1), size=len(starts),
                         p=ngram_probabilities(max_ngram))
    free = maskable.copy()   # maskable and not selected yet
    spans, n_selected = [], 0
    for start, n in zip(starts.tolist(), lengths.tolist()):
        if n_selected == budget:
            break
        if not free[start]:
            continue
        n = min(n, budget - n_selected)
        length = 1
        while length < n and start + length < len(free) and free[start + length]:
            length += 1
        free[start:start + length] = False
        spans.append((start, length))
        n_selected += length
    return spans


def mask_tokens(input_ids, positions, rng, vocab_size, mask_id):
    """BERT's corruption of the selected ``positions``: each independently becomes [MASK] with
    probability 0.8, a random non-special token with 0.1, and stays with 0.1.

    Returns (masked input_ids, labels): labels hold the original id at ``positions`` and
    ``IGNORE_INDEX`` elsewhere; the input is not modified.
    """
    input_ids = np.asarray(input_ids, dtype=np.int64)
    positions = np.asarray(positions, dtype=np.int64)
    labels = np.full_like(input_ids, IGNORE_INDEX)
    labels[positions] = input_ids[positions]
    masked = input_ids.copy()
    r = rng.random(len(positions))
    masked[positions[r < REPLACE_MASK]] = mask_id
    replaced = positions[(r >= REPLACE_MASK) & (r < REPLACE_MASK + REPLACE_RANDOM)]
    masked[replaced] = rng.integers(len(SPECIAL_TOKENS), vocab_size, size=len(replaced))
    return masked, labels


# ---------------------------------------------------------------- segment pairs

def truncate_pair(a, b, max_num_tokens, rng):
    """Shorten a pair until ``len(a) + len(b) <= max_num_tokens``, as the reference does
    (``truncate_seq_pair`` in BERT's and ALBERT's create_pretraining_data.py): one token at a time
    from the longer segment (B on a tie), from its front or its back with probability 1/2 each.

    Why at random: cutting always A's front and B's back would mark which segment was cut where
    (a segment without its sentence end is the one that came second), and after an SOP swap that
    mark would give the order away. Returns new lists; the inputs are not modified.
    """
    a, b = list(a), list(b)
    while len(a) + len(b) > max_num_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:
            del longer[0]
        else:
            del longer[-1]
    return a, b


def _random_segment(documents, exclude, target_length, rng):
    """Tokens from a random document other than ``exclude``: consecutive sentences from a random
    start until ``target_length`` tokens (at least one sentence), as BERT's reference builds a
    random next sentence (its target length is what the chunk left for B, so a random B is as
    long as a true one would have been)."""
    other = int(rng.integers(len(documents) - 1))
    other += other >= exclude
    document = documents[other]
    tokens = []
    for sentence in document[int(rng.integers(len(document))):]:
        tokens += sentence
        if len(tokens) >= target_length:
            break
    return tokens


def segment_pairs(documents, index, rng, max_seq_length, task="sop", short_seq_prob=0.1):
    """The (A, B, label) pairs of ``documents[index]``, before masking.

    ``documents``: tokenized documents (lists of sentences, each a list of ids). A chunk grows
    sentence by sentence until it holds at least two sentences and reaches the target length, or
    the document ends; a last chunk of a single sentence is dropped. See the module docstring for
    the labels.
    """
    max_num_tokens = max_seq_length - 3   # room for [CLS], [SEP], [SEP]
    document = documents[index]

    def target_length():
        if rng.random() < short_seq_prob:
            return int(rng.integers(2, max_num_tokens + 1))
        return max_num_tokens

    # SOP packs the document from its start or from its end (see the module docstring).
    backward = task == "sop" and rng.random() < 0.5
    sentences = document[::-1] if backward else document
    pairs, chunk, target, i = [], [], target_length(), 0
    while i < len(sentences):
        chunk.append(sentences[i])
        i += 1
        if i < len(sentences) and (len(chunk) < 2 or sum(map(len, chunk)) < target):
            continue
        if backward:
            chunk = chunk[::-1]   # back in text order: A is always the earlier text
        if len(chunk) >= 2:
            a_end = int(rng.integers(1, len(chunk)))   # A = the first a_end sentences
            a = [t for sentence in chunk[:a_end] for t in sentence]
            label = int(rng.random() < 0.5)
            if task == "nsp" and label:
                b = _random_segment(documents, index, target - len(a), rng)
                i -= len(chunk) - a_end   # the sentences B would have used start the next chunk
            else:
                b = [t for sentence in chunk[a_end:] for t in sentence]
            if task == "sop" and label:
                a, b = b, a
            a, b = truncate_pair(a, b, max_num_tokens, rng)   # after the swap, as ALBERT's code
            pairs.append((a, b, label))
        chunk, target = [], target_length()
    return pairs


# ---------------------------------------------------------------- examples and batches

def collate(examples, label_name, pad_id=0, pad_to=None):
    """Stack examples into a batch: a dict of int64 NumPy arrays.

    ``input_ids``, ``attention_mask`` (1 real token, 0 padding), ``token_type_ids`` and ``labels``
    (B, T), padded with ``pad_id`` (labels with -100) to the longest example or to ``pad_to``;
    ``label_name`` (``sentence_order_label`` or ``next_sentence_label``) of shape (B,).
    """
    longest = max(len(example["input_ids"]) for example in examples)
    length = longest if pad_to is None else pad_to
    if longest > length:
        raise InvalidValue(f"an example has {longest} tokens, more than pad_to={pad_to}")
    batch = {
        "input_ids": np.full((len(examples), length), pad_id, dtype=np.int64),       # (B, T)
        "attention_mask": np.zeros((len(examples), length), dtype=np.int64),         # (B, T)
        "token_type_ids": np.zeros((len(examples), length), dtype=np.int64),         # (B, T)
        "labels": np.full((len(examples), length), IGNORE_INDEX, dtype=np.int64),    # (B, T)
        label_name: np.array([example[label_name] for example in examples], dtype=np.int64),
    }
    for row, example in enumerate(examples):
        n = len(example["input_ids"])
        for key in ("input_ids", "token_type_ids", "labels"):
            batch[key][row, :n] = example[key]
        batch["attention_mask"][row, :n] = 1
    return batch


class PretrainingData:
    """MLM + SOP (or NSP) examples from a corpus, one epoch at a time::

        data = PretrainingData(train_documents, tokenizer, max_seq_length=128, task="sop")
        for batch in data.batches(batch_size=32, seed=epoch):
            batch["input_ids"]   # (B, T) int64, and attention_mask, token_type_ids, labels,
                                 # sentence_order_label (B,)

    ``documents``: lists of sentences (str), e.g. from ``default_corpus`` after
    ``split_documents``; each is encoded as its text ``" ".join(sentences)``, the form to train
    the tokenizer on. Each epoch (each seed) draws new segment boundaries, labels and masks
    (dynamic masking), so a small corpus yields many different examples.
    """

    def __init__(self, documents, tokenizer, max_seq_length=128, task="sop",
                 masked_lm_prob=MASKED_LM_PROB, max_ngram=3, short_seq_prob=0.1):
        if task not in TASKS:
            raise InvalidValue(f"task must be one of {sorted(TASKS)}, got {task!r}")
        if max_seq_length < 5:
            raise InvalidValue(f"max_seq_length must be at least 5 ([CLS] a [SEP] b [SEP]), "
                               f"got {max_seq_length}")
        if max_ngram < 1:
            raise InvalidValue(f"max_ngram must be at least 1, got {max_ngram}")
        # Every sentence keeps a space before it, the first of a document too (as SentencePiece
        # marks every word start with "▁"), so a segment decodes to " " + its text. Encoded
        # without it, a document's first token would differ from every other sentence start and
        # mark the one segment that can only come first: the SOP order after a swap, an NSP
        # negative whose random B starts its document.
        tokenized = ([tokenizer.encode(" " + sentence) for sentence in document if sentence]
                     for document in documents)
        self.documents = [document for document in tokenized if document]
        if not any(len(document) >= 2 for document in self.documents):
            raise InvalidValue("no document has two sentences: no segment pair can be made")
        if task == "nsp" and len(self.documents) < 2:
            raise InvalidValue("NSP takes negatives from another document: need at least 2")
        self.tokenizer = tokenizer
        self.max_seq_length, self.task, self.label_name = max_seq_length, task, TASKS[task]
        self.masked_lm_prob, self.max_ngram = masked_lm_prob, max_ngram
        self.short_seq_prob = short_seq_prob

    def _example(self, a, b, label, rng):
        t = self.tokenizer
        input_ids = np.array([t.cls_id, *a, t.sep_id, *b, t.sep_id], dtype=np.int64)
        token_type_ids = np.array([0] * (len(a) + 2) + [1] * (len(b) + 1), dtype=np.int64)
        maskable = input_ids >= len(SPECIAL_TOKENS)
        spans = select_spans(maskable, rng, self.masked_lm_prob, self.max_ngram)
        positions = [p for start, length in spans for p in range(start, start + length)]
        masked, labels = mask_tokens(input_ids, positions, rng, t.vocab_size, t.mask_id)
        return {"input_ids": masked, "token_type_ids": token_type_ids, "labels": labels,
                self.label_name: label}

    def examples(self, seed):
        """One epoch of examples (dicts of 1-D arrays plus the label), in a seeded random order.
        A pair made only of [UNK] (text in characters the tokenizer never saw) has nothing to
        predict and is skipped."""
        rng = np.random.default_rng(seed)
        examples = []
        for index in range(len(self.documents)):
            for a, b, label in segment_pairs(self.documents, index, rng, self.max_seq_length,
                                             self.task, self.short_seq_prob):
                if max(a + b) >= len(SPECIAL_TOKENS):
                    examples.append(self._example(a, b, label, rng))
        return [examples[i] for i in rng.permutation(len(examples))]

    def batches(self, batch_size, seed, pad_to=None):
        """Iterate over one epoch in batches (see ``collate``); the last one may be smaller."""
        examples = self.examples(seed)
        for start in range(0, len(examples), batch_size):
            yield collate(examples[start:start + batch_size], self.label_name,
                          self.tokenizer.pad_id, pad_to)
