"""The byte budget: what a model costs to store.

Each distinct parameter tensor is counted once, by identity, as everywhere in minishare
(``Module.parameters()``): a layer shared by N positions, or an output layer tied to the input
embedding, is stored once, so sharing and tying pay. A tensor of n values costs

    float32: 4n bytes        float16: 2n bytes        int8: n bytes + 4 bytes a row

where int8 stores, for every row, one float32 scale (``quantize.int8_rows``). A row is a slice
along the last axis: a Linear weight (out, in) has one row per output, an embedding (V, E) one per
token, and a 1-D tensor (a bias, a LayerNorm gain) is one row, quantized like the rest. No other
byte is counted: shapes and the configuration are the declaration's, the tokenizer is the grader's
(rebuilt from the declared V on the training split).

A relaxed entry (``relaxation_rank``) stores its shared model and, at every position, the LoRA
factors of every Linear (``designs.lora_shapes``); a looped entry stores its one shared layer
whatever depth it runs at test time.

The count is taken on the model built shape-only (``nn.init.shape_only()``: the real tensors, no
memory), so an entry over its budget is refused before anything is trained.
"""
from minishare.errors import InvalidValue
from minishare.golf import designs
from minishare.golf.entry import PRECISIONS

SCALE_BYTES = 4        # one float32 scale per int8 row


def rows(shape):
    """The number of rows of a tensor: every axis but the last (a 0-d or 1-D tensor is one row)."""
    n = 1
    for size in shape[:-1]:
        n *= size
    return n


def tensor_bytes(shape, precision):
    """Stored bytes of one tensor of ``shape`` at ``precision``."""
    values = rows(shape) * (shape[-1] if shape else 1)
    scales = SCALE_BYTES * rows(shape) if precision == "int8" else 0
    return PRECISIONS[precision] * values + scales


def stored_bytes(model, precision):
    """Bytes of ``model`` stored at ``precision``, each distinct parameter tensor once."""
    if precision not in PRECISIONS:
        raise InvalidValue(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return sum(tensor_bytes(p.shape, precision) for p in model.parameters())


def entry_bytes(entry, vocab_size):
    """Stored bytes of the model ``entry`` declares, with the tokenizer's V, built shape-only."""
    model = designs.shared_model(entry, vocab_size)
    lora = designs.lora_shapes(model, entry.relaxation_rank) if entry.relaxation_rank else []
    return stored_bytes(model, entry.precision) + sum(tensor_bytes(s, entry.precision) for s in lora)


def check_budget(entry, vocab_size, budget_bytes):
    """The entry's stored bytes; ``InvalidValue`` with the count and the budget when over it."""
    count = entry_bytes(entry, vocab_size)
    if count > budget_bytes:
        raise InvalidValue(f"entry {entry.name!r} stores {count:,} bytes at {entry.precision}, over the "
                           f"budget of {budget_bytes:,} bytes; refused before training (share or tie "
                           "more, shrink E, H or the FFN, or store at a lower precision)")
    return count
