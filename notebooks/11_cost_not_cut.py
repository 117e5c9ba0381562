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
# # 11. The cost that sharing does not cut
#
# "Fewer parameters, so it must be faster?" No. ALBERT-xxlarge holds fewer parameters than
# BERT-large (about 223M against 335M) and trains about 3 times slower (Lan et al., 2019,
# Sec. 4.3). Sharing stores fewer weights; every one of the N layer positions still runs its
# matrix products.
#
# **You will:** count FLOPs per token from a config, by hand and with the library; plot compute
# against parameters for ALBERT's Table 1; measure step and inference time against depth, shared
# against not shared; find where the small extra time of a shared step goes.

# %%
import statistics

import numpy as np

import minishare
from minishare import optim
from minishare.analysis import flops, flops_figure, memory, memory_figures, params_figures
from minishare.experiments import course
from minishare.models import AlbertConfig, AlbertForPreTraining

print(course.setup())

# %% [markdown]
# ## 11.1 The math: FLOPs per token
#
# Counting one multiply-accumulate (MAC) as 2 FLOPs and only the matrix products, a token costs,
# per layer position, $4H^2$ MACs for the attention projections, $2TH$ for the attention scores
# and their weighted sum over $T$ keys, and $2HI$ for the FFN ($H \to I \to H$):
#
# $$\text{forward FLOPs per token} \approx 2\Big(EH + N\,(4H^2 + 2TH + 2HI) + HE + EV\Big),
# \qquad \text{training} \approx 3 \times \text{forward}.$$
#
# $M$, the number of distinct sets, appears nowhere.

# %% [markdown]
# ## 11.2 From scratch, then the library

# %%
def forward_flops(V, E, H, I, N, T=512):
    per_layer = 4 * H * H + 2 * T * H + 2 * H * I
    projection = E * H if E != H else 0
    return 2 * (projection + N * per_layer + H * E + E * V)


for name in ("bert-large", "albert-xxlarge"):
    c = AlbertConfig.from_preset(name)
    by_hand = forward_flops(c.vocab_size, c.embedding_size, c.hidden_size, c.intermediate_size, c.num_hidden_layers)
    library = 2 * flops.macs_per_token(c, 512)["total"]
    print(f"{name:15s} by hand {by_hand / 1e9:6.2f} GFLOPs/token   library {library / 1e9:6.2f}   "
          f"parameters {minishare.count_parameters(c) / 1e6:6.1f}M")

# %%
course.Source(flops.macs_per_token)

# %% [markdown]
# ## 11.3 Compute against parameters, ALBERT's Table 1

# %%
table = flops.preset_table()
for r in table:
    print(f"{r['name']:15s} {r['parameters'] / 1e6:7.1f}M parameters ({r['params_vs_bert-large']:.2f}× bert-large)   "
          f"{r['forward_gflops']:6.2f} GFLOPs/token ({r['flops_vs_bert-large']:.2f}× bert-large)")
flops_figure.plot_flops(table)

# %% [markdown]
# ## 11.4 Measured: time against depth, shared and not shared
#
# Tiny ALBERTs with N = 2, 4, 8 (quick) positions, all-shared against not-shared, on one fixed
# batch. `memory.depth_sweep` times the two models back to back in every round, so a change in
# the machine's load reaches both alike; then it takes medians.

# %%
depths = course.pick(quick=(2, 4, 8), full=(2, 4, 8, 12))
B, T = course.pick(quick=(8, 32), full=(16, 64))
rng = np.random.default_rng(0)
ids = rng.integers(5, 1000, (B, T))
labels = np.where(rng.random((B, T)) < 0.15, ids, -100)


def make_model(N, sharing):
    minishare.manual_seed(0)
    return AlbertForPreTraining(AlbertConfig.from_preset("albert-tiny", vocab_size=1000, num_hidden_layers=N,
                                                         sharing=sharing))


def loss_fn(model):
    return model(ids, labels=labels).loss


sweep = memory.depth_sweep(make_model, depths, loss_fn, repeats=course.pick(quick=3, full=7))
cpu_medians = {s: [{mode: statistics.median(r["times"][mode]["cpu"]) for mode in ("train", "inference")} for r in rows]
               for s, rows in sweep.items()}
memory_figures.plot_step_time(depths, cpu_medians)

