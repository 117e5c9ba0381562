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
# # 15. Convert, don't retrain
#
# ALBERT and the Universal Transformer share layers from the first step of training. Bae et al.
# (2024, "Relaxed Recursive Transformers") start from a model that was trained **without**
# sharing and turn it into a shared one: tie its N layers into M sets, initialize each set from
# the layers it replaces, and give every position back a little freedom with a low-rank
# correction of its own. Basis Sharing (Wang et al., 2024) is the training-free neighbour: the
# layers keep their own weights, written over one shared basis.
#
# **You will:** tie a model's layers by a plan and count what that saves; write a position's
# correction as the truncated SVD of what tying took away, and check that rank 0 gives the shared
# model and full rank the original; measure Basis Sharing's error against its rank; run the
# chapter's experiment (held-out loss against unique parameters); draw three plans from the
# literature.

# %%
import numpy as np

import minishare
from minishare import sharing
from minishare.analysis import count_parameters, plan_figure, training_figures
from minishare.experiments import course, exp_relaxed
from minishare.models import DecoderLM, TransformerConfig
from minishare.models.recursive import source_layers, to_basis_shared, to_recursive, to_relaxed
from minishare.nn.basis import reconstruction_error
from minishare.nn.lora import LoRALinear, lora_from_svd
from minishare.ops.lora import LoRALinear as LoRALinearOp

print(course.setup())

# %% [markdown]
# ## 15.1 The relaxed layer
#
# Position ℓ of a Recursive Transformer computes with the weight $W'$ of the set its plan gives
# it. Relaxed, it adds a correction of rank $r$ that only it uses:
#
# $$h = (W'_{\mathrm{set}(\ell)} + B_\ell A_\ell)\,x + b, \qquad B_\ell \in \mathbb{R}^{d_{out} \times r},\ A_\ell \in \mathbb{R}^{r \times d_{in}} .$$
#
# The op never forms $B A$: the correction costs $r(d_{in} + d_{out})$ numbers and multiply-adds
# per row instead of $d_{in} d_{out}$. Its backward, written out beside the forward:

# %%
course.Source(LoRALinearOp)

# %% [markdown]
# ## 15.2 Tying a model's layers
#
# Take a model of N = 4 layers and tie them by Cycle into M = 2 sets. Each set starts from the
# layers it replaces: their **average**, every (N/M)-th layer (**stepwise**) or the first M
# (**lower**), the three initializations the paper compares.

# %%
minishare.manual_seed(0)
config = TransformerConfig(vocab_size=50, hidden_size=16, num_attention_heads=2, intermediate_size=64,
                           num_hidden_layers=4, max_position_embeddings=32, norm_position="pre")
original = DecoderLM(config).double()
cycle = sharing.Plan.build("cycle", 4, 2)
print("plan:", cycle)
for init in ("average", "stepwise", "lower"):
    print(f"{init:>8}: set j starts from layers", [source_layers(cycle, "ffn", j, init) for j in range(2)])
recursive = to_recursive(original, cycle, "average")
print(f"parameters: original {count_parameters(original):,}, recursive {count_parameters(recursive):,}")

# %% [markdown]
# ## 15.3 The correction: what tying took away, in rank r
#
# The paper initializes $B_\ell A_\ell$ from the truncated SVD of the residual
# $W_\ell - W'_{\mathrm{set}(\ell)} = U \Sigma V^\top$: $B = U_r \Sigma_r$, $A = V_r^\top$, the best
# rank-r approximation of the residual (Eckart and Young). So rank 0 is the recursive model and
# rank $\min(d_{in}, d_{out})$ the original. The LayerNorms stay shared here (the paper relaxes the
# linear layers); a fresh model's LayerNorms are all equal, so full rank gives the original back
# exactly.

# %%
course.Source(lora_from_svd)

# %%
ids = np.array([[1, 5, 9, 2, 7, 3]])


def logits(model):
    return model(ids).logits.numpy()


for r in (0, 2, 8, 16):
    relaxed = to_relaxed(original, cycle, r)
    print(f"r = {r:>2}: {count_parameters(relaxed):>6,} parameters, max |logits - original| = "
          f"{np.abs(logits(relaxed) - logits(original)).max():.2e}, - recursive = "
          f"{np.abs(logits(relaxed) - logits(recursive)).max():.2e}")

# %% [markdown]
# Each rank adds $r(d_{in} + d_{out})$ per matrix and position: 4 positions × (4 · 32 + 80 + 80) =
# 1,152 numbers per unit of rank here. The shared $W'$ is one tensor at two positions, so it gets
# the sum of their gradients, notebook 1's rule once more:

# %%
relaxed = to_relaxed(original, cycle, 2)
first, third = relaxed.decoder.ffn_sets[0].sublayer.ffn, relaxed.decoder.ffn_sets[2].sublayer.ffn
print("positions 0 and 2 hold one W:", first.weight is third.weight, "| their own A:", first.lora_A is not third.lora_A)
print(relaxed.decoder.ffn_sets[0].sublayer.ffn)

