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
# # 6. The Universal Transformer and Adaptive Computation Time
#
# The Universal Transformer (Dehghani et al., 2018) is the extreme of sharing: one layer, applied
# again and again, like the cell of a recurrent network unrolled in depth. Two things make it more
# than ALBERT's all-shared stack: a **timestep signal** that tells the layer which step it is at
# (Sec. 2.1), and **Adaptive Computation Time** (ACT; Graves, 2016; Sec. 2.2), which lets each
# position decide how many steps it needs.
#
# **You will:** see that the Universal plan is the all-shared plan and what the signal and ACT add
# in parameters; draw the timestep signal; work out a halting step by hand and check it against the
# library, gradient included; train a tiny Universal Transformer with ACT and read its ponder time
# per token.

# %%
import numpy as np
from matplotlib.figure import Figure

import minishare
from minishare.experiments import course
from minishare.models import EncoderDecoderModel, TransformerConfig
from minishare.nn.act import AdaptiveComputationTime
from minishare.nn.transformer import timestep_signal

print(course.setup())

# %% [markdown]
# ## 6.1 The math
#
# **The timestep signal.** Before step $t$ the model adds a coordinate embedding that encodes both
# the position $p$ and the step $t$ with the original Transformer's sinusoids:
#
# $$P_{p,2j} = \sin\big(p / 10000^{2j/H}\big) + \sin\big(t / 10000^{2j/H}\big), \qquad
#   P_{p,2j+1} = \cos\big(p / 10000^{2j/H}\big) + \cos\big(t / 10000^{2j/H}\big).$$
#
# **ACT.** After step $n$ has produced the state $s_n$ of a position, a halting unit gives the
# probability $p_n = \sigma(w \cdot s_n + b)$ that the position is done. The position halts at the
# first step whose cumulated probability reaches $1 - \varepsilon$; its output mixes its states:
#
# $$N = \min\Big\{ n : \textstyle\sum_{k \le n} p_k \ge 1 - \varepsilon \Big\}, \qquad
#   R = 1 - \textstyle\sum_{k < N} p_k, \qquad
#   y = \textstyle\sum_{n < N} p_n s_n + R\, s_N .$$
#
# The loss adds $\tau \cdot (N + R)$, the **ponder time**. $N$ is piecewise constant in the
# parameters, so only the remainder $R$ carries a gradient.

# %% [markdown]
# ## 6.2 One layer at every depth: the plan, and what the extras cost
#
# Without the signal and ACT, the Universal Transformer *is* the all-shared stack: the library's
# plan `"universal"` is the plan `"all-shared"`. The signal is computed, not learned; ACT adds one
# halting unit (a Linear $H \to 1$) per stack.

# %%
base = dict(vocab_size=20, hidden_size=16, num_attention_heads=2, intermediate_size=32, num_hidden_layers=4)
configs = {"not-shared": TransformerConfig(**base, sharing="not-shared"),
           "all-shared": TransformerConfig(**base, sharing="all-shared"),
           "universal + signal": TransformerConfig(**base, sharing="universal", timestep_signal=True),
           "universal + signal + ACT": TransformerConfig(**base, sharing="universal", timestep_signal=True, act=True)}
for name, config in configs.items():
    print(f"{name:26s} {minishare.count_parameters(config):7,} parameters   plan {config.plan()}")
configs["universal + signal + ACT"].plan()

# %% [markdown]
# ## 6.3 The timestep signal
#
# The library's function, and the signal it adds at steps 0 and 3 for T = 12 positions, H = 16
# (each row a position, each column a coordinate):

# %%
course.Source(timestep_signal)

# %%
fig = Figure(figsize=(8, 3), layout="constrained")
for k, t in enumerate((0, 3)):
    ax = fig.add_subplot(1, 2, k + 1)
    image = ax.imshow(timestep_signal(t, 12, 16, np.float64), cmap="RdBu", vmin=-2, vmax=2, aspect="auto")
    ax.set(title=f"step t = {t}", xlabel="coordinate (2j: sin, 2j + 1: cos)", ylabel="position p")
fig.colorbar(image, ax=fig.axes, label="P[p, i]")
fig

