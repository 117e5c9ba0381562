"""How much each layer changes its input: ALBERT's Figure 1, measured.

Lan et al. (2019, Sec. 3.1, Figure 1) plot "the L2 distances and cosine similarity
(in terms of degree) of the input and output embedding of each layer for BERT-large and
ALBERT-large" and observe that with all parameters shared the transitions from layer to layer are
much smoother: they oscillate rather than converging to zero. The paper does not say how the values
are averaged, so minishare defines it here.

Definition. Let h_l (B, T, H) be the input of layer l = 1..N and h_{l+1} its output
(``hidden_states[l - 1]`` and ``hidden_states[l]`` of a model run with ``output_hidden_states``,
the embedding output first). For every token t:

    distance_l(t) = ‖h_{l+1}(t) − h_l(t)‖₂
    angle_l(t)    = arccos( h_l(t)·h_{l+1}(t) / (‖h_l(t)‖ ‖h_{l+1}(t)‖) )   in degrees

and the value plotted for layer l is the mean of distance_l(t) (of angle_l(t)) over every
non-padding token (``attention_mask == 1``) of every example of the given batches, each token
weighing the same. Padding positions are computed by the model but never counted.

The angle is evaluated as 2·arcsin(‖û − v̂‖ / 2), with û, v̂ the unit vectors of h_l(t) and
h_{l+1}(t): the same angle as arccos of the cosine, but accurate near 0°, where arccos loses half
the digits (cos θ ≈ 1 − θ²/2, so a rounding error ε in the cosine becomes √(2ε) in the angle).
A layer that changes nothing reads exactly 0°.
"""
import math

from minishare import backend, safeio
from minishare.errors import InvalidValue
from minishare.tensor import no_grad


def _encoder(model):
    """The AlbertModel inside ``model``: AlbertForPreTraining keeps it as ``.albert`` (the
    reference implementation's name); an AlbertModel is its own encoder. Calling the encoder
    alone skips the MLM head, whose V-wide logits Figure 1 does not need."""
    return getattr(model, "albert", model)


def _token_transitions(h_in, h_out):
    """Per-token distance and angle between two states. h_in, h_out (B, T, H) backend arrays ->
    (distance (B, T), angle in degrees (B, T)), computed in float64."""
    xp = backend.xp
    a, b = h_in.astype(xp.float64), h_out.astype(xp.float64)                # (B, T, H)
    distance = xp.sqrt(((b - a) ** 2).sum(axis=-1))                         # (B, T)
    tiny = 1e-300                                                           # a zero state stays finite
    u = a / xp.maximum(xp.sqrt((a * a).sum(axis=-1, keepdims=True)), tiny)  # (B, T, H), unit
    v = b / xp.maximum(xp.sqrt((b * b).sum(axis=-1, keepdims=True)), tiny)  # (B, T, H), unit
    chord = xp.sqrt(((u - v) ** 2).sum(axis=-1))                            # (B, T), in [0, 2]
    angle = 2 * xp.arcsin(xp.clip(chord / 2, 0.0, 1.0)) * (180 / math.pi)   # (B, T), degrees
    return distance, angle


def _states(model, batches):
    """Yield (hidden states: N + 1 arrays (B, T, H), the embedding output first; keep (B, T): 1.0
    for a real token, 0.0 for padding) for each batch, in eval mode without a graph; the model's
    mode is restored afterwards."""
    xp, encoder = backend.xp, _encoder(model)
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            for batch in batches:
                ids = batch["input_ids"]                                    # (B, T)
                mask = batch.get("attention_mask")
                out = encoder(ids, attention_mask=mask, token_type_ids=batch.get("token_type_ids"),
                              output_hidden_states=True)
                keep = (xp.ones(tuple(ids.shape)) if mask is None
                        else backend.asarray(mask).astype(xp.float64))      # (B, T), 1 = real token
                yield [h.data for h in out.hidden_states], keep
    finally:
        model.train(was_training)


