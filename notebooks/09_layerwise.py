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
# # 9. ALBERT's Figure 1: what sharing does to the layers
#
# Lan et al. (2019, Sec. 3.1, Figure 1) plot "the L2 distances and cosine similarity (in terms of
# degree) of the input and output embedding of each layer for BERT-large and ALBERT-large", and
# observe that with all parameters shared the transitions are much smoother from layer to layer.
# The paper does not say how the values are averaged; minishare defines it, measures it, and
# looks hard at the first point of the curve.
#
# **You will:** compute the two measures by hand for one model and match the library; train a
# BERT-style and an ALBERT-style model over seeds and draw Figure 1 with the untrained models as
# the control; explain the first point (a LayerNorm artifact with Post-LN).

# %%
import math

import numpy as np
from IPython.display import Markdown

import minishare
from minishare.analysis import layerwise, layerwise_figure
from minishare.experiments import course, exp_layerwise
from minishare.models import AlbertConfig, AlbertModel

print(course.setup())

# %% [markdown]
# ## 9.1 The math
#
# Let $h_l$ be the input of layer $l$ and $h_{l+1}$ its output, both $(B, T, H)$. For every
# non-padding token $t$:
#
# $$d_l(t) = \lVert h_{l+1}(t) - h_l(t) \rVert_2, \qquad
#   \theta_l(t) = \arccos \frac{h_l(t) \cdot h_{l+1}(t)}{\lVert h_l(t)\rVert\,\lVert h_{l+1}(t)\rVert}\ \text{(degrees)},$$
#
# and the value plotted for layer $l$ is the mean over all non-padding tokens of all examples.

# %% [markdown]
# ## 9.2 From scratch, then the library

# %%
minishare.manual_seed(0)
model = AlbertModel(AlbertConfig(vocab_size=200, embedding_size=16, hidden_size=32, num_hidden_layers=4,
                                 num_attention_heads=2, intermediate_size=64, max_position_embeddings=32))
ids = np.random.default_rng(0).integers(5, 200, (4, 12))
mask = np.ones_like(ids)
mask[:, 9:] = 0                                                   # the last three tokens are padding
states = [h.data.astype(np.float64) for h in model(ids, attention_mask=mask, output_hidden_states=True).hidden_states]
keep = mask.astype(bool)
by_hand = {"l2": [], "cosine_degrees": []}
for a, b in zip(states, states[1:]):                              # (B, T, H) each
    by_hand["l2"].append(float(np.linalg.norm(b - a, axis=-1)[keep].mean()))
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    by_hand["cosine_degrees"].append(float(np.degrees(np.arccos(np.clip(cos, -1, 1)))[keep].mean()))
library = layerwise.layer_transitions(model, [{"input_ids": ids, "attention_mask": mask}])
for key in by_hand:
    print(f"{key:15s} by hand {np.round(by_hand[key], 4)}\n{'':15s} library {np.round(library[key], 4)}")

# %% [markdown]
# (The library evaluates the angle as $2\arcsin(\lVert \hat u - \hat v\rVert / 2)$, which is
# accurate near 0° where $\arccos$ loses half its digits; the two agree to rounding here.)

# %%
course.Source(layerwise.layer_transitions)

# %% [markdown]
# ## 9.3 The first point: a LayerNorm artifact
#
# With Post-LN, every layer's output leaves a LayerNorm whose gain starts at 1, so its norm is
# $\sqrt{H}$ whatever the layer computed. The embedding output $h_0$ is not such an output (here
# an $E$-wide embedding projected to $H$), so the distance from $h_0$ to $h_1$ is dominated by the
# change of norm: by the triangle inequality $\lVert h_1 - h_0\rVert \ge \big|\lVert h_1\rVert - \lVert h_0\rVert\big|$.

# %%
norms = layerwise.state_norms(model, [{"input_ids": ids, "attention_mask": mask}])
print("mean norm of h_0 .. h_4:", np.round(norms, 3), "  sqrt(H) =", round(math.sqrt(32), 3))
print(f"the norm difference alone forces {abs(norms[1] - norms[0]) / library['l2'][0]:.0%} of the first distance")

# %% [markdown]
# ## 9.4 Figure 1, BERT-style against ALBERT-style, over seeds
#
# The `layerwise` experiment trains a BERT-style model ($E = H$, not shared) and an ALBERT-style
# model ($E < H$, all-shared), Post-LN, $N = 12$, once per seed, and measures each trained model
# and the same model untrained (seed for seed) on held-out batches.

# %%
result = course.experiment("layerwise", notebook="09")