# %% [markdown]
# ## 6.4 A halting step worked by hand, then by the library
#
# Give the halting unit zero weights and the bias $b = \log(0.3 / 0.7)$: then $p_n = \sigma(b) = 0.3$
# at every step, whatever the state. With $\varepsilon = 0.01$ the cumulated probability is 0.3,
# 0.6, 0.9, 1.2: it first reaches 0.99 at $N = 4$, so $R = 1 - 0.9 = 0.1$ and the ponder time is
# $N + R = 4.1$; the mixing weights are 0.3, 0.3, 0.3 and 0.1. The step function below adds 1 to
# the state, so the output is $0.3 \cdot 1 + 0.3 \cdot 2 + 0.3 \cdot 3 + 0.1 \cdot 4 = 2.2$.
#
# The gradient: only $R = 1 - (p_1 + p_2 + p_3)$ depends on $b$, so per position
#
# $$\frac{\partial (N + R)}{\partial b} = -3\, \sigma'(b) = -3 \cdot 0.3 \cdot 0.7 = -0.63 .$$

# %%
act = AdaptiveComputationTime(hidden_size=4, epsilon=0.01).double()
act.halting.weight.data[...] = 0.0
act.halting.bias.data[...] = np.log(0.3 / 0.7)
x = minishare.tensor(np.zeros((1, 2, 4)))                       # (B, T, H): two positions
y, ponder = act(x, step=lambda n, s: s + 1.0, max_steps=8)
print("N =", ponder.n_updates.tolist(), "  R =", np.round(ponder.remainder.numpy(), 6).tolist())
print("ponder time N + R =", np.round(ponder.ponder_time.numpy(), 6).tolist())
print("weights per step:", np.round(ponder.weights.numpy()[:, 0, 0], 6).tolist(), "  output:", round(float(y.numpy()[0, 0, 0]), 6))
ponder.ponder_time.sum().backward()
print("d(sum of ponder times)/db =", act.halting.bias.grad, " (by hand: 2 positions × -0.63 = -1.26)")

# %% [markdown]
# The loop, from the library (a halted position keeps its state; the others still attend to it):

# %%
course.Source(AdaptiveComputationTime.forward)

# %% [markdown]
# ## 6.5 Ponder time per token, trained, over seeds
#
# The `act` experiment of `reproduce` trains a Universal Transformer with the timestep signal and
# ACT (encoder and decoder) on a toy task, once per seed, and measures the ponder time of every
# held-out token. In quick mode it trains a tiny one for a few steps here, so the halting unit has
# barely moved from its start; in full mode it loads the committed full run.

# %%
result = course.experiment("act", notebook="06")

# %%
course.show_experiment("act", result, notebook="06")

# %% [markdown]
# ## 6.6 Exercises
#
# 1. **The timestep signal and ACT** (exercise 13 in `exercises/ex13_universal_timestep`): write
#    `timestep_signal`, a Universal encoder with one layer of parameters, and ACT's halting rule
#    for one position, from Graves's definition.
# 2. In 6.4, set the bias so that $p_n = 0.5$. Work out $N$, $R$ and the gradient by hand, then
#    run the cell. What happens at $\varepsilon = 0$, where $0.5 + 0.5$ reaches exactly 1?
# 3. In quick mode (`MINISHARE_QUICK=1`), train the `act` experiment with a larger
#    `act_loss_weight` (τ): `course.experiment("act", notebook="06-tau", act={**course.settings().act,
#    "act_loss_weight": 0.1})`. Does the mean ponder time fall, and does the held-out loss rise?

# %% [markdown]
# ## 6.7 Predict, then run
#
# **Q1.** The halting unit of 6.4 gives $p_n = 0.4$ at every step, $\varepsilon = 0.01$. What is
# the ponder time $N + R$?

# %%
guess = None
act.halting.bias.data[...] = np.log(0.4 / 0.6)
_, ponder = act(x, step=lambda n, s: s + 1.0, max_steps=8)
print(course.reveal(guess, round(float(ponder.ponder_time.numpy()[0, 0]), 6), "ponder time N + R at p = 0.4"))

# %% [markdown]
# **Q2.** How many parameters does ACT add to the Universal Transformer of 6.2 (H = 16, an encoder
# and a decoder stack)?

# %%
guess = None
added = minishare.count_parameters(configs["universal + signal + ACT"]) - minishare.count_parameters(configs["universal + signal"])
print(course.reveal(guess, added, "parameters added by ACT"))
