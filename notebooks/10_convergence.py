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
# # 10. Convergence: the papers' comparisons at small scale
#
# ALBERT (Lan et al., 2019, Table 4) compares its four sharing variants at equal architecture:
# the shared models hold far fewer parameters and score somewhat lower.
#
# Takase & Kiyono (2021) train encoder-decoders on WMT English-German and compare, at **equal
# parameters**, Vanilla ($M = N = 6$), the Universal Transformer ($M = 1$, one wider layer) and
# Sequence, Cycle and Cycle (rev) with $M = 6$ sets over $N = 12$ or $18$ positions. Deeper shared
# stacks win on BLEU, but each step costs more: the fair second comparison is at **equal compute**.
# They report Post-LN (their main setting) and Pre-LN.
#
# **You will:** train ALBERT's four variants over seeds and read their convergence with its
# spread; count Takase & Kiyono's compared models and see their plans; measure what doubling the depth
# costs per step; run the comparison on a toy task over seeds, at equal parameters and at equal
# time; look at the gradient each layer position receives, Post-LN against Pre-LN, in shared
# stacks.

# %%
import statistics

import numpy as np

import minishare
from minishare import optim
from minishare.analysis import memory, plan_figure, training_figures
from minishare.data import seq2seq
from IPython.display import Markdown

from minishare.experiments import course, exp_albert
from minishare.models import EncoderDecoderModel, TransformerConfig
from minishare.sharing import Plan

print(course.setup())

# %% [markdown]
# ## 10.1 ALBERT's four sharing variants, trained over seeds
#
# The `albert_sharing` experiment of `reproduce` trains not-shared, shared-attention, shared-FFN
# and all-shared ALBERTs (Post-LN) with MLM + SOP (notebook 8), once per seed. In quick mode it
# trains tiny ones here; in full mode it loads the committed full run.

# %%
result = course.experiment("albert_sharing", notebook="10-albert")

# %%
histories = {f"{name} ({r['params']:,} parameters)": r["histories"] for name, r in result.items()}
training_figures.plot_convergence(histories, x="step", y="mlm_loss", eval_y="eval_mlm_loss",
                                  title="ALBERT's sharing variants, MLM loss (Post-LN): mean over seeds, band min–max")

# %%
Markdown(exp_albert.report(result, []))

# %% [markdown]
# What the run shows: the no-model baselines first, then each comparison as the ledger states it,
# the paired difference over seeds with its 95% interval (an effect shows only where the interval
# excludes zero, after Holm's correction over the experiment's primary comparisons):

# %%
Markdown(course.what_this_run_shows("albert_sharing", result))

# %% [markdown]
# ## 10.2 The math: equal parameters, equal compute
#
# With $M$ distinct layers of $P$ parameters each, every strategy holds $M P$ parameters in its
# stacks and computes $N$ layers per token. At equal parameters, $N = 2M$ doubles the compute; the
# paper's "speed" is $t_{\text{Vanilla}} / t$ per step (0.63 at $N = 12$, 0.47 at $N = 18$). At
# equal compute, a model whose step costs $C$ multiply-accumulates per token makes
# $S\,C_{\text{Vanilla}} / C$ updates while Vanilla makes $S$.

# %%
n = 2
V = seq2seq.get_task("reverse").vocab_size
base = dict(vocab_size=V, hidden_size=32, num_attention_heads=2, intermediate_size=128, norm_position="post")
configs = {"Vanilla": TransformerConfig(**base, num_hidden_layers=n, sharing="not-shared"),
           **{name: TransformerConfig(**base, num_hidden_layers=2 * n, num_unique_layers=n, sharing=strategy)
              for name, strategy in (("Sequence", "sequence"), ("Cycle", "cycle"), ("Cycle (rev)", "cycle-rev"))}}
for name, config in configs.items():
    print(f"{name:12s} M = {config.plan().n_sets('ffn')}, N = {config.num_hidden_layers:2d}: "
          f"{minishare.count_parameters(config):,} parameters   plan {config.plan()}")
plan_figure.plot_plans({f"{name} (M={c.plan().n_sets('ffn')}, N={c.num_hidden_layers})": c.plan() for name, c in configs.items()})

# %% [markdown]
# A config shows where its parameters go (the decoder's cross-attention is a third component
# that the plan shares like the others):

# %%
configs["Cycle (rev)"]

