"""The encoder-decoder (translation-like tasks, Takase & Kiyono's setting) and the decoder-only
language model. Both tie the output projection to the input word embeddings by default; with a
factorized embedding (E < H) the output first maps H -> E, then scores against the V × E table."""
from minishare import backend, functional as F
from minishare.models.config import TransformerConfig
from minishare.models.embeddings import TokenEmbeddings
from minishare.models.initialization import bert_init_
from minishare.models.inputs import check_ids, check_like
from minishare.models.outputs import ModelOutput
from minishare.nn import Linear, Module, causal_mask, decoder, encoder, padding_mask
from minishare.tensor import Tensor, no_grad


class OutputProjection(Module):
    """h (B, T, H) -> logits (B, T, V): [H -> E when factorized], then the V × E matrix, which is
    the word-embedding table itself when tied."""

    def __init__(self, config, word_embeddings):
        super().__init__()
        E, H = config.embedding_size, config.hidden_size
        self.dense = Linear(H, E, bias=False) if E != H else None
        self.decoder = Linear(E, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.decoder.weight = word_embeddings.weight               # (V, E), shared

    def forward(self, h):
        return self.decoder(h if self.dense is None else self.dense(h))


def _stack_args(config):
    return dict(hidden_size=config.hidden_size, num_heads=config.num_attention_heads,
                intermediate_size=config.intermediate_size, hidden_act=config.hidden_act,
                norm_position=config.norm_position, hidden_dropout=config.hidden_dropout_prob,
                attention_dropout=config.attention_probs_dropout_prob, eps=config.layer_norm_eps,
                timestep=config.timestep_signal, act=config.act, act_epsilon=config.act_epsilon)


def _mean_ponder(ponder, keep):
    """Mean ponder time N + R over the positions ``keep`` (B, T) marks as real tokens (all when
    None); None for a stack without ACT."""
    if ponder is None:
        return None
    if keep is None:
        return ponder.ponder_time.mean()
    keep = keep.data if isinstance(keep, Tensor) else backend.asarray(keep)        # (B, T)
    keep = keep.astype(ponder.ponder_time.dtype)
    return (ponder.ponder_time * keep).sum() / backend.xp.maximum(keep.sum(), 1.0)   # no host sync


def _loss(logits, labels):
    """Mean cross-entropy over positions whose label is not -100."""
    labels = labels if isinstance(labels, Tensor) else Tensor(labels)
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1))


def _check_pair(input_ids, decoder_input_ids, attention_mask):
    """Source (B, S) and target (B, T) ids of one batch: the same B."""
    source = check_ids(input_ids)
    check_like(attention_mask, source, "attention_mask")
    target = check_ids(decoder_input_ids, "decoder_input_ids")
    if source[0] != target[0]:
        raise ValueError(f"decoder_input_ids has batch size {target[0]} but input_ids has {source[0]}; "
                         "source and target must come from the same batch")


