"""A recursive token classifier whose depth per token is decided three ways (chapter 16): every
token takes all N_r passes through the shared block (the Recursive Transformer), each token halts
on its own (Adaptive Computation Time, ``nn.act``), or the recursion steps choose their tokens
(Mixture-of-Recursions with expert-choice routing, ``nn.mor``). Everything else is one model, so
the three differ in the depth rule alone::

    e = Σ_f E_f[ids_f]                       the field embeddings, as chapter 14's model
    H^1 = P(e)                               one unique prelude layer (as MoR's Middle-Cycle
                                             keeps the first layer unshared)
    H = the depth rule over f                f: one shared Pre-LN encoder layer
    logits = W LN(H)                         a Linear H -> num_labels at every token

The depth rules, f the same block in all three::

    "none"           H^{r+1} = f(H^r), r = 1 .. N_r, every token
    "act"            at most N_r steps s_{n+1} = f(s_n), each token halting on its own, output the
                     halting-weighted mix Σ w_n s_n; loss + τ · mean ponder time (``nn.act``)
    "expert-choice"  H^{r+1} = H^r + g f(H^r) for the top ⌊c_r T⌋ tokens of step r, g = α σ(θ_r·H^r)
                     (``nn.mor``); loss + λ · the router's auxiliary loss where λ > 0
"""
import dataclasses

from minishare import backend, functional as F, safeio
from minishare.errors import InvalidValue
from minishare.models.initialization import bert_init_
from minishare.models.looped import check_ids
from minishare.models.outputs import ModelOutput
from minishare.nn.act import AdaptiveComputationTime, check_epsilon
from minishare.nn.attention import check_heads
from minishare.nn.container import ModuleList
from minishare.nn.layers import Embedding, LayerNorm, Linear
from minishare.nn.module import Module
from minishare.nn.mor import MixtureOfRecursions, auxiliary_loss, check_alpha, check_capacities
from minishare.nn.transformer import check_activation, encoder
from minishare.sharing import Plan
from minishare.tensor import Tensor

ROUTINGS = ("none", "act", "expert-choice")


@dataclasses.dataclass
class RecursionConfig:
    """V = ``vocab_size`` ids per field, F = ``num_fields``, ``num_labels`` classes per token;
    N_r = ``num_recursions`` passes at most through the shared layer; ``routing`` one of
    ``ROUTINGS``. Expert-choice needs ``capacities`` (c_1 ≥ ... ≥ c_{N_r}, one per step), the
    others must leave it None, and it scales the router score by ``router_alpha`` (α) and adds
    ``router_aux_loss_weight`` (λ) times the router's auxiliary loss (``nn.mor.auxiliary_loss``) to
    the loss; ACT halts at 1 − ``act_epsilon`` and adds ``act_loss_weight`` (τ) times the mean
    ponder time to the loss."""
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
    num_recursions: int = 3
    routing: str = "none"
    capacities: object = None
    act_epsilon: float = 0.01
    act_loss_weight: float = 0.01
    router_alpha: float = 1.0
    router_aux_loss_weight: float = 0.0

    def __post_init__(self):
        name = type(self).__name__
        for field in ("vocab_size", "num_fields", "num_labels", "hidden_size", "num_attention_heads",
                      "intermediate_size", "num_recursions"):
            safeio.integer(getattr(self, field), f"{name}.{field}", high=1 << 24)
        safeio.integer(self.num_prelude_layers, f"{name}.num_prelude_layers", low=0, high=1 << 10)
        check_heads(self.hidden_size, self.num_attention_heads, name)
        check_activation(self.hidden_act, f"{name}.hidden_act")
        if not isinstance(self.routing, str) or self.routing not in ROUTINGS:
            raise InvalidValue(f"{name}.routing must be one of {', '.join(ROUTINGS)}, got {self.routing!r}")
        if self.routing == "expert-choice":
            self.capacities = check_capacities(self.capacities, f"{name}.capacities")
            if len(self.capacities) != self.num_recursions:
                raise InvalidValue(f"{name}.capacities: one per recursion, {self.num_recursions} of them, got "
                                   f"{len(self.capacities)}")
        elif self.capacities is not None:
            raise InvalidValue(f"{name}.capacities belong to routing='expert-choice', not {self.routing!r}")
        check_epsilon(self.act_epsilon, f"{name}.act_epsilon")
        check_alpha(self.router_alpha, f"{name}.router_alpha")
        for field in ("layer_norm_eps", "act_loss_weight", "initializer_range", "router_aux_loss_weight"):
            safeio.number(getattr(self, field), f"{name}.{field}", "be a finite number >= 0", lambda v: v >= 0)

    def to_dict(self):
        return dataclasses.asdict(self)


