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
# # 3. Where BERT's parameters go, and ALBERT's factorized embedding
#
# Before sharing anything, count. BERT-base holds about 108 million parameters; where are they? The
# answer explains ALBERT's first idea (Lan et al., 2019, Sec. 3.1): the word-embedding table is
# $V \times H$, and it grows with the hidden size although a word's context-free meaning needs far
# fewer numbers than a layer's context-dependent state.
#
# **You will:** read a config's parameter breakdown; count an embedding by hand and match the
# library; plot parameters against the embedding size E; compare with ALBERT's Table 3.

# %%
import minishare
from minishare.analysis import params, params_figures
from minishare.experiments import course
from minishare.models import AlbertConfig
from minishare.models.embeddings import AlbertEmbeddings

print(course.setup())

# %% [markdown]
# ## 3.1 A config shows where its parameters go
#
# A config is only numbers, but it draws its own breakdown when it ends a cell: the model is built
# *shape-only* (no memory allocated), and every distinct tensor is counted once.

# %%
AlbertConfig.from_preset("bert-base")

# %% [markdown]
# The word embeddings alone are $V \cdot H = 30{,}000 \times 768 = 23$M, a fifth of BERT-base.
# In BERT-large ($H = 1024$) they are 30.7M; at ALBERT-xxlarge's $H = 4096$ they would be 123M.

# %% [markdown]
# ## 3.2 The math: factorized embedding parameterization
#
# ALBERT embeds each token in a small space of size $E$ and projects it to $H$:
#
# $$\underbrace{V \times H}_{\text{BERT}} \quad\longrightarrow\quad \underbrace{V \times E \;+\; E \times H}_{\text{ALBERT}},
# \qquad \text{smaller whenever } E < \frac{VH}{V + H}.$$
#
# With $V = 30{,}000$, $H = 768$, $E = 128$: $23.0$M becomes $3.84$M $+ 0.098$M.

# %% [markdown]
# ## 3.3 From scratch: count the embedding, then ask the library
#
# The embedding block holds word ($V \times E$), position ($P \times E$, $P = 512$) and token-type
# ($2 \times E$) tables, a LayerNorm over $E$ (weight and bias) and, when $E \ne H$, the projection
# $E \to H$ with its bias.

# %%
def embedding_parameters(V, E, H, P=512, types=2):
    tables = (V + P + types) * E
    layer_norm = 2 * E
    projection = E * H + H if E != H else 0
    return tables + layer_norm + projection


for E in (128, 768):
    config = AlbertConfig.from_preset("albert-base", embedding_size=E)
    library = minishare.count_parameters(AlbertEmbeddings(config))
    print(f"E = {E:4d}: by hand {embedding_parameters(30000, E, 768):>12,}   library {library:>12,}")

# %%
course.Source(AlbertEmbeddings.__init__)

# %% [markdown]
# ## 3.4 The same breakdown for ALBERT-base, side by side with BERT-base
#
# ALBERT-base is BERT-base with $E = 128$ and all layers shared (notebook 4).
# `params.parameter_breakdown` files every distinct tensor under one part, so the parts add up to
# `count_parameters`:

# %%
params_figures.plot_param_breakdown({preset: params.parameter_breakdown(params.build_shape_only(AlbertConfig.from_preset(preset)))
                                     for preset in ("bert-base", "albert-base")},
                                    title="Where the parameters go: BERT-base against ALBERT-base (V = 30,000, H = 768, N = 12)")

# %% [markdown]
# ## 3.5 Parameters against E (ALBERT Table 3)
#
# Sweep $E$ for an ALBERT-base shape, not shared and all-shared. The library counts each
# configuration shape-only, in milliseconds.

# %%
Es = course.pick(quick=[64, 128, 256, 768], full=[32, 64, 128, 256, 384, 512, 768])
series = {sharing: [minishare.count_parameters(AlbertConfig.from_preset("albert-base", embedding_size=E, sharing=sharing))
                    for E in Es] for sharing in ("not-shared", "all-shared")}
params_figures.plot_params_vs(Es, series, "embedding size E", "Parameters against E (ALBERT-base shape: V = 30,000, H = 768, N = 12)")

# %% [markdown]
# Our exact counts beside the paper's rounded ones (Table 3 of Lan et al.):

# %%
rows = [row for row in params.albert_tables() if row[0] == "Table 3"]
print(params.format_table(rows, ("table", "configuration", "ours", "paper")))
params_figures.plot_param_bars([(r[1], r[2], r[3]) for r in rows], "ALBERT Table 3: parameters, ours (exact) and the paper's (rounded)")

# %% [markdown]
# **What the paper found, and what it costs.** In ALBERT's Table 3, the accuracy of not-shared
# models barely changes with $E$, while all-shared models do best around $E = 128$ (Lan et al.,
# 2019, Sec. 4.4). Factorizing saves memory, not
# computation: the tokens still pass through every layer at width $H$ (notebook 11).
#
# ## 3.6 Exercises
#
# 1. For which $E$ does the factorized embedding of BERT-large ($V = 30{,}000$, $H = 1024$) hold
#    exactly as many parameters as the unfactorized one? Check with `embedding_parameters`.
# 2. Count one encoder layer of BERT-base by hand (attention $4H^2 + 4H$, FFN $2HI + I + H$, two
#    LayerNorms) and compare with the config's table divided by 12.
# 3. Find the group in the table that does **not** shrink when $E$ goes from 768 to 128, and say why.

# %% [markdown]
# ## 3.7 Predict, then run
#
# **Q1.** A multilingual vocabulary of $V = 50{,}000$ at ALBERT-xxlarge's $H = 4096$: how many times
# larger is the unfactorized word embedding ($V \times H$) than the factorized one with $E = 128$
# ($V \times E + E \times H$)?

# %%
guess = None
V, E, H = 50_000, 128, 4096
print(course.reveal(guess, round(V * H / (V * E + E * H), 1), "unfactorized / factorized"))

# %% [markdown]
# **Q2.** What fraction of ALBERT-base's parameters (all-shared, $E = 128$) is the word-embedding
# table?

# %%
guess = None
albert_base = params.parameter_breakdown(params.build_shape_only(AlbertConfig.from_preset("albert-base")))
total = sum(n for parts in albert_base.values() for n in parts.values())
print(course.reveal(guess, round(albert_base["embedding"]["word (V × E)"] / total, 3),
                    "fraction of albert-base in the word embeddings"))
