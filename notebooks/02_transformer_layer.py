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
# # 2. A Transformer layer, piece by piece
#
# A Transformer layer is two components, each inside a residual connection with a LayerNorm:
# multi-head self-attention, then a position-wise feed-forward network (FFN). These components are
# the units that ALBERT and Takase & Kiyono share, so it pays to know exactly which tensors each
# holds. (Vaswani et al., 2017, Sec. 3; Xiong et al., 2020, for the LayerNorm position.)
#
# **You will:** compute attention by hand and match the library's module; see the causal mask in
# the attention map; count a layer's parameters; compare Post-LN with Pre-LN on how much each
# layer changes its input.

# %%
import numpy as np

import minishare
from minishare import nn
from minishare.analysis import gradnorms_figure
from minishare.analysis.course_figures import plot_attention
from minishare.experiments import course
from minishare.models import AlbertConfig, AlbertForPreTraining

print(course.setup())

# %% [markdown]
# ## 2.1 The math
#
# For a sequence of $T$ vectors of size $H$ (a tensor $x$ of shape $(B, T, H)$) and $h$ heads of
# size $d = H/h$:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d}}\right) V,
# \qquad Q = xW_Q^\top + b_Q,\; K = xW_K^\top + b_K,\; V = xW_V^\top + b_V,$$
#
# computed for every head on its slice of $d$ features, concatenated, and projected by $W_O$
# (the library calls the four $H \times H$ matrices `query`, `key`, `value`, `dense`, ALBERT's
# names). The FFN is $\mathrm{FFN}(x) = W_2\,\mathrm{act}(W_1 x + b_1) + b_2$, $H \to I \to H$.
#
# Each component $f$ sits in a residual connection, in one of two arrangements:
#
# | | equation | used by |
# |---|---|---|
# | Post-LN | $x \leftarrow \mathrm{LN}(x + f(x))$ | Vaswani et al., BERT, ALBERT |
# | Pre-LN | $x \leftarrow x + f(\mathrm{LN}(x))$, and one LN at the end | Xiong et al.; Takase & Kiyono report both |

# %% [markdown]
# ## 2.2 From scratch: attention with its shapes
#
# Build the library's module, then recompute its output by hand from its own weights, printing
# every shape. A causal mask lets query $t$ see keys $s \le t$ only (a decoder must not see the
# future).

# %%
minishare.manual_seed(0)
B, T, H, heads = 1, 6, 16, 2
d = H // heads
attention = nn.MultiHeadAttention(H, heads)
x = minishare.tensor(np.random.default_rng(0).standard_normal((B, T, H)).astype(np.float32))
mask = nn.causal_mask(T)                                                   # (1, 1, T, T), True = may attend


def heads_of(t):                                                           # (B, T, H) -> (B, h, T, d)
    return t.data.reshape(B, T, heads, d).transpose(0, 2, 1, 3)


q, k, v = (heads_of(layer(x)) for layer in (attention.query, attention.key, attention.value))
scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)                          # (B, h, T, T)
scores = np.where(mask, scores, -np.inf)
probs = np.exp(scores - scores.max(-1, keepdims=True))
probs /= probs.sum(-1, keepdims=True)                                      # (B, h, T, T), rows sum to 1
mixed = (probs @ v).transpose(0, 2, 1, 3).reshape(B, T, H)                 # (B, T, H)
by_hand = attention.dense(minishare.tensor(mixed)).data                    # (B, T, H)

for name, value in [("x", x.data), ("q, k, v", q), ("scores", scores), ("probs", probs),
                    ("heads concatenated", mixed), ("output", by_hand)]:
    print(f"{name:20s} {value.shape}")
print("largest difference from the module:", float(np.abs(by_hand - attention(x, mask=mask).data).max()))

# %%
plot_attention(probs[0], labels=["the", "cat", "sat", "on", "a", "mat"],
               title=f"Causal self-attention, untrained (T = {T}, H = {H}, {heads} heads of d = {d})")

# %% [markdown]
# The upper triangle is exactly zero: the mask set those scores to $-\infty$ before the softmax.
# Here is the library's forward, the same steps with the shapes in comments:

# %%
course.Source(nn.MultiHeadAttention.forward)

# %% [markdown]
# ## 2.3 The residual arrangement, and the parameters of one layer

# %%
course.Source(nn.Residual.forward)

# %%
layer = nn.encoder(minishare.sharing.Plan.build("not-shared", 1), hidden_size=H, num_heads=heads,
                   intermediate_size=4 * H)
for name, p in layer.named_parameters():
    print(f"{name:45s} {str(p.shape):12s} {p.size:6,}")
print("total:", minishare.count_parameters(layer), " = 4H² + 4H (attention) + 2·H·4H + 4H + H (FFN) + 2 × 2H (LayerNorms)",
      "=", 4 * H * H + 4 * H + 2 * H * 4 * H + 4 * H + H + 4 * H)