class RecursiveForTokenClassification(Module):
    """ids (B, T, F) -> logits (B, T, num_labels), with the depth rule of ``config.routing``.

    ``forward(input_ids, labels=None)`` returns ``ModelOutput`` with ``logits``, ``loss`` (mean
    cross-entropy over labels not -100, plus τ · mean ponder time with ACT), ``passes`` (B, T):
    how many times f ran on each token, and ``routing`` (``nn.mor.Routing``) or ``ponder``
    (``nn.act.Ponder``) for the adaptive rules."""

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, RecursionConfig):
            raise TypeError(f"RecursiveForTokenClassification needs a RecursionConfig, got {type(config).__name__}")
        c = self.config = config
        self.field_embeddings = ModuleList(Embedding(c.vocab_size, c.hidden_size) for _ in range(c.num_fields))

        def stack(n):        # n distinct Pre-LN encoder layers run once each
            return encoder(Plan.build("not-shared", n), c.hidden_size, c.num_attention_heads, c.intermediate_size,
                           hidden_act=c.hidden_act, norm_position="pre", eps=c.layer_norm_eps)
        self.prelude = stack(c.num_prelude_layers) if c.num_prelude_layers else None
        self.block = stack(1)                                                  # f, the shared layer
        self.act = AdaptiveComputationTime(c.hidden_size, c.act_epsilon) if c.routing == "act" else None
        self.mor = MixtureOfRecursions(c.hidden_size, c.capacities, c.router_alpha) \
            if c.routing == "expert-choice" else None
        self.final_norm = LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.classifier = Linear(c.hidden_size, c.num_labels)
        bert_init_(self, std=c.initializer_range)

    def embed(self, input_ids):
        """Σ_f E_f[ids[..., f]]: (B, T, F) -> (B, T, H)."""
        ids = check_ids(input_ids, self.config)
        return sum(table(ids[:, :, f]) for f, table in enumerate(self.field_embeddings))

    def forward(self, input_ids, labels=None):
        c = self.config
        h = self.embed(input_ids)                                              # (B, T, H)
        if self.prelude is not None:
            h = self.prelude(h)
        routing = ponder = None
        if c.routing == "none":
            for _ in range(c.num_recursions):
                h = self.block(h)
            passes = backend.xp.full(h.shape[:2], c.num_recursions, dtype=backend.xp.int64)
        elif c.routing == "act":
            h, ponder = self.act(h, lambda n, s: self.block(s), c.num_recursions)
            passes = ponder.n_updates
        else:
            h, routing = self.mor(h, lambda r, s: self.block(s))
            passes = routing.depth
        logits = self.classifier(self.final_norm(h))                            # (B, T, num_labels)
        loss = None
        if labels is not None:
            labels = labels if isinstance(labels, Tensor) else Tensor(labels)
            loss = F.cross_entropy(logits.reshape(-1, c.num_labels), labels.reshape(-1))
            if ponder is not None:
                loss = loss + c.act_loss_weight * ponder.ponder_time.mean()
            if routing is not None and c.router_aux_loss_weight > 0:
                loss = loss + c.router_aux_loss_weight * auxiliary_loss(routing)
        return ModelOutput(logits=logits, loss=loss, passes=passes, routing=routing, ponder=ponder)

