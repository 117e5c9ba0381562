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
# # 4. Cross-layer sharing: ALBERT's four variants
#
# ALBERT's second idea (Lan et al., 2019, Sec. 3.1, Table 4): let the N layer positions of the
# encoder reuse parameters. The paper compares four variants: nothing shared (BERT), only the
# attention shared, only the FFN shared, everything shared (ALBERT's default).
#
# **You will:** see each variant's plan draw itself; find the one place in the code where sharing
# happens; verify that a shared layer's gradient is the sum of the gradients at its positions;
# plot parameters against depth; measure what sharing saves in memory (parameters, gradients,
# optimizer state) and what it does not (activations).

# %%
import numpy as np

import minishare
from minishare import nn, optim
from minishare.analysis import gradnorms, memory, memory_figures, params_figures, plan_figure
from minishare.experiments import course
from minishare.models import AlbertConfig, AlbertModel
from minishare.sharing import Plan

print(course.setup())

# %% [markdown]
# ## 4.1 The math: a plan, and the gradient of a shared set
#
# A *plan* maps each layer position $i \in \{0, \dots, N-1\}$ and each component $c$ (attention,
# FFN) to the index $\pi_c(i)$ of a parameter set $\theta_{c,k}$. Layer $i$ computes
# $h_{i+1} = \mathrm{layer}(h_i;\ \theta_{\mathrm{attn},\pi_{\mathrm{attn}}(i)},\ \theta_{\mathrm{ffn},\pi_{\mathrm{ffn}}(i)})$.
# By the sum rule of notebook 1, the gradient of one set is the sum over the positions that use it:
#
# $$\frac{\partial L}{\partial \theta_{c,k}} = \sum_{i\,:\,\pi_c(i) = k} \frac{\partial L}{\partial \theta_{c}^{(i)}},$$
#
# where $\theta_c^{(i)}$ is "the copy used at position $i$". ALBERT's variants are four choices of
# $\pi$. A plan draws itself when it ends a cell (the first layer at the bottom):

# %%
Plan.build("shared-ffn", n_layers=6)

# %%
N = 6
plan_figure.plot_plans({name: Plan.build(name, n_layers=N)
                        for name in ("not-shared", "shared-attention", "shared-ffn", "all-shared")})

# %% [markdown]
# ## 4.2 Where in the code does the sharing happen?
#
# In one place: the stack builds `plan.n_sets(component)` parameter sets per component and, at
# position `i`, runs the set `plan.index(component, i)`. Models never look at a strategy's name.

# %%
course.Source(nn.Stack)

# %% [markdown]
# ## 4.3 From scratch: the shared gradient is the sum over positions
#
# Build an all-shared encoder and a not-shared one whose N layers are *copies* of the shared layer,
# run both on the same input, and compare: the shared set's gradient should equal the sum of the N
# copies' gradients (float64, so the match is to rounding).

# %%
def tiny(sharing, N=3):
    return AlbertConfig(vocab_size=50, embedding_size=8, hidden_size=8, num_hidden_layers=N,
                        num_attention_heads=2, intermediate_size=16, max_position_embeddings=16,
                        sharing=sharing)


minishare.manual_seed(0)
shared = AlbertModel(tiny("all-shared")).double()
copies = gradnorms.unshared_twin(shared)        # not-shared; position i holds a copy of the set the plan gives it

ids = np.random.default_rng(0).integers(0, 50, (2, 5))
weights = minishare.tensor(np.random.default_rng(1).standard_normal((2, 5, 8)))   # a random linear loss
for model in (shared, copies):
    (model(ids).last_hidden_state * weights).sum().backward()

name = "encoder.ffn_sets.{}.sublayer.ffn.weight"
per_position = [dict(copies.named_parameters())[name.format(i)].grad for i in range(3)]
print("shared gradient      :", dict(shared.named_parameters())[name.format(0)].grad[0, :4])
print("sum over 3 positions :", sum(per_position)[0, :4])
print("largest difference   :", float(np.abs(dict(shared.named_parameters())[name.format(0)].grad - sum(per_position)).max()))

