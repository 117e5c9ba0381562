# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 14. Looped depth: thinking longer
#
# A shared stack runs the same parameters at every position, so nothing fixes how many positions
# it has: the depth can be chosen when the model runs. A **looped** model (Yang et al., 2023;
# Geiping et al., 2025) iterates one shared block r times, adds its input back before every
# iteration, and is trained with r drawn at random, backpropagating through the last k iterations
# only. At test time it can run more iterations than it ever trained with. Does it get better?
#
# **You will:** see the plan of a depth chosen at run time and what it costs (parameters that do not
# grow with r, compute that does); check truncated backpropagation against finite differences and
# its memory against the formula; meet the pointer forests, a task whose difficulty goes beyond
# training; and read accuracy against test-time iterations, per difficulty.

# %%
import numpy as np

import minishare
from minishare import sharing
from minishare.analysis import looped as costs
from minishare.data import PointerForest, follow_to_root
from minishare.experiments import course
from minishare.models import LoopedConfig, LoopedForTokenClassification
from minishare.nn.looped import LoopedStack, sample_iterations

print(course.setup())

# %% [markdown]
# ## 14.1 The math
#
# **Input injection** (Yang et al., 2023, Sec. 3): with $e$ the embedded input (here the output of
# a prelude layer),
#
# $$s_0 = 0, \qquad s_t = \mathrm{block}(s_{t-1} + e), \quad t = 1, \dots, r .$$
#
# Geiping et al. (2025) inject by concatenation instead, $s_t = \mathrm{block}(A\,[s_{t-1}; e])$
# with an adapter $A$ ($2H \to H$); the library offers both (`injection="add"` or `"concat"`).
#
# **Truncated backpropagation.** Training draws r per batch and runs the first $r - k$ iterations
# without a graph, so $s_{r-k}$ enters the last $k$ as a constant:
#
# $$\frac{\partial L}{\partial \theta}\Big|_{\text{truncated}} =
#   \frac{\partial}{\partial \theta} L\big(s_r(\theta;\ s_{r-k}\ \text{fixed}),\ \theta\big),$$
#
# and the activations kept for backward are those of $k$ iterations, not $r$ (Geiping et al.:
# $\bar r = 32$ on average, $k = 8$).

# %% [markdown]
# ## 14.2 A plan whose depth is chosen at run time
#
# A prelude (P = 1), one recurrent layer (R = 1) and a coda (C = 1): the plan of one call at r
# iterations has P + r·R + C positions served by P + R + C layers.

# %%
for r in (1, 3, 6):
    print(f"r = {r}:  {sharing.looped_plan(1, 1, 1, r)}")
sharing.looped_plan(1, 2, 1, 3)

# %% [markdown]
# Parameters do not grow with r; the multiply-accumulates per token do, one layer's worth per
# iteration (`minishare.analysis.looped`, counted as chapter 11 counts them).

# %%
config = LoopedConfig(vocab_size=32, num_labels=32, hidden_size=64, num_attention_heads=2, intermediate_size=128)
model = LoopedForTokenClassification(config)
print(f"{'r':>3} {'parameters':>11} {'MACs per token (T = 32)':>24}")
for r in (1, 2, 4, 8, 16):
    print(f"{r:>3} {minishare.count_parameters(model):>11,} {costs.macs_per_token(config, r, 32)['total']:>24,}")

# %% [markdown]
# ## 14.3 The loop, from the library

# %%
course.Source(LoopedStack.forward)

# %% [markdown]
# ## 14.4 Truncated backpropagation, checked
#
# With k = r the truncated gradient is the full one. With k < r, it must equal finite differences
# of the last k iterations run from $s_{r-k}$, computed once and held fixed. Here for one weight
# entry of the recurrent FFN, in float64:

# %%
minishare.manual_seed(0)
stack = LoopedStack(8, 2, 16, n_prelude=1, n_recurrent=1, n_coda=0).double()
x = minishare.tensor(np.random.default_rng(1).standard_normal((1, 4, 8)))
v = np.random.default_rng(2).standard_normal((1, 4, 8))
weight = stack.recurrent.ffn_sets[0].sublayer.ffn.weight
r, k = 6, 2


def gradient(k):
    stack.zero_grad()
    stack(x, iterations=r, backprop_iterations=k).backward(minishare.tensor(v))
    return weight.grad[3, 1]


def last_k_from(fixed):
    with minishare.no_grad():
        e = stack.prelude(x, {})
        s = minishare.tensor(fixed)
        for _ in range(k):
            s = stack.recurrent(s + e, {})
        return float((s.numpy() * v).sum())


