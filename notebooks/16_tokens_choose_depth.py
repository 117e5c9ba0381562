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
# # 16. Tokens that choose their depth
#
# A recursive model passes every token through its shared block the same number of times, yet
# some tokens are easy: a root of a pointer forest knows its answer at once, a node five links
# deep needs five lookups. Why not let the easy tokens stop early? Chapter 6 gave one answer,
# Adaptive Computation Time: each token halts on its own. **Mixture-of-Recursions** (Bae et al.,
# 2025) gives another: each recursion step chooses the tokens it takes, a fixed number of them.
#
# **You will:** write down expert-choice routing and work one routing out by hand; check the two
# new ops (gather and scatter-add of selected tokens) against finite differences; count what a
# token costs when only some tokens attend to only some keys; and set MoR beside ACT on one task
# at the same mean compute.

# %%
import numpy as np

import minishare
from minishare import functional as F
from minishare.analysis import mor as costs
from minishare.experiments import course
from minishare.gradcheck import gradcheck
from minishare.models import RecursionConfig
from minishare.nn import MixtureOfRecursions
from minishare.nn.mor import capacity_tokens

print(course.setup())

# %% [markdown]
# ## 16.1 The math
#
# **Expert-choice routing** (Bae et al., 2025). Step r of N_r has a router θ_r and a
# capacity c_r. It scores its candidate tokens, keeps the top $k_r = \max(1, \lfloor c_r T
# \rfloor)$, and updates only those, weighted by their score:
#
# $$g_t^r = \sigma(\theta_r^\top H_t^r), \qquad
#   H_t^{r+1} = \begin{cases} g_t^r\, f(H_t^r) + H_t^r & t \in \text{top-}k_r \\
#                             H_t^r & \text{otherwise.} \end{cases}$$
#
# The candidates of step r are the tokens step r − 1 took (all T at the first step): a token that
# stopped never comes back. Every step's compute is fixed before any input is seen, so the mean
# number of passes per token is $\sum_r k_r / T$, chosen, not learnt. The top-k is piecewise
# constant; only $g$ carries a gradient, as only the remainder R does in ACT.
#
# **ACT** (chapter 6): every token halts by itself once its halting probabilities sum to 1 − ε;
# its mean number of passes comes out of training, pushed down by the ponder cost τ.
#
# One caveat: the top-k compares a token with all others, later ones included. An encoder sees
# the whole sequence anyway; a decoder would leak the future, which the paper mends with an
# auxiliary loss that teaches the router to decide alone.

# %% [markdown]
# ## 16.2 One routing, by hand
#
# H = 1, every router $g = \sigma(h)$, and a block that returns 0, so the scores never change.
# Capacities 1, 1/2, 1/4 of T = 4 tokens take 4, 2 and 1 tokens.

# %%
p = [0.9, 0.2, 0.6, 0.4]
mor = MixtureOfRecursions(1, (1, 0.5, 0.25)).double()
for router in mor.routers:
    router.weight.data[...] = 1.0
    router.bias.data[...] = 0.0
x = minishare.tensor(np.log(np.array(p) / (1 - np.array(p))).reshape(1, 4, 1))
_, routing = mor(x, lambda r, s: s * 0.0)
print("capacities -> tokens per step:", capacity_tokens((1, 0.5, 0.25), 4))
for r, (selected, weight) in enumerate(zip(routing.selected, routing.weights)):
    print(f"step {r}: tokens {selected[0].tolist()}, weights {np.round(weight.numpy()[0], 2).tolist()}")
print("passes per token:", routing.depth[0].tolist())

# %% [markdown]
# ## 16.3 The router, from the library

# %%
course.Source(MixtureOfRecursions.forward)

# %% [markdown]
# ## 16.4 Gather and scatter-add, checked
#
# The selected tokens leave the sequence (`gather_tokens`) and their updates come back
# (`scatter_add_tokens`). Each op's backward is the other's forward; here both against central
# differences, in float64:

