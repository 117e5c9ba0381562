"""ALBERT (Lan et al., 2019) and BERT (Devlin et al., 2019, = ALBERT with E = H, nothing shared).

    AlbertModel            embeddings -> encoder (N positions, sets chosen by the plan) -> pooler
    AlbertForPreTraining   + the MLM head (tied to the word embeddings) and the sentence-order head

The forward signatures follow the reference implementation's conventions (Hugging Face's
``AlbertModel``): ``input_ids``, ``attention_mask``, ``token_type_ids``; labels use -100 for
positions without an MLM target.
"""
from minishare import functional as F
from minishare.models.config import AlbertConfig
from minishare.models.embeddings import AlbertEmbeddings
from minishare.models.hub import HubMixin
from minishare.models.initialization import bert_init_
from minishare.models.inputs import check_batch, check_ids, check_like, check_positions
from minishare.models.outputs import ModelOutput
from minishare.nn import Dropout, LayerNorm, Linear, Module, encoder, padding_mask
from minishare.nn.transformer import ACTIVATIONS
from minishare.tensor import Tensor


class AlbertModel(HubMixin, Module):
    """The encoder with its pooler. input_ids (B, T) -> last_hidden_state (B, T, H),
    pooler_output (B, H) = tanh(W h_[CLS] + b), and with ``output_hidden_states`` the N + 1 states
    between layers (the embedding output first). ``save_pretrained`` / ``from_pretrained``:
    Hugging Face's layout (``minishare.models.hub``)."""

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, AlbertConfig):
            raise TypeError(f"AlbertModel needs an AlbertConfig, got {type(config).__name__}")
        self.config = config
        self.embeddings = AlbertEmbeddings(config)
        self.encoder = encoder(config.plan(), config.hidden_size, config.num_attention_heads,
                               config.intermediate_size, config.hidden_act, config.norm_position,
                               config.hidden_dropout_prob, config.attention_probs_dropout_prob,
                               config.layer_norm_eps, timestep=config.timestep_signal)
        self.pooler = Linear(config.hidden_size, config.hidden_size)
        bert_init_(self, std=config.initializer_range)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, output_hidden_states=False):
        shape = check_ids(input_ids)                                         # (B, T)
        check_like(attention_mask, shape, "attention_mask")
        check_like(token_type_ids, shape, "token_type_ids")
        x = self.embeddings(input_ids, token_type_ids)                       # (B, T, H)
        mask = None if attention_mask is None else padding_mask(attention_mask)  # (B, 1, 1, T)
        x, states = self.encoder(x, {"attention": {"mask": mask}, "ffn": {}}, output_hidden_states=True)
        pooled = F.tanh(self.pooler(x[:, 0]))                                # (B, H)
        return ModelOutput(last_hidden_state=x, pooler_output=pooled,
                           hidden_states=states if output_hidden_states else None)


class AlbertMLMHead(Module):
    """h (B, T, H) -> dense H -> E, activation, LayerNorm over E -> scores against the V × E word
    embeddings plus a bias of size V -> logits (B, T, V). With tying, ``decoder.weight`` *is* the
    word-embedding matrix: one tensor used twice (Press & Wolf, 2017)."""

    def __init__(self, config, word_embeddings):
        super().__init__()
        self.hidden_act = config.hidden_act
        self.dense = Linear(config.hidden_size, config.embedding_size)
        self.LayerNorm = LayerNorm(config.embedding_size, eps=config.layer_norm_eps)
        self.decoder = Linear(config.embedding_size, config.vocab_size)
        if config.tie_word_embeddings:
            self.decoder.weight = word_embeddings.weight                     # (V, E), shared

    def forward(self, h):
        return self.decoder(self.LayerNorm(ACTIVATIONS[self.hidden_act](self.dense(h))))


class AlbertForPreTraining(HubMixin, Module):
    """ALBERT with its two pre-training heads. ``loss`` = MLM cross-entropy (over positions whose
    label is not -100) + sentence-order cross-entropy. Pass SOP labels (0 = in order, 1 = swapped)
    or NSP labels (0 = B follows A, 1 = B is random) as ``sentence_order_label``: the same binary
    head on the pooled [CLS] state serves both tasks. ``save_pretrained(DIR)`` writes Hugging
    Face's ``AlbertForPreTraining`` layout, ``from_pretrained(DIR)`` reads it (``minishare.models.hub``).

    ``prediction_logits`` are (B, T, V), scores at every position, as in Hugging Face's model.
    Training needs them only at the masked positions, about 15% of them, so pass those as
    ``mlm_positions`` and the MLM head runs there alone, as in ALBERT's reference code, which
    gathers the hidden states at its ``masked_lm_positions`` before the head (Lan et al., 2019;
    Devlin et al., 2019): ``mlm_positions`` (P,) integers, the flat indices b·T + t of the chosen
    positions in increasing order, e.g. ``numpy.flatnonzero(labels != -100)``; then
    ``prediction_logits`` is (P, V), row p scoring position ``mlm_positions[p]``. With ``labels``
    they must be exactly the labelled positions, so the loss is the same number either way. The
    positions are an input (computed on the host with the batch) because finding them in the
    labels on a GPU would make the host wait for the device: their count depends on the data."""
    hub_heads = True

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.albert = AlbertModel(config)
        self.predictions = AlbertMLMHead(config, self.albert.embeddings.word_embeddings)
        self.dropout = Dropout(config.hidden_dropout_prob)
        self.sop_classifier = Linear(config.hidden_size, 2)
        bert_init_(self, std=config.initializer_range)   # (re-draws the encoder: simple, once)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None,
                sentence_order_label=None, output_hidden_states=False, mlm_positions=None):
        shape = check_ids(input_ids)                                         # (B, T)
        check_like(labels, shape, "labels")
        check_batch(sentence_order_label, shape[0], "sentence_order_label")
        out = self.albert(input_ids, attention_mask, token_type_ids, output_hidden_states)
        h, targets = out.last_hidden_state, None                             # (B, T, H)
        if labels is not None:
            targets = _ids(labels).reshape(-1)                               # (B·T,)
        if mlm_positions is not None:
            positions = check_positions(mlm_positions, shape, targets)       # (P,)
            h = h.reshape(-1, h.shape[-1])[positions]                        # (P, H)
            targets = None if targets is None else targets[positions]        # (P,)
        logits = self.predictions(h)                                         # (B, T, V) or (P, V)
        sop_logits = self.sop_classifier(self.dropout(out.pooler_output))    # (B, 2)
        mlm_loss = sop_loss = loss = None
        if labels is not None:
            V = logits.shape[-1]
            mlm_loss = F.cross_entropy(logits.reshape(-1, V), targets)
            loss = mlm_loss
        if sentence_order_label is not None:
            sop_loss = F.cross_entropy(sop_logits, _ids(sentence_order_label).reshape(-1))
            loss = sop_loss if loss is None else loss + sop_loss
        return ModelOutput(loss=loss, mlm_loss=mlm_loss, sop_loss=sop_loss, prediction_logits=logits,
                           sop_logits=sop_logits, hidden_states=out.hidden_states)


def _ids(x):
    """Labels as a Tensor (they may arrive as arrays)."""
    return x if isinstance(x, Tensor) else Tensor(x)
