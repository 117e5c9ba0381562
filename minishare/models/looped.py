"""A looped Transformer that labels every token (Yang et al., 2023; Geiping et al., 2025): the
model of chapter 14, trained with a random number of iterations and evaluated at any.

Each token is F fields of ids (the pointer-forest task's "a>b" is the fields a and b); each field
has its own V × H table and a token's embedding is their sum. There is no position embedding: the
tasks of this chapter present a set of tokens in random order, and a model that cannot see
positions cannot learn a shortcut tied to them, nor fail on the longer inputs it is tested on.
"""
import dataclasses

from minishare import functional as F, safeio, sharing
from minishare.errors import InvalidValue
from minishare.models.initialization import bert_init_
from minishare.models.outputs import ModelOutput
from minishare.nn.attention import check_heads
from minishare.nn.container import ModuleList
from minishare.nn.layers import Embedding, Linear
from minishare.nn.looped import LoopedStack, check_injection, check_iterations
from minishare.nn.module import Module
from minishare.nn.transformer import check_activation
from minishare.tensor import Tensor, no_grad


@dataclasses.dataclass
class LoopedConfig:
    """V = ``vocab_size`` ids per field, F = ``num_fields``, ``num_labels`` classes per token; P, R, C
    = ``num_prelude_layers``, ``num_recurrent_layers``, ``num_coda_layers``. Training draws r with
    mean ``mean_iterations`` (``nn.looped.sample_iterations``) and backpropagates through the last
    ``backprop_iterations`` (None: all); evaluation runs ``mean_iterations`` unless told otherwise.
    A not-shared model of depth L is R = L run once (``mean_iterations=1``): the same code."""
    vocab_size: int = 32
    num_fields: int = 2
    num_labels: int = 32
    hidden_size: int = 64
    num_attention_heads: int = 2
    intermediate_size: int = 128
    hidden_act: str = "gelu"
    layer_norm_eps: float = 1e-5
    initializer_range: float = 0.02
    num_prelude_layers: int = 1
    num_recurrent_layers: int = 1
    num_coda_layers: int = 0
    injection: str = "add"
    mean_iterations: int = 4
    backprop_iterations: object = None      # None: backpropagate through every iteration

    def __post_init__(self):
        name = type(self).__name__
        for field in ("vocab_size", "num_fields", "num_labels", "hidden_size", "num_attention_heads",
                      "intermediate_size", "mean_iterations"):
            safeio.integer(getattr(self, field), f"{name}.{field}", high=1 << 24)
        check_heads(self.hidden_size, self.num_attention_heads, name)
        check_activation(self.hidden_act, f"{name}.hidden_act")
        check_injection(self.injection, f"{name}.injection")
        sharing.looped(self.num_prelude_layers, self.num_recurrent_layers, self.num_coda_layers,
                       self.mean_iterations)
        check_iterations(self.mean_iterations, self.backprop_iterations)
        safeio.number(self.layer_norm_eps, f"{name}.layer_norm_eps", "be a finite number > 0", lambda v: v > 0)
        safeio.number(self.initializer_range, f"{name}.initializer_range", "be a finite number >= 0",
                      lambda v: v >= 0)

    def plan(self, iterations=None):
        """The sharing plan of a call with r = ``iterations`` (default ``mean_iterations``)."""
        return sharing.looped_plan(self.num_prelude_layers, self.num_recurrent_layers, self.num_coda_layers,
                                   iterations or self.mean_iterations)

    def to_dict(self):
        return dataclasses.asdict(self)


class LoopedForTokenClassification(Module):
    """ids (B, T, F) -> logits (B, T, num_labels): the field embeddings summed, the looped stack
    (``nn.looped.LoopedStack``), a Linear H -> num_labels at every token.

    ``forward(input_ids, labels=None, iterations=None, backprop_iterations=None)``: r defaults to
    ``config.mean_iterations``, k to ``config.backprop_iterations`` in training mode and to r in
    evaluation (no graph is kept there anyway). ``loss`` is the mean cross-entropy over the tokens
    whose label is not -100. ``logits_by_iteration(input_ids, iterations)`` reads the answer after
    every iteration 1..r in one pass (the coda and the head applied to each state)."""

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, LoopedConfig):
            raise TypeError(f"LoopedForTokenClassification needs a LoopedConfig, got {type(config).__name__}")
        c = self.config = config
        self.field_embeddings = ModuleList(Embedding(c.vocab_size, c.hidden_size) for _ in range(c.num_fields))
        self.looped = LoopedStack(c.hidden_size, c.num_attention_heads, c.intermediate_size, c.num_prelude_layers,
                                  c.num_recurrent_layers, c.num_coda_layers, c.injection, c.hidden_act,
                                  c.layer_norm_eps)
        self.classifier = Linear(c.hidden_size, c.num_labels)
        bert_init_(self, std=c.initializer_range)

    def embed(self, input_ids):
        """Σ_f E_f[ids[..., f]]: (B, T, F) -> (B, T, H)."""
        ids = check_ids(input_ids, self.config)
        return sum(table(ids[:, :, f]) for f, table in enumerate(self.field_embeddings))

    def forward(self, input_ids, labels=None, iterations=None, backprop_iterations=None):
        k = backprop_iterations or (self.config.backprop_iterations if self.training else None)
        h = self.looped(self.embed(input_ids), iterations or self.config.mean_iterations, k)
        logits = self.classifier(h)                                               # (B, T, num_labels)
        loss = None
        if labels is not None:
            labels = labels if isinstance(labels, Tensor) else Tensor(labels)
            loss = F.cross_entropy(logits.reshape(-1, self.config.num_labels), labels.reshape(-1))
        return ModelOutput(logits=logits, loss=loss)

    def logits_by_iteration(self, input_ids, iterations):
        """[logits after 1 iteration, ..., after r]: each (B, T, num_labels). Runs without a graph."""
        with no_grad():
            _, states = self.looped(self.embed(input_ids), iterations, output_hidden_states=True)
            return [self.classifier(self.looped.read_out(s)) for s in states]


def check_ids(input_ids, config):
    """(B, T, F) integer ids, each field's in [0, V)."""
    ids = input_ids.data if isinstance(input_ids, Tensor) else input_ids
    if getattr(ids, "ndim", None) != 3 or ids.shape[2] != config.num_fields or ids.dtype.kind not in "iu":
        raise InvalidValue(f"input_ids must be integer ids of shape (B, T, {config.num_fields}) (one id per "
                           f"field), got {getattr(ids, 'dtype', type(ids).__name__)} of shape "
                           f"{getattr(ids, 'shape', None)}")
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= config.vocab_size):
        raise InvalidValue(f"input_ids must lie in [0, vocab_size={config.vocab_size})")
    return ids
