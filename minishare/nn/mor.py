"""Mixture-of-Recursions (Bae et al., 2025, "Mixture-of-Recursions: Learning Dynamic Recursive
Depths for Adaptive Token-Level Computation", arXiv 2507.10524): one shared block f applied up to
N_r times, and at every recursion a router choosing which tokens take the next pass.

This is the paper's expert-choice routing. Each recursion step r acts as an "expert" that picks
its tokens: a router θ_r scores every candidate token, the top k_r go through f, and each
update is weighted by its own score:

    g_t^r = α σ(θ_r · H_t^r)                                      (the router score, in (0, α))
    H_t^{r+1} = g_t^r f(H_t^r) + H_t^r    if t is among the top k_r of the candidates
    H_t^{r+1} = H_t^r                     otherwise                (the paper's expert-choice rule)

with k_r = max(1, ⌊c_r T⌋) for a capacity c_r per step, and the candidates at step r are the
tokens selected at step r − 1 (all T at the first step): the paper's hierarchical filtering, so
a token that stopped never comes back and the capacities must not grow. Why expert-choice: the
compute of every step is fixed in advance, Σ_r k_r passes over the T tokens whatever the input,
so the mean number of passes per token is Σ_r c_r, known before training, and no step can be
swamped or starved (token-choice, where each token picks its depth once, needs a balancing loss
for that). The top-k selection is piecewise constant, so only g carries a gradient: the router
learns through the weight it puts on the update, as ACT's halting unit learns through R.

α is the authors' ``alpha`` (their code, ``expert_choice_router.py``: the sigmoid's output times
``cfg.mor.expert.alpha``). It matters because f is a whole Pre-LN layer, which carries its own
residual: f(H) = H + Δ(H), so a chosen token becomes (1 + g) H + g Δ(H). With α = 1 a token taken
r times is scaled by up to 2^r; a small α keeps each step close to H + α Δ.

The caveat: the top-k of a step compares a token with every other token of the sequence,
later ones included. An encoder sees the whole sequence at training and at test time, so that is
no leak; in a decoder it breaks causality (a token's depth would depend on the future), which
the paper mends with an auxiliary loss (binary cross-entropy pushing the selected tokens' router
outputs to 1, the others to 0, so that a threshold can replace the top-k at inference) or an
auxiliary router. This module serves encoders, where no leak needs mending, but offers the
auxiliary loss (``auxiliary_loss``) because it also trains the router directly, apart from the
weight g; it adds no router z-loss.

Attention: the selected tokens are gathered into a shorter sequence (B, k_r, H) and f runs on it,
so at step r a token attends only to the k_r tokens selected with it: the paper's recursion-wise
KV caching (keys and values of the active tokens only), whose attention costs k_r² per step
instead of T². (Its other option, recursive KV sharing, reuses the keys and values of the first
recursion at every step.) The selected positions are kept in ascending order, so a causal mask
over the gathered tokens is the original mask restricted to them.
"""
import collections

from minishare import backend, functional as F, safeio
from minishare.errors import InvalidValue
from minishare.nn.act import sigmoid
from minishare.nn.container import ModuleList
from minishare.nn.layers import Linear
from minishare.nn.module import Module
from minishare.tensor import Tensor

Routing = collections.namedtuple("Routing", "selected scores weights depth logits chosen")
Routing.__doc__ = """What expert-choice routing did to a batch (B, T), one entry per recursion step r:
    selected  (B, k_r) int arrays: the positions that took step r, ascending
    scores    (B, n_r) Tensors: g of every candidate of step r (n_0 = T, then n_r = k_{r-1})
    weights   (B, k_r) Tensors: g of the selected tokens, the weight of their update
    depth     (B, T) int array: how many steps each token took (its number of passes)
    logits    (B, n_r) Tensors: θ_r · H of every candidate, before the sigmoid
    chosen    (B, n_r) int arrays: 1 where the candidate was among the top k_r, else 0"""


def check_capacities(capacities, name="capacities"):
    """The one rule of the capacities (a configuration checks it too, as ``name``): a non-empty
    sequence of numbers c_r in (0, 1] that never grows (a step chooses among the tokens of the
    step before). Returns them as a tuple of floats."""
    if isinstance(capacities, (str, bytes)) or not hasattr(capacities, "__len__") or not len(capacities):
        raise InvalidValue(f"{name} must be a non-empty sequence of fractions, one per recursion, got {capacities!r}")
    for c in capacities:
        safeio.number(c, f"{name}: each capacity", "lie in (0, 1]", lambda v: 0 < v <= 1)
    if any(b > a for a, b in zip(capacities, capacities[1:])):
        raise InvalidValue(f"{name} must not grow from one recursion to the next (the tokens of step r "
                           f"are chosen among those of step r − 1), got {tuple(capacities)}")
    return tuple(float(c) for c in capacities)