# %% [markdown]
# ## 15.4 Basis Sharing: one SVD across the layers
#
# Concatenate the N layers' weights of one type side by side, $[W_1 \dots W_N] = U \Sigma V^\top$,
# keep k singular vectors: the basis $U_k \Sigma_k$ is shared, each layer keeps its k × d_in block
# of $V_k^\top$ as coefficients. The error is the singular values dropped. On the trained model of
# this chapter's experiment (trained now in quick mode):

# %%
settings = course.settings()
trained = exp_relaxed.trained_model(course.scratch("15-trained"), settings, seed=0)
sets = trained.decoder.attention_sets
ks = [1, 2, 4, 8, 16] if settings.relaxed["model"]["hidden_size"] <= 16 else [1, 4, 16, 32, 64]
series = {name: [[reconstruction_error([getattr(s.sublayer, name).weight.numpy() for s in sets], k)] for k in ks]
          for name in ("query", "key", "value", "dense")}
training_figures.plot_metric_vs(ks, series, "basis size k", "relative error ‖W - B C‖ / ‖W‖",
                                "Basis Sharing of the trained model's attention weights", log_x=True)

# %% [markdown]
# ## 15.5 The experiment: held-out loss against unique parameters
#
# The trained model, its Cycle conversion relaxed at r = 1, 2, 4, 8 (r = 0 is the recursive model)
# as converted and after a short uptraining, Basis Sharing at several k, and models of the
# recursive model's parameters trained from scratch for as many updates. In quick mode nothing
# here is trained long enough to leave the unigram solution: the figure shows the code at work.

# %%
result = course.experiment("relaxed", notebook="15")

# %%
course.show_experiment("relaxed", result, notebook="15")

# %% [markdown]
# ## 15.6 Three plans from the literature
#
# MobileLLM runs each block twice in a row (immediate block-wise sharing, Liu et al., 2024);
# Mixture-of-Recursions keeps the first and last layer unique and cycles the middle
# ("Middle-Cycle", Bae et al., 2025); Subformer's sandwich shares every layer between a unique
# first and last (Reid et al., 2021).

# %%
plan_figure.plot_plans({"immediate block-wise (N = 6)": sharing.Plan.build("immediate-block-wise", 6),
                        "middle-cycle (M = 4, N = 6)": sharing.Plan.build("middle-cycle", 6, 4),
                        "sandwich (N = 6)": sharing.Plan.build("sandwich", 6),
                        "cycle (M = 3, N = 6)": sharing.Plan.build("cycle", 6, 3)})

# %% [markdown]
# ## 15.7 Exercises
#
# 1. **A shared layer relaxed by a low-rank correction** (exercise 18 in `exercises/ex18_lora_relax`):
#    the relaxed linear's forward and backward, its SVD initialization, and its count with the
#    break-even rank.
# 2. In 15.3, relax the **stepwise** and the **lower** conversions too (`to_relaxed`'s `init`). At
#    r = 0 which of the three is closest to the original's logits, and does the order hold at r = 8?

# %% [markdown]
# ## Questions
#
# 1. A square H × H matrix relaxed at rank r costs 2 H r per position. At which r does a relaxed
#    Cycle stack of M = N/2 sets store as many numbers as the original? Predict it for H = 16, then
#    run the cell.

# %%
guess = None   # your prediction of the break-even rank for H = 16 (square matrices, M = N / 2)
H, N, M = 16, 4, 2
break_even = next(r for r in range(H + 1) if M * H * H + N * 2 * H * r >= N * H * H)
course.reveal(guess, break_even, "the rank where the relaxed stack stores as much as the original")

# %% [markdown]
# 2. Basis Sharing at k = 4 (15.4) turns the four query weights of the model of 15.2, 16 × 16 each
#    with a bias of 16, into one shared basis of H × k and, per layer, k × H coefficients and the
#    bias. The four query layers held 4 · (256 + 16) = 1,088 numbers: how many do they hold now?
#    Predict it, then run the cell.

# %%
guess = None   # your prediction of the numbers the four Basis-shared query layers store
queries = minishare.nn.ModuleList([s.sublayer.query for s in to_basis_shared(original, 4).decoder.attention_sets])
course.reveal(guess, count_parameters(queries), "numbers in the four query layers at k = 4")

# %% [markdown]
# 3. Stepwise takes layers 0 and 2 for Cycle M = 2 of N = 4, but set 1 serves positions 1 and 3.
#    Why might a set initialized from a layer it does not serve still be a good start? (The paper
#    compares the three initializations; read its Sec. 3.)
# 4. Basis Sharing's error is lowest for the weight types whose layers are most alike. Which of
#    the four attention weights above shares its basis best, and does that hold for another seed?