# %% [markdown]
# ## 4.4 Parameters against depth
#
# Sharing decouples parameters from depth: all-shared stays flat, not-shared grows by one layer's
# worth (7.1M at H = 768) per position, and the two partial variants grow by one component's worth.

# %%
depths = course.pick(quick=[3, 6, 12, 24], full=[1, 2, 3, 6, 12, 18, 24, 36, 48])
variants = ("not-shared", "shared-attention", "shared-ffn", "all-shared")
counts = {v: [minishare.count_parameters(AlbertConfig.from_preset("albert-base", sharing=v, num_hidden_layers=n))
              for n in depths] for v in variants}
params_figures.plot_params_vs(depths, counts, "layer positions N",
                              "Parameters against depth (ALBERT-base shape: V = 30,000, E = 128, H = 768)")

# %% [markdown]
# ## 4.5 Memory: what sharing saves, and what it does not
#
# One training step holds four kinds of arrays. Parameters, gradients and optimizer state follow the
# *distinct tensors* (AdamW keeps two moments per tensor), so they shrink with sharing; activations
# follow the *computation* (every position saves its own intermediate results), so they do not.
# `minishare.analysis.memory.memory_breakdown` counts each kind in bytes, each distinct array once:

# %%
course.Source(memory.memory_breakdown)

# %%
B, T = course.pick(quick=(8, 32), full=(32, 64))
rng = np.random.default_rng(0)
ids = rng.integers(5, 1000, (B, T))


def loss_fn(model):                        # a fixed batch: memory does not depend on the tokens
    return model(ids).last_hidden_state.mean()


rows = []
for v in variants:
    minishare.manual_seed(0)
    model = AlbertModel(AlbertConfig.from_preset("albert-tiny", vocab_size=1000, sharing=v))
    optimizer = optim.AdamW(model.parameters(), lr=1e-3)
    rows.append((v, memory.memory_breakdown(model, optimizer, loss_fn)))
memory_figures.plot_memory(rows)

# %%
for v, r in rows:
    print(f"{v:17s} parameters {r['parameters'] / 2**20:5.2f} MiB   optimizer {r['optimizer'] / 2**20:5.2f} MiB"
          f"   activations {r['activations'] / 2**20:5.2f} MiB")

# %% [markdown]
# The activations are the same for every variant: a shared layer still runs at every position.
# For the same reason sharing does not cut compute: notebook 11 measures step time and FLOPs.
#
# ## 4.6 Exercises
#
# 1. Write ALBERT's `shared-attention` plan for N = 4 as an explicit schedule,
#    `Plan.build({"attention": [...], "ffn": [...]})`, and check it equals `Plan.build("shared-attention", 4)`.
# 2. Count `shared-ffn` for the ALBERT-base shape by hand: embedding + N attention sets + 1 FFN set +
#    pooler. Compare with the paper's 38M (Table 4, E = 128).
# 3. Explain why `memory_breakdown`'s gradients of `all-shared` are as small as its parameters,
#    although every position sends back a gradient.

# %%
mine = None      # TODO: Plan.build({"attention": [...], "ffn": [...]})
print("equal to shared-attention:", mine == Plan.build("shared-attention", 4))

# %% [markdown]
# ## 4.7 Predict, then run
#
# **Q1.** How many parameters does an ALBERT-base-shaped model with `shared-attention` and
# $E = 128$ hold? (The paper rounds it to 64M.)

# %%
guess = None
print(course.reveal(guess, minishare.count_parameters(AlbertConfig.from_preset("albert-base", sharing="shared-attention")),
                    "parameters"))

# %% [markdown]
# **Q2.** The albert-tiny models above have N = 4. With N = 12, how many times more optimizer
# state (AdamW: two moments per distinct tensor) does the not-shared model keep than the all-shared
# one?

# %%
guess = None
tiny12 = {v: minishare.count_parameters(AlbertConfig.from_preset("albert-tiny", vocab_size=1000, sharing=v,
                                                                  num_hidden_layers=12))
          for v in ("not-shared", "all-shared")}
print(course.reveal(guess, round(tiny12["not-shared"] / tiny12["all-shared"], 2),
                    "optimizer state, not-shared / all-shared, N = 12"))
