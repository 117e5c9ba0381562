# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 7. Pre-training a tiny ALBERT: MLM with n-gram masking, SOP, and the sharing variants
#
# ALBERT learns from unlabeled text with two losses (Lan et al., 2019, Sec. 3.1 and 4.1): masked
# language modelling (MLM), where whole n-grams are hidden and predicted, and sentence-order
# prediction (SOP), where the model tells two consecutive segments from the same two swapped.
#
# **You will:** build examples from the embedded corpus and decode one; measure the n-gram and the
# 80/10/10 statistics against the paper's numbers; train the four sharing variants of notebook 4
# over several seeds and read their convergence with its spread.

# %%
import collections

import numpy as np
from IPython.display import Markdown

from minishare import data
from minishare.analysis import plots
from minishare.analysis.course_figures import plot_bars
from minishare.experiments import course, exp_albert

print(course.setup())

# %% [markdown]
# ## 7.1 The math
#
# **MLM.** 15% of the tokens are selected; the loss is the cross-entropy of the original token at
# each selected position, $\mathcal{L}_{\text{MLM}} = -\frac{1}{|S|}\sum_{t \in S} \log p_\theta(x_t \mid \tilde x)$.
# Of the selected tokens 80% become `[MASK]`, 10% a random token, 10% stay (so the model cannot
# learn that only `[MASK]` positions matter). ALBERT selects **spans** of $n \le 3$ tokens with
#
# $$p(n) = \frac{1/n}{\sum_{k=1}^{3} 1/k} = \tfrac{6}{11},\ \tfrac{3}{11},\ \tfrac{2}{11}.$$
#
# **SOP.** The input is `[CLS] A [SEP] B [SEP]`; label 0 if A precedes B in the document, 1 if the
# two were swapped. $\mathcal{L} = \mathcal{L}_{\text{MLM}} + \mathcal{L}_{\text{SOP}}$.

# %% [markdown]
# ## 7.2 From scratch: the masking statistics
#
# Draw many span selections and count: does the library match $p(n)$ and 80/10/10?

# %%
rng = np.random.default_rng(0)
draws = course.pick(quick=400, full=4000)
lengths = collections.Counter()
for _ in range(draws):
    for _, n in data.select_spans(np.ones(200, dtype=bool), rng, max_ngram=3):
        lengths[n] += 1
measured = {n: lengths[n] / sum(lengths.values()) for n in (1, 2, 3)}
paper = dict(zip((1, 2, 3), data.ngram_probabilities(3).tolist()))
print("measured:", {n: round(v, 3) for n, v in measured.items()}, " paper:", {n: round(v, 3) for n, v in paper.items()})
plot_bars({"paper p(n)": {f"n = {n}": paper[n] for n in paper},
           "measured (spans before trimming to the budget)": {f"n = {n}": measured[n] for n in measured}},
          ylabel="fraction of spans (no unit)", xlabel="span length",
          title=f"n-gram masking: span lengths over {draws} examples of 200 tokens")

# %% [markdown]
# The measured share of 3-grams is a little below $2/11$: a span is trimmed when it would run
# past the 15% budget or into an already selected token (see `select_spans`'s docstring).

# %%
ids = rng.integers(10, 1000, 100_000)
masked, labels = data.mask_tokens(ids, np.arange(len(ids)), rng, vocab_size=1000, mask_id=4)
print(f"[MASK]: {np.mean(masked == 4):.3f}   random token: {np.mean((masked != 4) & (masked != ids)):.3f}   "
      f"unchanged: {np.mean(masked == ids):.3f}   (a random token can equal the original: about 0.1/1000)")

# %% [markdown]
# ## 7.3 One example, decoded
#
# The embedded corpus is Python's own documentation. A BPE tokenizer with V = 1,000 is trained on
# it in about a second; then one SOP example:

# %%
documents = data.default_corpus()
train_docs, _ = data.split_documents(documents, seed=0)
tokenizer = data.Tokenizer.train([" ".join(d) for d in train_docs[:course.pick(quick=300, full=len(train_docs))]],
                                 vocab_size=1000)
example = data.PretrainingData(train_docs[:50], tokenizer, max_seq_length=64, task="sop").examples(seed=1)[0]
print("input  :", tokenizer.decode(example["input_ids"]))
print("targets:", [tokenizer.decode([t]) for t in example["labels"] if t != data.IGNORE_INDEX])
print("sentence_order_label:", example["sentence_order_label"], "(1 = swapped)")

# %%
course.Source(data.select_spans)

# %% [markdown]
# ## 7.4 The four sharing variants, trained over seeds
#
# The `albert_sharing` experiment of `reproduce` trains not-shared, shared-attention, shared-FFN
# and all-shared ALBERTs (Post-LN) with MLM + SOP, once per seed. In quick mode it trains tiny ones
# here; in full mode it loads the committed full run.

# %%
result = course.experiment("albert_sharing", notebook="07")

# %%
histories = {f"{name} ({r['params']:,} parameters)": r["histories"] for name, r in result.items()}
plots.plot_convergence(histories, x="step", y="mlm_loss", eval_y="eval_mlm_loss",
                       title="ALBERT's sharing variants, MLM loss (Post-LN): mean over seeds, band min–max")

# %%
Markdown(exp_albert.report(result, []))

# %% [markdown]
# What the run shows, in sentences the experiment computes from its numbers (a difference is
# stated only where the seed ranges do not overlap):

# %%
Markdown("\n".join(f"- {note}" for note in exp_albert.observations(result)))

# %% [markdown]
# ## 7.5 Exercises
#
# 1. **n-gram masking.** Write `my_spans(T, rng)` that selects 15% of T positions as spans with
#    $p(n)$ above, never overlapping. Compare its length histogram with the library's.
# 2. **SOP pairs without a leak.** Notebook 9 shows how cutting a too-long pair always at the same
#    ends let a rule read the label from punctuation. Before reading it: which surface cues could
#    tell a swapped pair from an unswapped one?
# 3. Train the BERT-style masking (`max_ngram=1`) and compare the held-out MLM loss at equal steps.
#    Is a difference larger than the seed spread?

# %% [markdown]
# ## 7.6 Predict, then run
#
# **Q1.** Of all tokens of an example, what fraction ends up as `[MASK]`?

# %%
guess = None
print(course.reveal(guess, 0.15 * 0.8, "fraction of tokens replaced by [MASK]"))

# %% [markdown]
# **Q2.** An example has 40 maskable tokens. How many tokens does `select_spans` choose for
# prediction (however the spans fall)?

# %%
guess = None
spans = data.select_spans(np.ones(40, dtype=bool), np.random.default_rng(7), max_ngram=3)
print(course.reveal(guess, sum(length for _, length in spans), "tokens selected"))