with minishare.no_grad():
    _, states = stack(x, iterations=r, output_hidden_states=True)
fixed = states[r - k - 1].numpy()               # s_{r−k}, at the unmoved weights
h = 1e-6
weight.data[3, 1] += h
plus = last_k_from(fixed)
weight.data[3, 1] -= 2 * h
minus = last_k_from(fixed)
weight.data[3, 1] += h
print(f"truncated (k = {k}) gradient  {gradient(k):+.8f}")
print(f"finite differences, s_{r - k} fixed {(plus - minus) / (2 * h):+.8f}")
print(f"full (k = r) gradient       {gradient(None):+.8f}   (differs: the early iterations count too)")

# %% [markdown]
# **Memory.** The bytes a training step saves for backward: outside the loop, plus one iteration's
# share for each of the last k, whatever r is. The library measures the two numbers at r = 2, then
# predicts; here the prediction against the measurement at other r and k:

# %%
rng = np.random.default_rng(3)
batch = {"input_ids": rng.integers(0, 32, (8, 16, 2)), "labels": rng.integers(0, 32, (8, 16))}
fitted = costs.activation_model(model, batch)
print(f"outside the loop {fitted['outside']:,} bytes, per backpropagated iteration {fitted['per_iteration']:,}")
for r, k in [(4, 4), (12, 4), (12, 12), (24, 2)]:
    print(f"r = {r:2}, k = {k:2}: measured {costs.measured_activations(model, batch, r, k):>9,}, "
          f"predicted {costs.activations(fitted, r, k):>9,}")

# %% [markdown]
# ## 14.5 A task harder than training: pointer forests
#
# Chains of letters, each pointing to the next, the last pointing to itself; every token is a
# pair (letter, the letter it points to), in random order, and its label is the root of its
# chain. A node at depth d needs d lookups (or ⌈log₂ d⌉ with pointer doubling), so deeper forests
# need more iterations, and training on shallow ones leaves the deep ones for test time.

# %%
forest = PointerForest(n_symbols=12, n_chains=2)
ids, labels, depths = forest.sample(np.random.default_rng(4), depth=3)
letters = "abcdefghijkl"
print("tokens:", " ".join(f"{letters[a]}>{letters[b]}" for a, b in ids))
print("roots: ", " ".join(f"  {letters[l]}" for l in labels))
print("depths:", " ".join(f"  {d}" for d in depths))
assert (follow_to_root(ids) == labels).all()
print("iterations drawn for 10 training batches (r̄ = 6):",
      [sample_iterations(np.random.default_rng(i), 6) for i in range(10)])

# %% [markdown]
# ## 14.6 Accuracy against test-time iterations, per difficulty
#
# The `looped` experiment of `reproduce` trains, per seed, the looped model (one prelude layer,
# one recurrent layer, r drawn with mean r̄, the last k backpropagated), a not-shared model with
# the same parameters (those two layers run once) and one with the compute of r̄ iterations (a
# prelude and r̄ distinct layers), then tests them on forests deeper than any in training. In quick
# mode it trains tiny ones for a few steps, so nothing is learnt yet; in full mode it loads the
# committed full run.

# %%
result = course.experiment("looped", notebook="14")

# %%
course.show_experiment("looped", result, notebook="14")

# %% [markdown]
# ## 14.7 Exercises
#
# 1. **A looped block** (exercise 17 in `exercises/ex17_looped`): the schedule of a looped stack,
#    one layer iterated with the input re-injected, and backpropagation through the last k.
# 2. In 14.4, set `k = r - 1`, then `k = 1`. How does the truncated gradient move towards, or away
#    from, the full one?
# 3. Build `LoopedStack(..., injection="concat")` and count its parameters against the additive
#    one: what does Geiping et al.'s adapter cost, and what does it add per iteration to the MACs?

# %% [markdown]
# ## 14.8 Predict, then run
#
# **Q1.** The model of 14.2 at r = 100 iterations: how many parameters?

# %%
guess = None
print(course.reveal(guess, minishare.count_parameters(LoopedForTokenClassification(
    LoopedConfig(**{**config.to_dict(), "mean_iterations": 100}))), "parameters at r = 100"))

# %% [markdown]
# **Q2.** Training at r = 40 with k = 4 against r = 8 with k = 4: how many times the activation
# bytes?

# %%
guess = None
print(course.reveal(guess, round(costs.measured_activations(model, batch, 40, 4)
                                 / costs.measured_activations(model, batch, 8, 4), 3), "ratio of activation bytes"))