# %% [markdown]
# ## 10.3 From scratch: what does doubling the depth cost per step?
#
# Time one training step of Vanilla (N = 2) and Cycle (rev) (M = 2, N = 4) back to back, round by
# round (`memory.interleaved_step_times`), and take the per-round ratio.

# %%
task = seq2seq.get_task("reverse")
pairs = seq2seq.examples(task, 32, seed=0)
batch = seq2seq.collate(pairs)
setups = {}
for name in ("Vanilla", "Cycle (rev)"):
    minishare.manual_seed(0)
    model = EncoderDecoderModel(configs[name])

    def loss_fn(m, b=batch):      # teacher forcing: the decoder reads BOS + target, predicts target + EOS
        return m(b["src"], b["tgt_in"], attention_mask=(b["src"] != seq2seq.PAD_ID).astype(np.int64),
                 labels=np.where(b["tgt_out"] == seq2seq.PAD_ID, -100, b["tgt_out"])).loss
    setups[name] = (model, loss_fn, optim.AdamW(model.parameters(), lr=1e-3))
times = memory.interleaved_step_times(setups, repeats=course.pick(quick=5, full=15))
ratios = memory.paired_ratios(times, "Vanilla", "Cycle (rev)")
print("speed of Cycle (rev) M=2 N=4 relative to Vanilla M=N=2, per round:", " ".join(f"{r:.2f}" for r in ratios),
      f"(median {statistics.median(ratios):.2f}; the paper: 0.63 for M=6, N=12)")

# %% [markdown]
# ## 10.4 The comparison on a toy task, over seeds
#
# The `takase` experiment of `reproduce` trains every method on a toy sequence-to-sequence task,
# once per seed: Post-LN (the paper's main setting) in the default tier, Pre-LN too in the long one
# (`reproduce --long`). At equal compute each method trains again on its own full
# schedule of $S\,C_{\text{Vanilla}}/C$ updates (never read in the middle of a longer run).

# %%
result = course.experiment("takase", notebook="10", takase_steps=20, timing_repeats=2)   # quick: kept under a minute

# %%
course.show_experiment("takase", result, notebook="10")

# %% [markdown]
# ## 10.5 Post-LN against Pre-LN in shared stacks: the gradient at each position
#
# Xiong et al. (2020) explain why Post-LN needs a warm-up by the gradients its layers receive at
# initialization; Takase & Kiyono argue that Cycle (rev), which gives the lowest and the highest
# positions the same set, helps those layers. The `gradnorms` experiment measures the gradient norm
# at each layer position, at initialization and after some training, for not-shared, all-shared
# and Cycle (rev) stacks, Post-LN and Pre-LN, over seeds.

# %%
gradients = course.experiment("gradnorms", notebook="10-gradnorms")
course.show_experiment("gradnorms", gradients, notebook="10-gradnorms")

# %% [markdown]
# ## 10.6 Exercises
#
# 1. **Design a plan for a budget (open).** You may store $M = 3$ layers and afford $N = 8$
#    positions of compute. Propose a schedule per component (`Plan.build({...})`), train it with
#    `minishare.experiments.run_training(task="reverse", overrides={...})` against Cycle (rev), and
#    say whether the difference is larger than the spread over three seeds.
# 2. Use `memory.interleaved_step_times` to measure the speed of the Universal model (one layer,
#    widened to Vanilla's parameters) relative to Vanilla. Why is a wide single layer slow?
# 3. In 10.5, which plan's lowest position gets the largest gradient under Post-LN, and does
#    Cycle (rev) change the first or the last position's norm relative to Cycle?

# %% [markdown]
# ## 10.7 Predict, then run
#
# **Q1.** Sequence, Cycle and Cycle (rev) with M = 2, N = 4: how many parameters does each hold
# relative to Vanilla with M = N = 2?

# %%
guess = None
print(course.reveal(guess, minishare.count_parameters(configs["Cycle"]) / minishare.count_parameters(configs["Vanilla"]),
                    "parameters, Cycle M=2 N=4 / Vanilla M=N=2"))

# %% [markdown]
# **Q2.** At equal compute, if Cycle (rev)'s step costs 1.8× Vanilla's, how many updates does it
# make while Vanilla makes 600?

# %%
guess = None
print(course.reveal(guess, round(600 / 1.8), "updates"))