# %%
m = result["models"]
series = {f"{style} ({kind})": r[kind] for style, r in m.items() for kind in ("trained", "untrained")}
layerwise_figure.plot_layer_transitions(series, title=f"N = {result['N']}, H = {result['H']}, Post-LN; BERT-style E = "
                                        f"{m['BERT-style']['E']} not-shared, ALBERT-style E = {m['ALBERT-style']['E']} all-shared")

# %%
Markdown(exp_layerwise.report(result, []))

# %%
Markdown(course.what_this_run_shows("layerwise", result))

# %% [markdown]
# The paper's models are 24 layers deep, 1,024 or more wide, trained for 125,000 steps; ours are
# tiny and briefly trained. Read the last sentence above before comparing the shape of the curves
# with the paper's.
#
# ## 9.5 Exercises
#
# 1. Repeat 9.3 with `norm_position="pre"`: what is the norm of the layer outputs now, and does
#    the first point still stand apart?
# 2. Define a "smoothness" of a curve yourself (e.g. the mean absolute change between
#    neighbouring layers, first layer excluded, as `exp_layerwise.roughness`) and compute it for
#    each seed. Is the difference between the styles larger than the spread over seeds?
# 3. Why does a layer that changes nothing read exactly 0° with the library's formula, and what
#    does `np.arccos` give for a cosine of 1 + 1e-16?

# %% [markdown]
# ## 9.6 Predict, then run
#
# **Q1.** The same tiny model built with `norm_position="pre"`: is the mean norm of the output of
# its second layer, $h_2$, larger or smaller than $\sqrt{H} = 5.657$, and by how much?

# %%
guess = None
minishare.manual_seed(0)
pre = AlbertModel(AlbertConfig(vocab_size=200, embedding_size=16, hidden_size=32, num_hidden_layers=4,
                               num_attention_heads=2, intermediate_size=64, max_position_embeddings=32,
                               norm_position="pre"))
pre_norms = layerwise.state_norms(pre, [{"input_ids": ids, "attention_mask": mask}])
print(course.reveal(guess, round(float(pre_norms[2]), 3), "mean norm of h_2 with Pre-LN"))

# %% [markdown]
# **Q2.** Two random vectors in 32 dimensions: the angle between them, in degrees, roughly?

# %%
guess = None
u, v = np.random.default_rng(1).standard_normal((2, 10_000, 32))
angles = np.degrees(np.arccos((u * v).sum(-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))))
print(course.reveal(guess, round(float(angles.mean()), 1), "mean angle of random vector pairs (degrees)"))

# %% [markdown]
# ## 9.7 Your own pretrained ALBERT or BERT
#
# The curves above come from tiny models trained for minutes. The paper's come from ALBERT-large
# and BERT-large. If you have a real pretrained ALBERT or BERT on disk in Hugging Face's layout (a
# folder with `config.json` and `model.safetensors`, e.g. one that `transformers`' `save_pretrained`
# wrote), minishare reads it (`AlbertModel.from_pretrained`) and measures the same two curves on the
# real 12- or 24-layer model. From a terminal:
#
#     python -m minishare layerwise --pretrained DIR --input-ids ids.npy --out runs/fig1
#
# The ids must come from the model's own tokenizer (e.g. `tokenizer(text)["input_ids"]` in
# `transformers`, saved with `np.save`): minishare's BPE is not that model's vocabulary. Without
# them, a folder with its `tokenizer.json` (and the `tokenizers` package installed) is measured on
# passages of the built-in English corpus encoded by it; otherwise the command measures random ids
# from the model's vocabulary and says so, since the paper measured real text. Nothing is downloaded here: set `pretrained` to your folder. Left as None, the cell
# writes a tiny, untrained 12-layer ALBERT in that layout with minishare's own `save_pretrained`
# and measures it instead.

# %%
import os
import tempfile

from minishare.models import AlbertForPreTraining

pretrained = None                                  # your folder, e.g. "/data/albert-large-v2"
if pretrained is None:
    pretrained = os.path.join(tempfile.mkdtemp(), "tiny-albert")
    minishare.manual_seed(0)
    AlbertForPreTraining(AlbertConfig(vocab_size=200, embedding_size=16, hidden_size=32, num_hidden_layers=12,
                                      num_attention_heads=2, intermediate_size=64,
                                      max_position_embeddings=32)).save_pretrained(pretrained)
print(sorted(os.listdir(pretrained)))
record = layerwise.pretrained_figure(pretrained, os.path.join(tempfile.mkdtemp(), "fig1"), seq_len=32)
layerwise_figure.plot_layer_transitions({f"{record['model_type']}, N = {record['layers']}": record},
                                        title=f"{record['pretrained']} on {record['input']}")
