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
# # 5. Takase & Kiyono: M sets for N positions (Sequence, Cycle, Cycle (rev))
#
# ALBERT shares everything or nothing per component. Takase & Kiyono ("Lessons on Parameter
# Sharing across Layers in Transformers", 2021, Sec. 2) ask a finer question: with a budget of
# $M$ distinct layers, how should they fill $N > M$ positions? They compare three assignments and
# find that a deeper stack of shared layers beats a shallow unshared one at equal parameters.
#
# **You will:** write the three rules as equations and as code; see the plans draw themselves for
# any M of N, with a widget; see where the paper's text and the authors' code disagree; write a
# custom schedule per component; count the parameters of the paper's configurations.

# %%
from minishare import sharing
from minishare.analysis import params_figures, plan_figure
from minishare.analysis.display import plan_explorer
from minishare.experiments import course, exp_params
from minishare.models import TransformerConfig
from minishare.sharing import Plan

print(course.setup())

# %% [markdown]
# ## 5.1 The math
#
# Position $i = 0, \dots, N-1$ (the paper counts from 1) uses set $\pi(i)$:
#
# | strategy | rule | M = 3, N = 6 |
# |---|---|---|
# | Sequence | $\pi(i) = \lfloor i \,/\, (N/M) \rfloor$ | A A B B C C |
# | Cycle | $\pi(i) = i \bmod M$ | A B C A B C |
# | Cycle (rev) | $i \bmod M$ for $i < M(\lceil N/M\rceil - 1)$, then $M - 1 - (i \bmod M)$ | A B C C B A |
#
# $M = N$ is the vanilla Transformer and $M = 1$ the Universal Transformer, under every rule. Cycle
# (rev) makes the lowest and the highest layer share parameters; the paper argues this suits both
# ends of the stack.

# %% [markdown]
# ## 5.2 From scratch, then the library
#
# The three rules fit in a few lines. Write them yourself first (exercise 1 below); the library's
# version, with the paper's wording in its docstring and a clear error where a rule is undefined:

# %%
course.Source(sharing.assign)

# %% [markdown]
# Each plan draws itself; here the paper's Figure 1 example, M = 3 of N = 6:

# %%
Plan.build("sequence", n_layers=6, n_unique=3)

# %%
Plan.build("cycle", n_layers=6, n_unique=3)

# %%
Plan.build("cycle-rev", n_layers=6, n_unique=3)

# %% [markdown]
# ## 5.3 Any M of N: a widget
#
# Move N, M and the strategy. (In Jupyter with `ipywidgets` installed this is interactive; without
# it, the cell shows the plan for the starting values. Sequence refuses an M that does not divide
# N, and says why.) A static page such as the book cannot run the widget, so there its output is
# left out and the grid after it stands in.

# %% tags=["remove-output"]
plan_explorer(n_layers=7, n_unique=3, strategy="cycle-rev")

# %% [markdown]
# The same comparison as a static grid: M = 2 and M = 3 over N = 6 positions.

# %%
plan_figure.plot_plans({f"{name} M={M}": Plan.build(name, 6, M)
                        for M in (2, 3) for name in ("sequence", "cycle", "cycle-rev")}, ncols=3)

# %% [markdown]
# ## 5.4 When M does not divide N
#
# The paper's text defines Cycle (rev) as "Cycle for the first $M(\lceil N/M\rceil - 1)$ layers,
# then reversed". For $M = 3$, $N = 7$ that reads A B C A B C **C**. The authors' released code
# reverses the last M positions instead (A B C A **C B A**). The two agree whenever M divides N,
# which covers every configuration in the paper. minishare follows the text as `cycle-rev` and
# offers the code's rule under its own name, `cycle-rev-code`, so you can compare both:

# %%
plan_figure.plot_plans({"cycle-rev (paper's text), M=3": Plan.build("cycle-rev", 7, 3),
                        "cycle-rev-code (authors' code), M=3": Plan.build("cycle-rev-code", 7, 3)}, ncols=2)

# %%
for N in range(1, 9):
    differ = [M for M in range(1, N + 1) if sharing.assign("cycle-rev", N, M) != sharing.assign("cycle-rev-code", N, M)]
    print(f"N = {N}: the two rules differ for M in {differ}")

# %% [markdown]
# ## 5.5 A schedule of your own, per component
#
# A plan is any list of set indices, or one list per component. For example: attention follows
# Cycle with two sets while the FFN gets a set per pair of positions (Sequence):

# %%
Plan.build({"attention": [0, 1, 0, 1, 0, 1], "ffn": [0, 0, 1, 1, 2, 2]})

# %% [markdown]
# ## 5.6 Equal parameters, more depth
#
# The paper's configurations are Transformer (base), $H = 512$: Vanilla with $M = N = 6$, and the
# three strategies with $M = 6$ distinct layers over $N = 12$ or $18$ positions: the same
# parameters, 2 or 3 times the computation. A config shows its breakdown:

# %%
TransformerConfig(**{**exp_params.TAKASE_BASE, "num_hidden_layers": 12, "num_unique_layers": 6,
                     "sharing": "cycle-rev"})

# %%
rows, universal_width = exp_params.takase_rows()
params_figures.plot_param_bars(rows, "Takase & Kiyono's configurations (M/N): parameters, ours and the paper's")

# %% [markdown]
# ## 5.7 Exercises
#
# 1. **assign from scratch.** Complete `my_assign` below for the three strategies; the cell compares
#    it with `sharing.assign` for every $1 \le M \le N \le 12$ the rules allow.
# 2. Without looking at `sharing.assign`, write the authors'-code rule of Cycle (rev) (reverse the
#    last M positions) and check it against `sharing.assign("cycle-rev-code", N, M)`.
# 3. For $M = 2$, $N = 8$: which positions send gradient to set B under each strategy?
#    (`plan.positions_of("ffn", 1)`)

# %%
def my_assign(strategy, N, M):
    return None                      # TODO: a list of N set indices


agree, total = 0, 0
for N in range(1, 13):
    for M in range(1, N + 1):
        for strategy in sharing.TAKASE_KIYONO:
            try:
                expected = sharing.assign(strategy, N, M)
            except ValueError:       # a rule the paper leaves undefined
                continue
            total += 1
            agree += my_assign(strategy, N, M) == expected
print(f"my_assign agrees with the library on {agree} of {total} cases")

# %% [markdown]
# ## 5.8 Predict, then run
#
# **Q1.** Under Cycle (rev) with $M = 4$, $N = 12$, how many positions use set A (index 0)?

# %%
guess = None
print(course.reveal(guess, len(Plan.build("cycle-rev", 12, 4).positions_of("ffn", 0)), "positions using set A"))

# %% [markdown]
# **Q2.** Sequence, Cycle and Cycle (rev) with $M = 6$, $N = 18$ hold the same parameters as
# Vanilla 6/6. How many times more layer computations does one forward pass run?

# %%
guess = None
print(course.reveal(guess, Plan.build("cycle", 18, 6).n_layers / Plan.build("not-shared", 6).n_layers,
                    "layer computations, 6/18 against 6/6"))