def layer_transitions(model, batches):
    """ALBERT's Figure 1 for ``model`` (an AlbertModel or AlbertForPreTraining) on ``batches``.

    ``batches``: dicts with ``input_ids`` (B, T) and optionally ``attention_mask`` (B, T; 1 = real
    token, 0 = padding; all real if absent) and ``token_type_ids``, such as
    ``PretrainingTask.eval_sets["sop"]``; other keys (labels) are ignored.

    Returns ``{"l2": [N floats], "cosine_degrees": [N floats]}``: entry l - 1 is layer l's mean
    input-to-output L2 distance and mean angle in degrees over all non-padding tokens (see the
    module docstring for the definition). Runs in eval mode (no dropout) without recording a
    graph; the model's mode is restored afterwards.
    """
    sums_l2, sums_angle, n_tokens = None, None, 0
    for states, keep in _states(model, batches):
        if sums_l2 is None:
            sums_l2, sums_angle = [0.0] * (len(states) - 1), [0.0] * (len(states) - 1)
        for l in range(len(states) - 1):
            distance, angle = _token_transitions(states[l], states[l + 1])   # (B, T) each
            sums_l2[l] += float((distance * keep).sum())
            sums_angle[l] += float((angle * keep).sum())
        n_tokens += int(keep.sum())
    if not n_tokens:
        raise InvalidValue("layer_transitions needs at least one non-padding token in the batches")
    return {"l2": [s / n_tokens for s in sums_l2],
            "cosine_degrees": [s / n_tokens for s in sums_angle]}


def state_norms(model, batches):
    """Mean ‖h_l‖₂ over the non-padding tokens of ``batches`` for l = 0..N (the embedding output
    first): [N + 1 floats]. The scale Figure 1's distances live on. With Post-LN every layer output
    leaves a LayerNorm: at initialization (gain 1, bias 0) its norm is √H for every token, whatever
    the layer did, while the embedding output of a factorized model (E < H) is a projection of an
    E-wide LayerNorm output, whose norm is set by the projection's initialization instead. A
    distance between h_0 and h_1 is therefore partly a difference of these two norms."""
    xp = backend.xp
    sums, n_tokens = None, 0
    for states, keep in _states(model, batches):
        norms = [xp.sqrt((h.astype(xp.float64) ** 2).sum(axis=-1)) for h in states]   # N + 1 of (B, T)
        sums = [0.0] * len(norms) if sums is None else sums
        for l, norm in enumerate(norms):
            sums[l] += float((norm * keep).sum())
        n_tokens += int(keep.sum())
    if not n_tokens:
        raise InvalidValue("state_norms needs at least one non-padding token in the batches")
    return [s / n_tokens for s in sums]


# --- Figure 1 for a pretrained model on disk ------------------------------------------------------
RANDOM_IDS_NOTE = ("no --input-ids{why}: measuring on {B} sequences of {T} token ids drawn uniformly "
                   "from the model's vocabulary (V = {V}). The paper's Figure 1 used real text: these "
                   "numbers describe the model on noise. For real text, tokenize it with the model's own "
                   "tokenizer and pass the ids with --input-ids (minishare's BPE is not its vocabulary).")


def text_passages(n, words):
    """``n`` passages of about ``words`` words each, consecutive sentences of the built-in English
    corpus (``minishare.data.corpus.default_corpus``), one document after another: real text with
    nothing downloaded."""
    from minishare.data.corpus import default_corpus
    passages, current = [], []
    for document in default_corpus():
        for sentence in document:
            current.append(sentence)
            if sum(len(s.split()) for s in current) >= words:
                passages.append(" ".join(current))
                current = []
                if len(passages) == n:
                    return passages
        current = []                        # a passage never spans two documents
    return passages