class EncoderDecoderModel(Module):
    """Source ids (B, S) and target-input ids (B, T) -> logits (B, T, V). One vocabulary and one
    embedding table for source, target and output, as in Takase & Kiyono's WMT setup. The encoder
    and the decoder each follow the configured plan (the paper applies the same assignment to both)."""

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"EncoderDecoderModel needs a TransformerConfig, got {type(config).__name__}")
        self.config = config
        self.embeddings = TokenEmbeddings(config)
        self.encoder = encoder(config.plan(config.num_hidden_layers), **_stack_args(config))
        self.decoder = decoder(config.plan(config.num_decoder_layers), **_stack_args(config))
        self.lm_head = OutputProjection(config, self.embeddings.word_embeddings)
        bert_init_(self, std=config.initializer_range)

    def encode(self, input_ids, attention_mask=None):
        """-> memory (B, S, H), its attention mask, and the encoder's ``Ponder`` (None without ACT)."""
        mask = None if attention_mask is None else padding_mask(attention_mask)
        memory, ponder = self.encoder(self.embeddings(input_ids), {"attention": {"mask": mask}, "ffn": {}},
                                      output_ponder=True)
        return memory, mask, ponder

    def decode(self, decoder_input_ids, memory, memory_mask):
        """-> logits (B, T, V) and the decoder's ``Ponder`` (None without ACT)."""
        T = decoder_input_ids.shape[1]
        inputs = {"attention": {"mask": causal_mask(T)},
                  "cross_attention": {"mask": memory_mask, "context": memory}, "ffn": {}}
        h, ponder = self.decoder(self.embeddings(decoder_input_ids), inputs, output_ponder=True)
        return self.lm_head(h), ponder                                   # (B, T, V)

    def forward(self, input_ids, decoder_input_ids, attention_mask=None, labels=None):
        """With ACT, ``loss`` = cross-entropy + τ (mean ponder time of the source tokens + mean
        ponder time of the target positions that have a label), and the output carries
        ``encoder_ponder`` and ``decoder_ponder`` (``Ponder`` records) and ``ponder_cost``."""
        _check_pair(input_ids, decoder_input_ids, attention_mask)
        check_like(labels, check_ids(decoder_input_ids, "decoder_input_ids"), "labels", "decoder_input_ids")
        memory, mask, encoder_ponder = self.encode(input_ids, attention_mask)
        logits, decoder_ponder = self.decode(decoder_input_ids, memory, mask)
        loss = ponder_cost = None
        if labels is not None:
            labels = labels if isinstance(labels, Tensor) else Tensor(labels)
            loss = _loss(logits, labels)
        if self.config.act:
            targets = None if labels is None else labels.data != -100
            ponder_cost = _mean_ponder(encoder_ponder, attention_mask) + _mean_ponder(decoder_ponder, targets)
            loss = None if loss is None else loss + self.config.act_loss_weight * ponder_cost
        return ModelOutput(logits=logits, loss=loss, ponder_cost=ponder_cost,
                           encoder_ponder=encoder_ponder, decoder_ponder=decoder_ponder)

    def generate(self, input_ids, bos_id, eos_id, max_length, attention_mask=None):
        """Greedy decoding: start from BOS, append the most likely token until every sequence has
        produced EOS or ``max_length`` tokens. -> (B, ≤ max_length) ids after BOS (a host array)."""
        check_like(attention_mask, check_ids(input_ids), "attention_mask")
        xp = backend.xp
        with no_grad():
            memory, mask, _ = self.encode(input_ids, attention_mask)
            B = memory.shape[0]
            out = xp.full((B, 1), bos_id, dtype=xp.int64)
            done = xp.zeros(B, dtype=bool)
            for _ in range(max_length):
                next_ids = self.decode(out, memory, mask)[0].data[:, -1].argmax(axis=-1)   # (B,)
                next_ids = xp.where(done, eos_id, next_ids)
                out = xp.concatenate([out, next_ids[:, None]], axis=1)
                done = done | (next_ids == eos_id)
                if bool(done.all()):
                    break
        return backend.to_numpy(out[:, 1:])


class DecoderLM(Module):
    """A decoder-only (GPT-style) language model: ids (B, T) -> logits (B, T, V) for the next
    token. With ``labels`` (usually the input ids themselves) the loss compares the logits at t
    with the label at t + 1, as Hugging Face's causal LMs do."""

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"DecoderLM needs a TransformerConfig, got {type(config).__name__}")
        self.config = config
        self.embeddings = TokenEmbeddings(config)
        self.decoder = decoder(config.plan(config.num_hidden_layers), cross_attention=False,
                               **_stack_args(config))
        self.lm_head = OutputProjection(config, self.embeddings.word_embeddings)
        bert_init_(self, std=config.initializer_range)

    def forward(self, input_ids, labels=None):
        """With ACT, ``loss`` = cross-entropy + τ · the mean ponder time over all positions, and the
        output carries ``decoder_ponder`` (a ``Ponder`` record) and ``ponder_cost``."""
        check_like(labels, check_ids(input_ids), "labels")
        T = input_ids.shape[1]
        h, ponder = self.decoder(self.embeddings(input_ids), {"attention": {"mask": causal_mask(T)}, "ffn": {}},
                                 output_ponder=True)
        logits = self.lm_head(h)                                         # (B, T, V)
        loss = None
        if labels is not None:
            labels = labels if isinstance(labels, Tensor) else Tensor(labels)
            loss = _loss(logits[:, :-1], labels[:, 1:])
        ponder_cost = _mean_ponder(ponder, None)
        if ponder_cost is not None and loss is not None:
            loss = loss + self.config.act_loss_weight * ponder_cost
        return ModelOutput(logits=logits, loss=loss, ponder_cost=ponder_cost, decoder_ponder=ponder)
