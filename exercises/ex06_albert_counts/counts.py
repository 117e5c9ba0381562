"""Exercise 6: the parameter count of each ALBERT sharing variant, from the configuration alone
(Lan et al., 2019, Sec. 3.1, Tables 3 and 4).

``config`` is a ``minishare.models.AlbertConfig``: vocab_size V, embedding_size E, hidden_size H,
num_hidden_layers N, intermediate_size (4H in the paper), max_position_embeddings P,
type_vocab_size, norm_position ("post" or "pre"), ``config.has_embedding_projection`` (whether
the embeddings go through the E -> H dense: by default only when E != H, and always when the
config says ``embedding_projection=True``), and ``config.plan()``, whose ``n_sets("attention")``
and ``n_sets("ffn")`` say how many distinct sets of each component the encoder holds. Every dense
layer has a bias; every LayerNorm a weight and a bias. Count as the paper does (its
Tables 3 and 4): the attention component carries its LayerNorm, the FFN component the
LayerNorm after it, and the encoder ends in a pooler (H × H dense with bias); a Pre-LN encoder
("pre") also ends in a final LayerNorm over H before the pooler.

``pad_vocab_to``: the word table may be padded to a multiple of this many rows, as Megatron-LM
pads the vocabulary (``make_vocab_size_divisible_by``, 128) so that the V × E matrix multiplies
fast on tensor cores: V rows become the smallest multiple of ``pad_vocab_to`` that is at least
V (30,000 -> 30,080 for 128; a V that is already a multiple stays). 1 means no padding.

Do not build a model: count with the formula. (``minishare.count_parameters`` counts by building
one; the grader uses it as the independent reference, so do not call it either.)
"""


def embedding_parameters(config, pad_vocab_to=1):
    """Task 1. Word (V × E, V padded to a multiple of ``pad_vocab_to``), position (P × E) and
    token-type (type_vocab_size × E) tables, the LayerNorm over E, and the E -> H projection
    when ``config.has_embedding_projection``."""
    ### BEGIN SOLUTION task 1
    V, E, H = config.vocab_size, config.embedding_size, config.hidden_size
    V = -(-V // pad_vocab_to) * pad_vocab_to                 # round up to a multiple
    tables = (V + config.max_position_embeddings + config.type_vocab_size) * E
    projection = E * H + H if config.has_embedding_projection else 0
    return tables + 2 * E + projection
    ### END SOLUTION


def attention_set_parameters(config):
    """Task 2. One attention set: query, key, value and output dense (H × H + H each) and its
    LayerNorm."""
    ### BEGIN SOLUTION task 2
    H = config.hidden_size
    return 4 * (H * H + H) + 2 * H
    ### END SOLUTION


def ffn_set_parameters(config):
    """Task 2. One FFN set: H -> intermediate_size -> H with biases, and its LayerNorm."""
    ### BEGIN SOLUTION task 2
    H, I = config.hidden_size, config.intermediate_size
    return H * I + I + I * H + H + 2 * H
    ### END SOLUTION


def albert_parameters(config, pad_vocab_to=1):
    """Task 3. The whole encoder with its pooler (and Pre-LN's final LayerNorm), each distinct
    set counted once, under any plan: ALBERT's variants, Takase & Kiyono's for any M of N, or an
    explicit schedule whose components have different numbers of sets."""
    ### BEGIN SOLUTION task 3
    plan, H = config.plan(), config.hidden_size
    final_norm = 2 * H if config.norm_position == "pre" else 0
    return (embedding_parameters(config, pad_vocab_to)
            + plan.n_sets("attention") * attention_set_parameters(config)
            + plan.n_sets("ffn") * ffn_set_parameters(config)
            + final_norm + H * H + H)
    ### END SOLUTION
