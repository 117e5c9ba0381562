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
# # 8. Pre-training objectives: MLM with n-grams, SOP against NSP, and the label-leak trap
#
# ALBERT learns from unlabeled text with two losses (Lan et al., 2019, Sec. 3.1 and 4.1): masked
# language modelling (MLM), where whole n-grams are hidden and predicted, and sentence-order
# prediction (SOP), where the model tells two consecutive segments from the same two swapped.
#
# BERT's next-sentence prediction (NSP) asks instead whether segment B follows A or comes from
# another document. ALBERT argues it is too easy: a random B is usually about another **topic**, so
# NSP can be solved without understanding order. SOP keeps both segments from the same document
# and swaps them half the time: only **coherence** tells the order. Table 5: NSP-trained models
# score 52.0% on SOP (chance); SOP-trained ones 78.9% on NSP and 86.5% on SOP.
#
# There is a trap: if the data pipeline leaves any surface cue of the label, a model learns the cue
# and the accuracy says nothing about coherence. **A rule that never reads the sentences must score
# 50%.** This notebook measures that, first on a pipeline with a leak, then on the library's.
#
# **You will:** build examples from the embedded corpus and decode one; measure the n-gram and the
# 80/10/10 statistics against the paper's numbers; measure the topic shortcut of NSP; rebuild a
# leaky SOP pipeline and catch it with cue-only rules; check the library's examples score chance;
# read the SOP/NSP table over seeds.

# %%
import collections

import numpy as np
from IPython.display import Markdown

from minishare import data
from minishare.analysis import cues
from minishare.analysis.course_figures import plot_bars
from minishare.experiments import course, exp_sop_nsp

print(course.setup())

# %% [markdown]
# ## 8.1 The math
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
# ## 8.2 From scratch: the masking statistics
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
# ## 8.3 One example, decoded
#
# The embedded corpus is Python's own documentation, natural text. (The experiments of
# `reproduce` pre-train on the synthetic grammar corpus instead, `data.grammar_corpus`: stories of
# a day's events at one of six places, small enough for tiny models on a CPU, built so that no
# surface cue tells the sentence order and a random B is usually about another place.) A BPE
# tokenizer with V = 1,000 is trained on it in about a second; then one SOP example:

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
# ## 8.4 The data, and the two tasks

# %%
documents = data.default_corpus()
n_docs = course.pick(quick=400, full=len(documents))
train_docs, eval_docs = data.split_documents(documents[:n_docs], eval_fraction=0.3, seed=0)
tokenizer = data.Tokenizer.train([" ".join(d) for d in train_docs], vocab_size=1000)
sets = {task: {part: data.PretrainingData(docs, tokenizer, max_seq_length=64, task=task).examples(seed=1)
               for part, docs in (("fit", train_docs), ("held-out", eval_docs))}
        for task in ("sop", "nsp")}
print({task: {part: len(ex) for part, ex in s.items()} for task, s in sets.items()}, "examples")

# %% [markdown]
# ## 8.5 Why NSP is easy: the topic shortcut
#
# A cue that reads content but not order: the share of B's distinct tokens that also occur in A.
# A random B from another document shares fewer. `cues.fit_rule` fits the best lookup table from
# the (rounded) cue to the label on one set and we score it on held-out documents:

# %%
def overlap(a, b):
    return round(len(set(a) & set(b)) / max(1, len(set(b))), 1)


topic = {}
for task in ("nsp", "sop"):
    fit, held_out = cues.pairs(sets[task]["fit"]), cues.pairs(sets[task]["held-out"])
    table, default = cues.fit_rule([overlap(a, b) for a, b, _ in fit], [label for _, _, label in fit])
    predicted = [table.get(overlap(a, b), default) for a, b, _ in held_out]
    topic[task] = float(np.mean([p == label for p, (_, _, label) in zip(predicted, held_out)]))
    print(f"{task.upper()}: a rule reading only the token overlap of A and B scores {topic[task]:.1%} on held-out pairs")

# %% [markdown]
# Swapping A and B does not change their overlap, so the same rule must score chance on SOP.
#
# ## 8.6 The trap: a leaky SOP pipeline, rebuilt
#
# A pair longer than the budget must be cut. Suppose the pipeline cuts **before** deciding the
# swap, always from A's front and B's back (the mistake an earlier version of this library made).
# Then the segment that lost its sentence end is always the one that came second in the text, and
# punctuation tells the label:

# %%
def leaky_sop(documents, rng, budget=61):
    """SOP examples built the wrong way: truncate A's front and B's back, then swap."""
    examples = []
    for doc in documents:
        sentences = [tokenizer.encode(" " + s) for s in doc if s]
        if len(sentences) < 2:
            continue
        cut = int(rng.integers(1, len(sentences)))
        a = [t for s in sentences[:cut] for t in s]
        b = [t for s in sentences[cut:] for t in s]
        while len(a) + len(b) > budget:
            if len(a) > len(b):
                a = a[1:]                           # always the front of A ...
            else:
                b = b[:-1]                          # ... and the back of B
        label = int(rng.random() < 0.5)
        if label:
            a, b = b, a
        ids = np.array([tokenizer.cls_id, *a, tokenizer.sep_id, *b, tokenizer.sep_id])
        examples.append({"input_ids": ids, "labels": np.full(len(ids), data.IGNORE_INDEX),
                         "token_type_ids": np.array([0] * (len(a) + 2) + [1] * (len(b) + 1)),
                         "sentence_order_label": label})
    return examples


rng = np.random.default_rng(0)
leaky = cues.cue_accuracies(leaky_sop(train_docs, rng), leaky_sop(eval_docs, rng), tokenizer)
library = {task: cues.cue_accuracies(sets[task]["fit"], sets[task]["held-out"], tokenizer) for task in ("sop", "nsp")}
print(f"leaky pipeline, punctuation rule: {leaky['ends_with_punctuation']:.1%}")
print(f"library's SOP,  punctuation rule: {library['sop']['ends_with_punctuation']:.1%}")

# %%
shown = ["majority", "ends_with_punctuation", "longer_segment", "first_token_b", "leading_space"]
plot_bars({"leaky SOP pipeline": {c: leaky[c] for c in shown},
           "library's SOP": {c: library["sop"][c] for c in shown},
           "library's NSP": {c: library["nsp"][c] for c in shown}},
          ylabel="held-out accuracy of the cue-only rule (0.5 = chance)", xlabel="cue the rule reads",
          title="Rules that never read the sentences: a leak shows as accuracy above 0.5")

# %% [markdown]
# How the library cuts a pair: from the longer segment, at its front or its back at random, as
# the reference's `truncate_seq_pair` does (the module's docstring lists the three leaks that had
# to be closed):

# %%
from minishare.data import pretraining

course.Source(pretraining.truncate_pair)

# %% [markdown]
# ## 8.7 The table: SOP-trained and NSP-trained models, over seeds
#
# The `sop_nsp` experiment trains all-shared ALBERTs with SOP and with NSP, once per seed, and
# scores each on held-out SOP and NSP examples, beside the cue-only baselines on the same examples.

# %%
result = course.experiment("sop_nsp", notebook="08")

# %%
Markdown(exp_sop_nsp.report(result, []))

# %%
Markdown(course.what_this_run_shows("sop_nsp", result))

# %% [markdown]
# ## 8.8 Exercises
#
# 1. **n-gram masking.** Write `my_spans(T, rng)` that selects 15% of T positions as spans with
#    $p(n)$ of 8.1, never overlapping. Compare its length histogram with the library's.
# 2. **SOP pairs without a leak.** Before reading 8.6: which surface cues could tell a swapped pair
#    from an unswapped one? Then fix `leaky_sop` in two ways: (a) cut after the swap, from the
#    front or the back of the longer segment at random (the reference's `truncate_seq_pair`);
#    (b) keep the cut but choose its end at random. Re-run the cue rules. Which cues still score
#    above chance, and why?
# 3. Add a cue of your own to `cues.CUES` (for instance: does B start with a word that refers back,
#    such as "This" or "It"?) and measure it on SOP. Is it a leak or a signal the task should use?
# 4. The topic rule of 8.5 scores well above chance on NSP here. Why is it weaker on this corpus
#    (all of it Python's documentation) than on Wikipedia and books?
# 5. Train the BERT-style masking (`max_ngram=1`) and compare the held-out MLM loss at equal steps.
#    Is a difference larger than the seed spread?

# %% [markdown]
# ## 8.9 Predict, then run
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

# %% [markdown]
# **Q3.** The punctuation rule on the leaky pipeline scored well above 50%. What does a rule that
# reads only the *length of B* score on the library's SOP examples (it is not in the chart)?

# %%
guess = None
print(course.reveal(guess, round(library["sop"]["length_b"], 3), "length-of-B rule on the library's SOP"))

# %% [markdown]
# **Q4.** A rule at chance is a fair coin. Over the held-out SOP examples of 8.4, what is the
# standard error of its accuracy, in percent? (The best of many such rules lands about two of
# these above 50% by selection alone.)

# %%
guess = None
n = len(cues.pairs(sets["sop"]["held-out"]))
print(course.reveal(guess, round(100 * np.sqrt(0.25 / n), 2), f"standard error of a coin over {n} examples (%)"))