# %% [markdown]
# ## 2.4 Post-LN against Pre-LN: the gradient each layer receives
#
# Xiong et al. (2020) show that at initialization a Post-LN stack's gradients grow toward the
# output layers while Pre-LN's stay level, which is why Post-LN needs a learning-rate warm-up.
# `minishare.analysis.gradnorms.position_gradient_norms` measures the norm of the gradient that
# reaches each layer position; here for untrained 6-layer ALBERTs (BERT's initialization,
# standard deviation 0.02) on one MLM batch, over several seeds.

# %%
from minishare.analysis import gradnorms

N = course.pick(quick=6, full=12)
seeds = course.pick(quick=(0, 1), full=(0, 1, 2))
ids = np.random.default_rng(1).integers(5, 1000, (8, 32))
labels = np.where(np.random.default_rng(2).random((8, 32)) < 0.15, ids, -100)   # 15% of tokens are MLM targets
panels = {}
for position in ("post", "pre"):
    norms = []
    for seed in seeds:
        minishare.manual_seed(seed)
        model = AlbertForPreTraining(AlbertConfig(
            vocab_size=1000, embedding_size=64, hidden_size=64, num_hidden_layers=N, num_attention_heads=2,
            intermediate_size=256, sharing="not-shared", norm_position=position, max_position_embeddings=64))
        norms.append(gradnorms.position_gradient_norms(model, lambda m: m(ids, labels=labels).loss)["layer"])
    panels[(position, 0)] = {f"not-shared, N = {N}": norms}
gradnorms_figure.plot_gradient_norms(panels, {"post": "Post-LN", "pre": "Pre-LN"}, [0],
                                     f"Gradient norm per layer position at initialization ({len(seeds)} seeds, H = 64)")

# %%
for position in ("post", "pre"):
    mean = np.mean(panels[(position, 0)][f"not-shared, N = {N}"], axis=0)
    print(f"{position}-LN: last / first position = {mean[-1] / mean[0]:.3f}; "
          f"mean norm {mean.mean():.4f}")

# %% [markdown]
# Read the ratio the cell prints before believing any story: in models this small and this close
# to the identity (each layer changes its input by a few percent at initialization), the growth
# Xiong et al. derive for deep, wide Post-LN stacks may not show. What it does show is the tool:
# notebook 10 uses it on trained models, where Takase & Kiyono's argument about the lowest and the
# highest layers can be checked.
#
# ## 2.5 Exercises
#
# 1. **Padding masks.** Build a `(B, T)` 0/1 `attention_mask` with the last two tokens as padding,
#    turn it into the `(B, 1, 1, T)` boolean mask with `nn.padding_mask`, and check by hand that
#    every query gives those two keys probability exactly 0.
# 2. **Heads from scratch.** Write `split_heads(t)` and `merge_heads(t)` for any number of heads and
#    check your attention against `nn.MultiHeadAttention` for `heads = 1, 2, 4`.
# 3. **Why √d?** For random $q, k$ with unit-variance entries, the dot product $q \cdot k$ has variance
#    $d$. Measure it for $d = 16$ and $d = 256$, and explain what happens to the softmax without the
#    scale.

# %%
def split_heads(t, heads):
    """(B, T, H) array -> (B, heads, T, H / heads). TODO: your code."""
    return None


print("split_heads done:", split_heads(np.zeros((1, T, H)), 2) is not None)

# %% [markdown]
# ## 2.6 Predict, then run
#
# **Q1.** How many parameters does `nn.MultiHeadAttention(64, 4)` hold? (Four $H \times H$
# matrices with biases; the number of heads does not enter. Why not?)

# %%
guess = None
print(course.reveal(guess, minishare.count_parameters(nn.MultiHeadAttention(64, 4)), "parameters"))

# %% [markdown]
# **Q2.** In the causal attention above, what probability does the first query (position 0) give
# to itself, in every head?

# %%
guess = None
print(course.reveal(guess, float(probs[0, :, 0, 0].min()), "probability of key 0 for query 0"))

# %% [markdown]
# **Q3.** In a Post-LN layer with $H = 48$, every output vector is LayerNormed (weight 1, bias 0
# at initialization). What is its Euclidean norm?

# %%
guess = None
minishare.manual_seed(0)
post = nn.encoder(minishare.sharing.Plan.build("not-shared", 1), hidden_size=48, num_heads=2,
                  intermediate_size=192, norm_position="post")
out = post(minishare.tensor(np.random.default_rng(2).standard_normal((1, 4, 48)).astype(np.float32)),
           {"attention": {"mask": None}, "ffn": {}})
print(course.reveal(guess, round(float(np.linalg.norm(out.data[0, 0])), 3), "norm of one output vector"))