# %%
params_figures.plot_params_vs(depths, {s: [r["n_parameters"] for r in rows] for s, rows in sweep.items()},
                              "layer positions N", "The same models: parameters against depth (albert-tiny, H = 128)")

# %%
for i, N in enumerate(depths):
    times = {s: rows[i]["times"]["train"] for s, rows in sweep.items()}
    ratios = memory.paired_ratios(times, "all-shared", "not-shared", clock="cpu")
    print(f"N = {N:2d}: all-shared step / not-shared step, per round: "
          + " ".join(f"{r:.2f}" for r in ratios) + f"   (median {statistics.median(ratios):.2f})")

# %% [markdown]
# The per-round ratios sit near 1: this run does not show sharing making a step faster or slower,
# at any depth. Nor can the full reproduction's paired intervals tell (`book/figures/memory`): at
# N = 2 its interval for all-shared − not-shared runs from −0.021 s to +0.002 s a step, which still
# allows a speed-up of about a tenth, and deciding that needs many rounds on a quiet machine. One candidate for a difference is the sum rule: a set used at N
# positions receives N gradients that are added (N − 1 additions of a weight-sized array).
# `memory.profile_step` measures the share of a step spent there and in the optimizer:

# %%
for sharing in ("not-shared", "all-shared"):
    model = make_model(depths[-1], sharing)
    profile = memory.profile_step(model, loss_fn, optim.AdamW(model.parameters(), lr=1e-3))
    print(f"{sharing:11s} N = {depths[-1]}: sum rule {profile['accumulate'] / profile['total']:.1%} of a step, "
          f"optimizer {profile['optimizer'] / profile['total']:.1%}")

# %% [markdown]
# (These times are from whatever machine runs the notebook; on a busy machine they scatter. Trust
# the per-round ratios more than any single median, and the FLOPs count more than both.)
#
# What sharing does cut is the bytes that data-parallel training sends each step, one gradient
# per *distinct* tensor: notebook 12 measures them.

# %% [markdown]
# ## 11.5 Exercises
#
# 1. **An optimizer step that updates each shared tensor once.** The naive loop below walks
#    `named_parameters(remove_duplicate=False)` and applies SGD to every *name*. A tied model
#    reaches its word-embedding matrix under two names (notebook 7): by how much does it move
#    compared with one update? Fix the loop. (A shared layer set has one name: the plan reuses
#    the same module, so only aliases such as a tie show the bug.)
# 2. With `flops.macs_per_token`, find the sequence length T at which attention scores cost as
#    much as the attention projections for BERT-base.
# 3. ALBERT-xxlarge has 12 layers and BERT-large 24. Which term of the FLOPs formula makes
#    xxlarge cost more anyway?

# %%
model = make_model(4, "all-shared")
before = {name: p.data.copy() for name, p in model.named_parameters()}
loss_fn(model).backward()
for name, p in model.named_parameters(remove_duplicate=False):   # TODO: update each tensor once
    if p.grad is not None:                                         # (the SOP head got no gradient)
        p.data = p.data - 0.1 * p.grad
name = "albert.embeddings.word_embeddings.weight"
p = dict(model.named_parameters())[name]
print(f"the tied word embeddings moved {np.abs(p.data - before[name]).max() / np.abs(0.1 * p.grad).max():.0f}× one update")

# %% [markdown]
# ## 11.6 Predict, then run
#
# **Q1.** The table above is for sequences of T = 512 tokens. At T = 128, ALBERT-xxlarge against
# BERT-large: the ratio of forward FLOPs per token? (Which term of 11.1 shrinks with T?)

# %%
guess = None
xxlarge, large = (AlbertConfig.from_preset(name) for name in ("albert-xxlarge", "bert-large"))
print(course.reveal(guess, round(flops.flops_per_token(xxlarge, 128) / flops.flops_per_token(large, 128), 2),
                    "FLOPs per token at T = 128, albert-xxlarge / bert-large"))

# %% [markdown]
# **Q2.** An all-shared and a not-shared ALBERT of the same shape, N = 12, $H = 768$: the ratio of
# their forward FLOPs per token?

# %%
guess = None
shared, unshared = (AlbertConfig.from_preset("albert-base", sharing=s) for s in ("all-shared", "not-shared"))
print(course.reveal(guess, flops.flops_per_token(shared) / flops.flops_per_token(unshared), "FLOPs, shared / not shared"))
