"""Model configurations, with the field names of the reference ALBERT configuration
(``albert_config.json`` of google-research/albert and Hugging Face's ``AlbertConfig``) plus the
sharing fields this course adds."""
import dataclasses

from minishare import safeio, sharing
from minishare.errors import InvalidValue, MinishareError
from minishare.nn.act import check_epsilon
from minishare.nn.attention import check_heads
from minishare.nn.transformer import check_activation, check_norm_position

# V, E, H, the FFN width, positions: 16,777,216 is beyond any model of this course, and bounds what
# a configuration read from an edited file can ask to build
MAX_SIZE = 1 << 24


@dataclasses.dataclass
class AlbertConfig:
    """An ALBERT (or BERT, when E = H and nothing is shared) encoder.

    V = vocab_size, E = embedding_size, H = hidden_size, N = num_hidden_layers, M = num_unique_layers.
    ``sharing`` is a strategy of ``minishare.sharing`` ("all-shared", "not-shared",
    "shared-attention", "shared-ffn", "sequence", "cycle", "cycle-rev", "cycle-rev-code",
    "universal") or an explicit schedule; ``num_unique_layers`` is M for the Takase & Kiyono
    strategies. ``norm_position`` is "post" (BERT, ALBERT) or "pre".

    ``embedding_projection``: whether the embeddings are projected E -> H by a Linear
    (``embedding_hidden_mapping_in``). None (the default) projects only when E != H, as Google's
    reference code does; True keeps the projection when E = H, as Hugging Face's ``AlbertModel``
    always has one (a checkpoint from it loads with its trained H × H projection kept).
    """
    vocab_size: int = 30000
    embedding_size: int = 128
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu_new"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    initializer_range: float = 0.02
    sharing: object = "all-shared"
    num_unique_layers: object = None
    norm_position: str = "post"
    timestep_signal: bool = False
    tie_word_embeddings: bool = True
    embedding_projection: object = None    # None: only when E != H (Google's reference code)

    def __post_init__(self):
        validate(self)

    @property
    def has_embedding_projection(self):
        """True when the embeddings go through the E -> H Linear (see ``embedding_projection``)."""
        if self.embedding_projection is None:
            return self.embedding_size != self.hidden_size
        return self.embedding_projection

    def plan(self):
        """The sharing plan of the encoder's N positions."""
        return sharing.Plan.build(self.sharing, self.num_hidden_layers, self.num_unique_layers)

    @classmethod
    def from_preset(cls, name, **overrides):
        """A named configuration (``minishare.models.presets.PRESETS``) with fields overridden."""
        from minishare.models.presets import PRESETS
        if name not in PRESETS:
            raise InvalidValue(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")
        return cls(**{**PRESETS[name], **overrides})

    def to_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class TransformerConfig:
    """An encoder-decoder (translation-like tasks) or a decoder-only language model with sinusoidal
    positions (Vaswani et al., 2017), as in Takase & Kiyono's experiments. ``num_hidden_layers`` is
    N for the encoder (and the decoder-only LM); ``num_decoder_layers`` defaults to N. The same
    sharing plan shape is applied to encoder and decoder, as in the paper.

    The Universal Transformer (Dehghani et al., 2018) is ``sharing="universal"`` with
    ``timestep_signal`` (position and timestep sinusoids added before every step, Sec. 2.1) and,
    optionally, ``act``: Adaptive Computation Time in every stack (Sec. 2.2), at most N steps per
    stack, halting threshold 1 − ``act_epsilon``, and ``act_loss_weight`` (τ) times the mean ponder
    time N + R added to the loss."""
    vocab_size: int = 1000
    embedding_size: object = None          # None: E = H, no factorization
    hidden_size: int = 128
    num_hidden_layers: int = 4
    num_decoder_layers: object = None
    num_attention_heads: int = 4
    intermediate_size: int = 512
    hidden_act: str = "relu"
    max_position_embeddings: int = 512
    layer_norm_eps: float = 1e-5
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    initializer_range: float = 0.02
    sharing: object = "not-shared"
    num_unique_layers: object = None
    norm_position: str = "pre"
    tie_word_embeddings: bool = True
    pad_token_id: int = 0
    timestep_signal: bool = False          # the Universal Transformer's coordinate embedding
    act: bool = False                      # Adaptive Computation Time in encoder and decoder
    act_epsilon: float = 0.01              # ε: a position halts when Σ p reaches 1 − ε (Graves, 2016)
    act_loss_weight: float = 0.01          # τ: weight of the ponder cost in the loss

    def __post_init__(self):
        if self.embedding_size is None:
            self.embedding_size = self.hidden_size
        if self.num_decoder_layers is None:
            self.num_decoder_layers = self.num_hidden_layers
        validate(self)

    def plan(self, n_layers=None):
        return sharing.Plan.build(self.sharing, n_layers or self.num_hidden_layers, self.num_unique_layers)

    def to_dict(self):
        return dataclasses.asdict(self)


def validate(config):
    """Refuse impossible configurations with a message naming the field and the accepted range.
    Sizes are bounded (``MAX_SIZE``, ``sharing.MAX_LAYERS``) so that a configuration read from an
    edited file is refused before anything of that size is built. The rules of the layers
    (heads, activation, LayerNorm position, ACT's ε) and of the plan (M with N) are the layers' and
    ``sharing``'s own, applied here to the fields, so that a configuration is refused when made."""
    name = type(config).__name__
    for field in ("vocab_size", "hidden_size", "embedding_size", "num_hidden_layers",
                  "num_decoder_layers", "num_attention_heads", "intermediate_size",
                  "max_position_embeddings", "type_vocab_size"):
        if not hasattr(config, field):   # num_decoder_layers, type_vocab_size: one config only
            continue
        layers = field in ("num_hidden_layers", "num_decoder_layers")
        safeio.integer(getattr(config, field), f"{name}.{field}",
                       high=sharing.MAX_LAYERS if layers else MAX_SIZE)
    check_heads(config.hidden_size, config.num_attention_heads, name)
    check_activation(config.hidden_act, f"{name}.hidden_act")
    check_norm_position(config.norm_position, f"{name}.norm_position")
    safeio.number(config.layer_norm_eps, f"{name}.layer_norm_eps", "be a finite number > 0 (it keeps "
                  "LayerNorm's division finite)", lambda eps: eps > 0)
    safeio.number(config.initializer_range, f"{name}.initializer_range", "be a finite number >= 0 (the "
                  "standard deviation of the initial weights)", lambda std: std >= 0)
    for field in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
        safeio.number(getattr(config, field), f"{name}.{field}", "lie in [0, 1)",
                      lambda p: 0 <= p < 1)
    for field in ("tie_word_embeddings", "timestep_signal", "act"):
        if hasattr(config, field) and not isinstance(getattr(config, field), bool):
            raise InvalidValue(f"{name}.{field} must be True or False, got {getattr(config, field)!r}")
    projection = getattr(config, "embedding_projection", None)
    if projection is not None and not isinstance(projection, bool):
        raise InvalidValue(f"{name}.embedding_projection must be None, True or False, got {projection!r}")
    if projection is False and config.embedding_size != config.hidden_size:
        raise InvalidValue(f"{name}.embedding_projection=False needs E = H, got embedding_size="
                           f"{config.embedding_size} and hidden_size={config.hidden_size}: "
                           "without the projection the embeddings cannot reach the hidden size")
    if getattr(config, "act", False):
        check_epsilon(config.act_epsilon, f"{name}.act_epsilon")
        safeio.number(config.act_loss_weight, f"{name}.act_loss_weight", "be >= 0 (a finite number)",
                      lambda tau: tau >= 0)
    # the plan names the rule an unknown strategy or an impossible (M, N) breaks; name the fields too
    M = config.num_unique_layers
    stacks = [("num_hidden_layers", config.num_hidden_layers)]
    if hasattr(config, "num_decoder_layers"):
        stacks.append(("num_decoder_layers", config.num_decoder_layers))
    for field, n_layers in stacks:
        try:
            sharing.Plan.build(config.sharing, n_layers, M)
        except MinishareError as error:         # InvalidValue or InvalidType
            raise type(error)(f"{name}.sharing={config.sharing!r} with {field}={n_layers} and "
                              f"num_unique_layers={M!r}: {error}") from None