def tokenized_text(tokenizer_path, vocab_size, batch_size, T):
    """Ids and attention mask (batch_size, T) of ``text_passages`` encoded by the model's own
    tokenizer, ``tokenizer.json`` as Hugging Face's ``tokenizers`` writes it (its post-processor
    adds [CLS] and [SEP]); None when the ``tokenizers`` package is not installed."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    import numpy   # host-side ids
    safeio.read_bytes(tokenizer_path, safeio.MAX_JSON_BYTES)     # a regular file of bounded size
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_length=T)
    tokenizer.enable_padding(length=T)
    encodings = tokenizer.encode_batch(text_passages(batch_size, words=T))
    ids = numpy.array([e.ids for e in encodings], dtype=numpy.int64)               # (B, T)
    mask = numpy.array([e.attention_mask for e in encodings], dtype=numpy.int64)   # (B, T)
    if ids.size and ids.max() >= vocab_size:
        raise InvalidValue(f"{tokenizer_path} gives token id {int(ids.max())}, but the model's vocabulary "
                           f"has V = {vocab_size}: the tokenizer is not this model's")
    return ids, mask


def load_input_ids(path, vocab_size, max_positions):
    """Token ids from ``path``: a ``.npy`` integer array (B, T) or (T,), or a text file with one
    sequence of whitespace-separated ids per line (shorter lines are padded and masked). The ids
    must come from the model's own tokenizer. Every length is checked against
    ``max_positions`` before an array of it is made (an .npy from its header, a text line from
    its count of ids). -> (input_ids (B, T), attention_mask (B, T)), host NumPy arrays."""
    import numpy   # host-side file reading
    size = safeio.regular_file(path)
    if str(path).endswith(".npy"):
        with open(path, "rb") as f:
            try:
                version = numpy.lib.format.read_magic(f)
                shape, _, dtype = (numpy.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else numpy.lib.format.read_array_header_2_0)(f)
            except ValueError as error:
                raise InvalidValue(f"{path}: not an .npy array file, as its name says ({error})") from None
        if len(shape) not in (1, 2) or dtype.kind not in "iu":
            raise InvalidValue(f"{path}: expected integer ids of shape (B, T) or (T,), got {dtype} {shape}")
        _check_length(path, shape[-1], max_positions)
        if math.prod(shape) * dtype.itemsize > size:
            raise InvalidValue(f"{path}: its header declares {dtype} {shape}, more than the file's "
                               f"{size:,} bytes hold (truncated file)")
        ids = numpy.load(path, allow_pickle=False)
        ids = ids[None] if ids.ndim == 1 else ids
        mask = numpy.ones(ids.shape, dtype=numpy.int64)
    else:
        rows = []
        with open(path, encoding="utf-8") as f:
            try:
                for number, line in enumerate(f, start=1):
                    words = line.split()
                    if words:
                        _check_length(f"{path}, line {number}", len(words), max_positions)
                        rows.append(_ids_of(words, f"{path}, line {number}", vocab_size))
            except UnicodeDecodeError as error:
                raise InvalidValue(f"{path}: not UTF-8 text ({error.reason}); give a text file of ids, "
                                   "one sequence a line, or a .npy array") from None
        if not rows:
            raise InvalidValue(f"{path}: no token ids")
        T = max(map(len, rows))
        ids = numpy.zeros((len(rows), T), dtype=numpy.int64)
        mask = numpy.zeros((len(rows), T), dtype=numpy.int64)
        for i, row in enumerate(rows):
            ids[i, :len(row)], mask[i, :len(row)] = row, 1
    if ids.size == 0 or ids.min() < 0 or ids.max() >= vocab_size:
        raise InvalidValue(f"{path}: ids must lie in 0..{vocab_size - 1} (the model's vocabulary), got "
                           f"{ids.min() if ids.size else 'none'}..{ids.max() if ids.size else ''}")
    return ids.astype(numpy.int64), mask


def _check_length(where, length, max_positions):
    if length > max_positions:
        raise InvalidValue(f"{where}: sequences of {length:,} tokens, more than the model's "
                           f"max_position_embeddings = {max_positions}")


def _ids_of(words, where, vocab_size):
    """The ids of one text line, each checked as a Python int (no C long to overflow)."""
    if not all(word.isascii() and word.isdigit() for word in words):
        bad = next(word for word in words if not (word.isascii() and word.isdigit()))
        raise InvalidValue(f"{where}: {bad[:20]!r} is not a token id (a non-negative integer)")
    ids = [int(word) if len(word) <= 20 else vocab_size for word in words]   # (longer: out of range)
    if max(ids) >= vocab_size:
        bad = next(word for word, i in zip(words, ids) if i >= vocab_size)
        raise InvalidValue(f"{where}: ids must lie in 0..{vocab_size - 1} (the model's vocabulary), got "
                           f"{bad if len(bad) <= 20 else bad[:20] + '...'}")
    return ids


def pretrained_figure(directory, out, input_ids=None, batch_size=8, seq_len=128, seed=0, say=print):
    """ALBERT's Figure 1 for the model in ``directory`` (Hugging Face's layout, ALBERT or BERT):
    its encoder is loaded with ``AlbertModel.from_pretrained`` (heads ignored), measured by
    ``layer_transitions`` on the ids of ``input_ids`` (see ``load_input_ids``); without them, on
    passages of the built-in English corpus encoded by the folder's own ``tokenizer.json``
    (``tokenized_text``, when the folder has one and ``tokenizers`` is installed); otherwise on
    random ids from the model's vocabulary (``say`` prints a note saying so). Written to
    ``out/layerwise.json`` and ``out/layerwise.png`` / ``.svg``. Returns the JSON record."""
    import json
    import os

    import numpy   # host-side random ids
    from minishare.analysis import layerwise_figure
    from minishare.analysis.figure_style import save_figure
    from minishare.files import atomic_write
    from minishare.models import AlbertModel
    model = AlbertModel.from_pretrained(directory)
    config = model.config
    T = min(seq_len, config.max_position_embeddings)
    tokenizer_path = os.path.join(directory, "tokenizer.json")
    text = None
    if input_ids is None and os.path.exists(tokenizer_path):
        text = tokenized_text(tokenizer_path, config.vocab_size, batch_size, T)
    if input_ids is not None:
        ids, mask = load_input_ids(input_ids, config.vocab_size, config.max_position_embeddings)
        source = os.fspath(input_ids)
    elif text is not None:
        (ids, mask), source = text, "the built-in English corpus (its tokenizer.json)"
        say(f"no --input-ids: measuring on {len(ids)} passages of the built-in English corpus, "
            f"encoded by {tokenizer_path}")
    else:
        ids = numpy.random.default_rng(seed).integers(0, config.vocab_size, (batch_size, T))
        mask, source = numpy.ones_like(ids), "random ids"
        why = (" (the folder's tokenizer.json needs the tokenizers package: pip install tokenizers)"
               if os.path.exists(tokenizer_path) else " and no tokenizer.json in the folder")
        say(RANDOM_IDS_NOTE.format(why=why, B=batch_size, T=T, V=config.vocab_size))
    result = layer_transitions(model, [{"input_ids": backend.asarray(ids), "attention_mask": backend.asarray(mask)}])
    if not all(math.isfinite(v) for v in result["l2"] + result["cosine_degrees"]):
        raise FloatingPointError(f"{directory}: the model's hidden states are not finite on these ids "
                                 "(its weights overflow); nothing written")
    model_type = safeio.load_json(os.path.join(directory, "config.json"))["model_type"]
    record = {"pretrained": os.fspath(directory), "model_type": model_type,
              "layers": config.num_hidden_layers, "hidden_size": config.hidden_size,
              "embedding_size": config.embedding_size, "plan": str(config.plan()),
              "input": source,
              "tokens": int(mask.sum()), **result}
    os.makedirs(out, exist_ok=True)
    with atomic_write(os.path.join(out, "layerwise.json")) as f:
        json.dump(record, f, indent=1)
    name = f"{os.path.basename(os.path.normpath(directory))} ({model_type})"
    title = (f"{name}: N = {config.num_hidden_layers}, H = {config.hidden_size}, E = {config.embedding_size}, "
             f"plan {config.plan().name}; {record['tokens']} tokens of {record['input']}")
    save_figure(layerwise_figure.plot_layer_transitions({name: result}, title=title), os.path.join(out, "layerwise"))
    return record
