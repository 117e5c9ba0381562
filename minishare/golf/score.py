"""The score: held-out bits per byte of the stored model.

    bits per byte = Σ_t −ln p(x_t | x_<t)  /  (ln 2 · the number of UTF-8 bytes of the held-out text)

Dividing by bytes rather than tokens makes entries comparable whatever their vocabulary: a larger V
has fewer, harder tokens per byte. For the bytes to be well defined, the tokens scored must stand
for the text exactly once. Here the held-out text is each document's text followed by a newline,
and the token stream is

    [SEP] doc₁ [SEP] doc₂ [SEP] ... docₙ [SEP]

where each document is encoded losslessly (the BPE tokenizer's decode gives its text back; a
document with a character the tokenizer never saw in training is refused, since its [UNK] would
stand for bytes the model never predicts) and each [SEP] after a document stands for its newline.
Every token after the first is a target, predicted once from what precedes it; the first [SEP] is
context only, so the first word of the text is predicted too. The targets are scored in windows of
``seq_len`` tokens laid end to end (the last one shorter), each starting its context afresh: no
target is scored twice or skipped.
"""
import math

import numpy   # the score is summed on the host in float64, whatever the model's dtype

from minishare import backend
from minishare.errors import InvalidValue
from minishare.golf.splits import document_text
from minishare.tensor import no_grad


def held_out_stream(documents, tokenizer):
    """(token ids as above, the text they stand for)."""
    ids, text = [tokenizer.sep_id], []
    for i, document in enumerate(documents):
        t = document_text(document)
        encoded = tokenizer.encode(t)
        if tokenizer.decode(encoded) != t:
            raise InvalidValue(f"held-out document {i} has characters the tokenizer never saw in training: "
                               "its bits per byte would not be defined")
        ids += encoded + [tokenizer.sep_id]
        text.append(t + "\n")
    return numpy.array(ids, dtype=numpy.int64), "".join(text)


def windows(ids, seq_len):
    """(inputs, targets) pairs of every window, end to end: inputs ids[s : s+T], targets ids[s+1 :
    s+T+1], for s = 0, T, 2T, ...; the targets together are ids[1:], each once."""
    n = len(ids) - 1
    return [(ids[s:min(s + seq_len, n)], ids[s + 1:min(s + seq_len, n) + 1]) for s in range(0, n, seq_len)]


def nats(model, inputs, targets):
    """Σ −ln p(target | context) over a batch of windows (B, T), in float64 on the host."""
    logits = backend.to_numpy(model(inputs).logits.data).astype(numpy.float64)     # (B, T, V)
    top = logits.max(axis=-1, keepdims=True)
    log_z = numpy.log(numpy.exp(logits - top).sum(axis=-1)) + top[..., 0]           # (B, T)
    picked = numpy.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]     # (B, T)
    return float((log_z - picked).sum())


def bits_per_byte(model, documents, tokenizer, seq_len, batch_size=32):
    """{"bits_per_byte", "nats", "tokens", "bytes"} of ``model`` on ``documents``."""
    ids, text = held_out_stream(documents, tokenizer)
    pairs = windows(ids, seq_len)
    total, model_was_training = 0.0, model.training
    model.eval()
    with no_grad():
        for length in sorted({len(x) for x, _ in pairs}, reverse=True):   # windows of one length batch
            same = [(x, y) for x, y in pairs if len(x) == length]
            for b in range(0, len(same), batch_size):
                chunk = same[b:b + batch_size]
                total += nats(model, numpy.stack([x for x, _ in chunk]), numpy.stack([y for _, y in chunk]))
    model.train(model_was_training)
    n_bytes = len(text.encode("utf-8"))
    return {"bits_per_byte": total / (math.log(2) * n_bytes), "nats": total, "tokens": len(ids) - 1,
            "bytes": n_bytes}
