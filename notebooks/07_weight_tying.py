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
# # 7. Weight tying, plain and with a factorized embedding
#
# The oldest parameter sharing in language models: the output layer that scores the V words uses
# the **input embedding matrix itself** (Press & Wolf, 2017; Inan et al., 2017). ALBERT's MLM head
# does it too, with a twist: its embedding is factorized (V × E), so the head first maps H → E.
#
# **You will:** see what is tied (and prove it is one tensor, not a copy); verify that the tied
# matrix gets the sum of two gradients; count what tying saves, plain and factorized; train tied
# against untied at equal steps.

# %%
import numpy as np

import minishare
from minishare import nn, optim
from minishare.analysis.course_figures import plot_bars
from minishare.experiments import course
from minishare.models import AlbertConfig, AlbertForPreTraining, AlbertMLMHead

print(course.setup())

# %% [markdown]
# ## 7.1 The math
#
# The input side looks a token up: $x_t = W[\mathrm{id}_t]$, a row of $W \in \mathbb{R}^{V \times E}$.
# The output side scores every word against the final state $h$ (mapped to size $E$ first when
# $E < H$):
#
# $$\mathrm{logits} = g(h)\, W^\top + b, \qquad g(h) = \mathrm{LN}(\mathrm{act}(W_d h + b_d)) \in \mathbb{R}^E .$$
#
# Untied, the output has its own $V \times E$ matrix. Tied, it is the **same** $W$, used twice, so
# $\partial L / \partial W$ is the sum of the lookup's gradient (only the rows of the tokens in the
# batch) and the output layer's gradient (every row). Notebook 1's sum rule again.

# %%
course.Source(AlbertMLMHead)

# %% [markdown]
# ## 7.2 Is my tying real, or a copy?
#
# A tie is one tensor reachable under two names. Equal values are not enough: a copy drifts away
# after the first optimizer step.

# %%
config = AlbertConfig.from_preset("albert-tiny", vocab_size=500)
minishare.manual_seed(0)
model = AlbertForPreTraining(config)
embedding = model.albert.embeddings.word_embeddings.weight
print("the same object:", model.predictions.decoder.weight is embedding)
print("names of the one tensor:", model.shared_names())

# %%
untied = AlbertForPreTraining(AlbertConfig.from_preset("albert-tiny", vocab_size=500, tie_word_embeddings=False))
untied.predictions.decoder.weight.data = untied.albert.embeddings.word_embeddings.weight.data.copy()  # a copy
ids = np.random.default_rng(0).integers(5, 500, (4, 16))
labels = np.where(np.random.default_rng(1).random((4, 16)) < 0.3, ids, -100)
for m in (model, untied):
    opt = optim.AdamW(m.parameters(), lr=1e-2)
    m(ids, labels=labels).loss.backward()
    opt.step()
gap = np.abs(untied.predictions.decoder.weight.data - untied.albert.embeddings.word_embeddings.weight.data).max()
print(f"after one step, the copy differs from the embedding by up to {gap:.4f}; the tie by "
      f"{np.abs(model.predictions.decoder.weight.data - embedding.data).max():.4f}")

# %% [markdown]
# ## 7.3 From scratch: the tied gradient is the sum of two uses
#
# In float64: compute the gradient of the tied model, then of an untied twin with the same values,
# and add the twin's two gradients.

# %%
def twin(tie):
    minishare.manual_seed(0)
    return AlbertForPreTraining(AlbertConfig.from_preset("albert-tiny", vocab_size=500, tie_word_embeddings=tie)).double()


tied, twin_untied = twin(True), twin(False)
twin_untied.load_state_dict(tied.state_dict())      # every value equal; the output matrix is a copy
for m in (tied, twin_untied):
    m(ids, labels=labels).loss.backward()
as_lookup = twin_untied.albert.embeddings.word_embeddings.weight.grad
as_output = twin_untied.predictions.decoder.weight.grad
print("largest |tied grad − (lookup grad + output grad)|:",
      float(np.abs(tied.predictions.decoder.weight.grad - (as_lookup + as_output)).max()))
print(f"rows the lookup touches: {int((np.abs(as_lookup).sum(1) > 0).sum())} of {config.vocab_size}; "
      f"rows the output layer touches: {int((np.abs(as_output).sum(1) > 0).sum())}")

# %% [markdown]
# ## 7.4 What tying saves, plain and factorized
#
# Untying adds one $V \times E$ matrix: $V \cdot H$ for BERT ($E = H$), only $V \cdot E$ for ALBERT.

# %%
def pretraining_parameters(preset, tie):
    """Parameters of ALBERT/BERT with both pre-training heads, built shape-only (no memory)."""
    with nn.init.shape_only():
        return minishare.count_parameters(AlbertForPreTraining(AlbertConfig.from_preset(preset, tie_word_embeddings=tie)))


presets = ("bert-base", "albert-base", "albert-xxlarge")
counts = {label: {p: pretraining_parameters(p, tie) / 1e6 for p in presets}
          for label, tie in (("tied", True), ("untied", False))}
for p in presets:
    c = AlbertConfig.from_preset(p)
    print(f"{p:15s} untying adds {(counts['untied'][p] - counts['tied'][p]) * 1e6:>12,.0f} = V × E = "
          f"{c.vocab_size:,} × {c.embedding_size}")
plot_bars(counts, ylabel="parameters with pre-training heads (millions)",
          title="Tied against untied output layer: untying adds V × E (V = 30,000)")

# %% [markdown]
# ## 7.5 What tying costs, or gives: tied against untied at equal steps, over seeds
#
# The `tying` experiment of `reproduce` trains not-shared ALBERTs with a tied and an untied output
# layer, with plain ($E = H$) and factorized ($E < H$) embeddings, once per seed, on the synthetic
# grammar corpus (stories of a day's events at six places; about 120 words, V = 317 tokens, so the
# output matrix that tying saves is small here). Quick mode trains tiny
# ones here; full mode loads the committed full run.

# %%
result = course.experiment("tying", notebook="07")

# %%
course.show_experiment("tying", result, notebook="07")

# %% [markdown]
# ## 7.6 Exercises
#
# 1. Tie a `TransformerConfig` with `embedding_size=32, hidden_size=64`: where does the H → E map
#    live in `minishare.models.seq2seq.OutputProjection`, and how many parameters does it add?
# 2. Break a tie on purpose: after building a tied model, assign
#    `model.predictions.decoder.weight = minishare.nn.Parameter(embedding.data.copy())`. What does
#    `model.shared_names()` print now, and what does `count_parameters` add?
# 3. Save a tied model with `minishare.save` and load it back: is the tie kept? (Check with `is`.)

# %% [markdown]
# ## 7.7 Predict, then run
#
# **Q1.** BERT-large has $V = 30{,}000$ and $H = E = 1024$. How many parameters does untying its
# output layer add?

# %%
guess = None
print(course.reveal(guess, round((pretraining_parameters("bert-large", False) - pretraining_parameters("bert-large", True))),
                    "parameters added by untying bert-large"))

# %% [markdown]
# **Q2.** Tying shares the MLM decoder's *weight* with the word embeddings. How many parameters
# does the tied decoder still hold of its own in ALBERT-base ($V = 30{,}000$, $E = 128$)?

# %%
guess = None
with nn.init.shape_only():
    albert_base = AlbertForPreTraining(AlbertConfig.from_preset("albert-base"))
shared = {id(p) for p in albert_base.albert.parameters()}
own = sum(p.size for p in albert_base.predictions.decoder.parameters() if id(p) not in shared)
print(course.reveal(guess, own, "parameters of the tied decoder not shared with the embeddings"))
