"""Compute per token of a recursive model whose tokens take different numbers of passes
(``models.RecursiveForTokenClassification``): the matrix products ``analysis.flops`` counts, now
for a layer that only some tokens pass through, attending to only some keys.

One pass of one token through the shared encoder layer, attending to K keys, costs::

    4H²          query, key, value and output projections of this token
    2KH          its scores against K keys, then its K weights times the K values
    2HI          the FFN (H -> I -> H)

What K is, is the difference between the depth rules. With every token at every step ("none")
and with ACT, a token still running attends to all T tokens: a halted token's state is carried
forward unchanged, so its keys and values are those of its last step (a cache holds them; this
library's ACT loop simply recomputes them, so its arithmetic is higher than the count). With
expert-choice routing a token attends only to the k_r tokens selected with it at step r
(recursion-wise KV caching, ``nn.mor``): step r costs k_r (4H² + 2HI) + 2 k_r² H for the
sequence instead of T (4H² + 2HI) + 2 T² H. The routers (H -> 1 on the n_r candidates of step r)
and ACT's halting unit (H -> 1 on every token still running) are counted too. Per token means
per token of the sequence: a step's cost divided by T.

The counts take the number of tokens at each step (``tokens_per_step``), which expert-choice
fixes in advance (k_r = ⌊c_r T⌋, ``nn.mor.capacity_tokens``) and ACT decides on the input (read
it from the model's ``passes``).
"""
from minishare import backend
from minishare.errors import InvalidValue
from minishare.nn.mor import capacity_tokens

PARTS = ("prelude", "projections and FFN", "attention scores", "router", "classifier")


def pass_macs(hidden_size, intermediate_size, keys):
    """Multiply-accumulates of one token's pass through one encoder layer attending to ``keys``
    keys: 4H² + 2·keys·H + 2HI."""
    H, I = hidden_size, intermediate_size
    return 4 * H * H + 2 * keys * H + 2 * H * I


def tokens_per_step(passes, num_steps):
    """How many tokens of a sequence took step r = 0 .. num_steps − 1, on average over the
    batch: the mean count of passes > r. ``passes`` (B, T) ints, as the model returns them."""
    host = backend.to_numpy(backend.asarray(passes))
    return [float((host > r).sum(axis=1).mean()) for r in range(num_steps)]


def planned_tokens_per_step(config, seq_len):
    """``tokens_per_step`` as the configuration fixes it: T at every step for "none", k_r for
    expert-choice. ACT decides on the input, so it has no plan (ask the model's ``passes``)."""
    if config.routing == "act":
        raise InvalidValue("ACT decides each token's number of steps on the input: measure tokens_per_step "
                           "from the model's passes instead")
    if config.routing == "none":
        return [float(seq_len)] * config.num_recursions
    return [float(k) for k in capacity_tokens(config.capacities, seq_len)]


def macs_per_token(config, seq_len, steps=None):
    """Forward multiply-accumulates per token of a ``RecursionConfig`` on sequences of T =
    ``seq_len`` tokens, by part (``PARTS``) and ``"total"``. ``steps``: the tokens taking each
    step (``tokens_per_step``); by default the configuration's plan (required for ACT)."""
    steps = planned_tokens_per_step(config, seq_len) if steps is None else [float(s) for s in steps]
    if len(steps) != config.num_recursions or any(not 0 <= s <= seq_len for s in steps):
        raise InvalidValue(f"steps: the tokens taking each of the {config.num_recursions} steps, each in "
                           f"[0, {seq_len}], got {steps}")
    H, I, T = config.hidden_size, config.intermediate_size, seq_len
    routed = config.routing == "expert-choice"
    keys = steps if routed else [T] * len(steps)               # who a token of step r attends to
    candidates = [T] + steps[:-1] if routed else steps         # who the router of step r scores
    parts = {
        "prelude": config.num_prelude_layers * pass_macs(H, I, T),
        "projections and FFN": sum(k * (4 * H * H + 2 * H * I) for k in steps) / T,
        "attention scores": sum(k * 2 * K * H for k, K in zip(steps, keys)) / T,
        "router": 0 if config.routing == "none" else sum(n * H for n in candidates) / T,
        "classifier": H * config.num_labels,
    }
    parts["total"] = sum(parts.values())
    return parts


def mean_passes(steps, seq_len):
    """The mean number of passes per token: Σ_r (tokens at step r) / T."""
    return sum(steps) / seq_len