# %%
rng = np.random.default_rng(0)
index = np.array([[0, 3], [4, 1]])
x = minishare.tensor(rng.standard_normal((2, 5, 3)), requires_grad=True)
s = minishare.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
print("gather:", gradcheck(lambda x: F.gather_tokens(x, index), x))
print("scatter-add:", gradcheck(lambda x, s: F.scatter_add_tokens(x, index, s), x, s))

# %% [markdown]
# ## 16.5 What a token costs, and who attends to whom
#
# One pass of one token costs $4H^2 + 2HI$ for the projections and the FFN, plus $2KH$ for
# attending to K keys. With every token at every step, and with ACT, K = T: a halted token's state
# stays, and the running tokens attend to it. With expert-choice each step runs on its k_r tokens
# alone (the paper's recursion-wise KV caching), so K = k_r and attention costs $k_r^2$ per step
# instead of $T^2$. Multiply-accumulates per token at T = 256 (`minishare.analysis.mor`):

# %%
width = dict(vocab_size=32, num_labels=32, hidden_size=64, num_attention_heads=2, intermediate_size=128,
             num_recursions=4)
T = 256
rows = [("every token, 4 passes", RecursionConfig(**width), None),
        ("every token, 2 passes", RecursionConfig(**{**width, "num_recursions": 2}), None),
        ("MoR 1, 1/2, 1/4, 1/4 (2 passes)", RecursionConfig(**width, routing="expert-choice",
                                                            capacities=(1, 0.5, 0.25, 0.25)), None),
        ("ACT, 2 passes on average", RecursionConfig(**width, routing="act"), [T, T / 2, T / 4, T / 4])]
print(f"{'':34} {'attention':>10} {'proj. + FFN':>12} {'total':>10}")
for label, config, steps in rows:
    c = costs.macs_per_token(config, T, steps)
    print(f"{label:34} {c['attention scores']:>10,.0f} {c['projections and FFN']:>12,.0f} {c['total']:>10,.0f}")

# %% [markdown]
# At two passes on average MoR and ACT spend the same on projections and FFN; MoR's attention is
# cheaper because its later steps are short sequences.

# %% [markdown]
# ## 16.6 Accuracy against mean compute: MoR beside ACT
#
# The `mor` experiment of `reproduce` trains, per seed, one recursive token classifier (a prelude
# layer, one shared layer passed through up to N_r times) under each depth rule: every token at r
# passes for r = 1 .. N_r, ACT, and MoR with capacities whose mean is an integer number of passes.
# All are scored on the same held-out pointer forests (chapter 14's task), where a node's depth is
# its difficulty. In quick mode it trains tiny ones for a few steps, so nothing is learnt yet; in
# full mode it loads the committed full run.

# %%
result = course.experiment("mor", notebook="16")

# %%
course.show_experiment("mor", result, notebook="16")

# %% [markdown]
# ## 16.7 Exercises
#
# 1. **A capacity-limited router** (exercise 19 in `exercises/ex19_router`): the tokens per step,
#    expert-choice routing over a shared block, and the compute per token beside ACT.
# 2. In 16.2, set the second router's bias to −10. Which tokens does step 1 take now, and why does
#    the top-k still take two?
# 3. In 16.5, how long must the sequence be before MoR's attention saving is larger than the
#    routers' cost? Write it as an inequality in T, H and the capacities.

# %% [markdown]
# ## 16.8 Predict, then run
#
# **Q1.** Capacities 1, 3/4, 1/2, 1/4 on T = 24 tokens: how many passes does a token take on
# average?

# %%
guess = None
print(course.reveal(guess, costs.mean_passes(capacity_tokens((1, 0.75, 0.5, 0.25), 24), 24), "mean passes"))

# %% [markdown]
# **Q2.** With those capacities at T = 256, H = 64, what fraction of the attention scores of
# "every token, 4 passes" does MoR compute?

# %%
guess = None
config = RecursionConfig(**width, routing="expert-choice", capacities=(1, 0.75, 0.5, 0.25))
print(course.reveal(guess, round(costs.macs_per_token(config, T)["attention scores"]
                                 / costs.macs_per_token(RecursionConfig(**width), T)["attention scores"], 4),
                    "fraction of the attention scores"))