def capacity_tokens(capacities, seq_len):
    """k_r = max(1, ⌊c_r T⌋): how many of T tokens step r takes, for every step."""
    safeio.integer(seq_len, "seq_len")
    # the small margin keeps ⌊0.75 · 4⌋ = 3 although 0.75 · 4 may come out a hair under 3
    return [max(1, int(c * seq_len + 1e-9)) for c in check_capacities(capacities)]


def top_k_positions(scores, k):
    """The k highest of ``scores`` (B, n) in each row, as positions in ascending order (B, k);
    ties go to the earlier position. Host or backend array in, backend array out."""
    xp = backend.xp
    order = xp.argsort(-backend.asarray(scores), axis=1, kind="stable")[:, :k]   # best first
    return xp.sort(order, axis=1)                                                # causal order kept


class MixtureOfRecursions(Module):
    """Expert-choice routing over a shared block: one router (a Linear H -> 1, θ_r) per recursion
    step, ``capacities`` c_1 ≥ c_2 ≥ ... the fraction of the T tokens each step takes, ``alpha``
    the scale α of the router score.

    ``forward(x, block)``: x (B, T, H) is H^1; ``block(r, s)`` maps the selected tokens' states
    (B, k_r, H) to f of them, for step r = 0, 1, ... (the same f at every step: that is the
    sharing). Returns (H^{N_r + 1} (B, T, H), Routing)."""

    def __init__(self, hidden_size, capacities, alpha=1.0):
        super().__init__()
        self.capacities = check_capacities(capacities)
        self.alpha = check_alpha(alpha)
        self.routers = ModuleList(Linear(hidden_size, 1) for _ in self.capacities)

    def forward(self, x, block):
        xp = backend.xp
        B, T, H = x.shape
        rows = xp.arange(B)[:, None]                                        # (B, 1)
        candidates = xp.broadcast_to(xp.arange(T), (B, T))                  # (B, n_0 = T)
        h, depth = x, xp.zeros((B, T), dtype=xp.int64)
        selected_all, scores_all, weights_all, logits_all, chosen_all = [], [], [], [], []
        for r, (router, k) in enumerate(zip(self.routers, capacity_tokens(self.capacities, T))):
            n = candidates.shape[1]
            z = router(F.gather_tokens(h, candidates)).reshape(B, n)         # (B, n)
            g = self.alpha * sigmoid(z)                                      # (B, n)
            top = top_k_positions(g.data, k)                                 # (B, k), into the candidates
            chosen = xp.zeros((B, n), dtype=xp.int64)
            chosen[rows, top] = 1
            selected = xp.take_along_axis(candidates, top, axis=1)           # (B, k), into the T tokens
            weight = g[rows, top]                                            # (B, k)
            update = block(r, F.gather_tokens(h, selected))                  # (B, k, H)
            h = F.scatter_add_tokens(h, selected, weight.reshape(B, k, 1) * update)   # (B, T, H)
            depth[rows, selected] += 1
            selected_all.append(selected)
            scores_all.append(g)
            weights_all.append(weight)
            logits_all.append(z)
            chosen_all.append(chosen)
            candidates = selected
        return h, Routing(selected_all, scores_all, weights_all, depth, logits_all, chosen_all)

    def extra_repr(self):
        return f"capacities={self.capacities}, alpha={self.alpha}"


def check_alpha(alpha, name="MoR: alpha"):
    """The one rule of α (a configuration checks it too, as ``name``): a number in (0, 1]."""
    safeio.number(alpha, name, "lie in (0, 1]", lambda a: 0 < a <= 1)
    return float(alpha)


def auxiliary_loss(routing):
    """The authors' auxiliary router loss ("aux_loss"): at every step, the binary cross-entropy
    of σ(z) against whether the candidate was chosen, averaged over the candidates, summed over
    the steps. A binary cross-entropy on a logit z is a two-class cross-entropy on the logits
    (0, z), since softmax((0, z))_1 = σ(z), so it is ``F.cross_entropy`` and needs no op of its own."""
    total = None
    for z, chosen in zip(routing.logits, routing.chosen):
        column = z.reshape(-1, 1)                                                   # (B n, 1)
        pair = F.concatenate([Tensor(backend.xp.zeros_like(column.data)), column], axis=1)   # (B n, 2): (0, z)
        step = F.cross_entropy(pair, chosen.reshape(-1))
        total = step if total is None else total + step
    return total
