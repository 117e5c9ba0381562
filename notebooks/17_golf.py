# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 17. Golf: the best model in a budget of bytes
#
# Every technique of this course buys quality with fewer stored parameters. The class competition
# turns that into a game: the best language model of the course's own text in 64 KiB of stored
# weights, trained from scratch by the grader in five minutes of one CPU core, scored on stories
# no entry sees. It is OpenAI's Parameter Golf (2026: 16 MB, scored in held-out bits per byte) at
# the size of a laptop.
#
# **You will:** count an entry's stored bytes by hand and check the grader's count; store a matrix
# at int8 with a scale per row and bound its error; work out the bits per byte of a model that
# knows nothing, beside the no-model counts; train and score one entry on the visible validation
# split; and read the reference leaderboard of the course's four designs.

# %%
import math

import numpy as np

from minishare.analysis import golf_baselines
from minishare.experiments import course
from minishare.golf import budget, quantize, run as golf_run, score
from minishare.golf.entry import parse_entry

print(course.setup())

# %% [markdown]
# ## 17.1 The rules
#
# An entry is a declaration, not code: a JSON file naming a `DecoderLM` configuration, a training
# recipe and the precision its weights are stored at. The grader builds, trains, stores and
# scores it in its own process, within three budgets: **bytes** (each distinct tensor once, at the
# declared precision), **compute** (CPU seconds of one core, checked between steps) and **data**
# (the training split only; a field asking for anything else is refused).

# %%
print(f"byte budget: {golf_run.BUDGET_BYTES:,} bytes; training: {golf_run.CPU_SECONDS:.0f} CPU seconds of one core")
print("bytes per stored value:", budget.PRECISIONS, f"(int8 adds a float32 scale, {budget.SCALE_BYTES} bytes, per row)")

# %% [markdown]
# ## 17.2 Bytes, counted by hand
#
# One layer of H = 16 with an FFN of F = 32, shared by N = 4 positions, V = 64, tied output
# layer, Pre-LN. The positions are sinusoidal, so nothing is stored for them. Values:
#
# - the embedding V × H = 1,024 (the output layer is the same tensor: paid once);
# - attention: four H × H matrices and four biases, 4 · (256 + 16) = 1,088, and its LayerNorm 2H = 32;
# - the FFN: H × F + F + F × H + H = 1,072, and its LayerNorm 32;
# - the final LayerNorm (Pre-LN) 32.
#
# That is 3,280 values whatever N is. At int8 each row also stores its scale: a row is a slice
# along the last axis, so a weight of shape (out, in) has `out` rows and a bias one. The rows are
# 64 (embedding) + 4 · 16 + 4 (attention) + 2 + 32 + 1 + 16 + 1 (FFN) + 2 + 2 = 188.

# %%
tiny = {"name": "tiny", "precision": "int8",
        "model": {"vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 4, "num_attention_heads": 2,
                  "intermediate_size": 32, "sharing": "all-shared", "norm_position": "pre",
                  "tie_word_embeddings": True}}
values, rows = 1024 + 1088 + 32 + 1072 + 32 + 32, 64 + 4 * 16 + 4 + 2 + 32 + 1 + 16 + 1 + 2 + 2
for precision, by_hand in (("float32", 4 * values), ("float16", 2 * values), ("int8", values + 4 * rows)):
    counted = budget.entry_bytes(parse_entry({**tiny, "precision": precision}), 64)
    print(f"{precision:8} by hand {by_hand:6,}   the grader's count {counted:6,}")

# %% [markdown]
# The grader counts by building the model shape-only (no arrays are allocated) and summing its
# distinct tensors, so a shared layer, a tied output layer and a looped layer are each paid once:

# %%
course.Source(budget.entry_bytes)

# %% [markdown]
# ## 17.3 int8 with a scale per row
#
# Each row is stored as 127 steps each side of zero: $s = \max|w_{\text{row}}| / 127$,
# $q = \mathrm{round}(w / s)$, read back as $q s$. Rounding to the nearest step errs by at most
# half a step, $|w - q s| \le s / 2$. A layer shared by N positions is quantized once, and its
# error is met at all N.

# %%
course.Source(quantize.int8_rows)

# %%
w = np.random.default_rng(0).standard_normal((3, 8))
q, s = quantize.int8_rows(w)
error = np.abs(w - quantize.int8_read_back(q, s))
print("scales per row:", np.round(s, 4))
print("largest error per row:", np.round(error.max(axis=1), 4), " half a step:", np.round(s / 2, 4))
print("within half a step:", bool((error <= s[:, None] / 2 + 1e-12).all()))

# %% [markdown]
# ## 17.4 Bits per byte, and what a model must beat
#
# The score is the model's total surprise over the held-out text in bits, divided by the text's
# length in UTF-8 bytes:
#
# $$\text{bits per byte} = \frac{-\sum_t \ln p(x_t \mid x_{<t})}{\ln 2 \cdot \text{bytes}}.$$
#
# Dividing by bytes, not tokens, makes every vocabulary comparable. A model that knows nothing
# gives every token 1/V: its score is (tokens · log₂ V) / bytes. Here is that for the validation
# split with the V = 256 tokenizer, beside two models without a network, the unigram and bigram
# counts of the training tokens (`analysis.golf_baselines`):

# %%
starter = parse_entry({**tiny, "model": {**tiny["model"], "vocab_size": 256}})
parts, tokenizer = golf_run.prepare(starter)
ids, text = score.held_out_stream(parts["validation"], tokenizer)
tokens, n_bytes = len(ids) - 1, len(text.encode("utf-8"))
print(f"validation: {tokens:,} tokens for {n_bytes:,} bytes ({n_bytes / tokens:.2f} bytes a token)")
print(f"uniform over V = {tokenizer.vocab_size}: {tokens * math.log2(tokenizer.vocab_size) / n_bytes:.3f} bits per byte")
for name, value in golf_baselines.baselines("grammar", "validation").items():
    print(f"{name} counts: {value:.3f} bits per byte")

# %% [markdown]
# ## 17.5 One entry, trained and scored
#
# The tiny entry above, trained by the grader's own code and scored on the visible validation
# split (what `python -m minishare golf ENTRY` does). In quick mode it trains a few dozen steps;
# the full mode trains 1,500, about a CPU minute.

# %%
steps = course.pick(quick=30, full=1500)
entry = parse_entry({**tiny, "model": {**tiny["model"], "vocab_size": 256},
                     "recipe": {"lr": 0.003, "warmup_steps": 20, "steps": steps, "seed": 0}})
row = golf_run.grade(entry, split="validation", progress=True)
print(f"{row['bits_per_byte']:.4f} bits per byte at {row['bytes']:,} bytes after {row['steps_done']} steps "
      f"({row['train_cpu_seconds']:.1f} CPU seconds of {row['cpu_seconds_limit']:.0f})")

# %% [markdown]
# ## 17.6 The reference leaderboard
#
# The `golf` experiment of `reproduce` trains the course's four designs inside the budget, each
# once per seed for about 70 CPU seconds, and scores the one trained model twice on the hidden
# test split, as trained (float32) and stored at int8:
#
# - **not-shared**: two distinct layers of H = 48, the baseline;
# - **ALBERT-style** (Lan et al., 2020): a factorized embedding, E = 32 < H = 64, and one layer
#   shared by four positions;
# - **looped** (Dehghani et al., 2018; Yang et al., 2023): one layer of H = 64 trained at a depth
#   drawn at every step (mean 2) and scored deeper;
# - **relaxed** (Bae et al., 2024): one layer of H = 56 at four positions, each with its own LoRA
#   correction of rank 4.
#
# In quick mode it trains each for a few steps (nothing is learnt); in full mode it loads the
# committed full run.

# %%
result = course.experiment("golf", notebook="17")

# %%
course.show_experiment("golf", result, notebook="17")

# %% [markdown]
# ## 17.7 Exercises
#
# 1. **The class competition** (`exercises/golf/`, its README is the rules): declare an entry,
#    score it on validation with `python -m minishare golf entry.json`, and beat the reference
#    designs at 64 KiB.
# 2. In 17.2, untie the output layer (`"tie_word_embeddings": false`). Count the new bytes at int8
#    by hand before asking `budget.entry_bytes`. Which is cheaper at this V and H: an untied
#    output layer or a second distinct layer?
# 3. In 17.3, make one value of the first row 100 times larger. What happens to the error of the
#    other values of that row, and why does a scale per row, not per tensor, limit the damage?
# 4. The looped design is scored at more iterations than it trained with on average. Train the
#    tiny entry of 17.5 as a looped one (`"test_iterations"`) and score it at each depth from 1
#    to 6: where does the score stop improving?

# %% [markdown]
# ## 17.8 Predict, then run
#
# **Q1.** The tiny entry of 17.2 at int8, with 12 positions instead of 4 (still all-shared): how
# many bytes?

# %%
guess = None
deeper = parse_entry({**tiny, "model": {**tiny["model"], "num_hidden_layers": 12}})
print(course.reveal(guess, budget.entry_bytes(deeper, 64), "bytes at int8, N = 12"))

# %% [markdown]
# **Q2.** A model that knows nothing, with the tokenizer of V = 64 instead of 256: more or fewer
# bits per byte than the 256 one of 17.4? Predict the number.

# %%
guess = None
small_parts, small_tokenizer = golf_run.prepare(parse_entry(tiny))
small_ids, small_text = score.held_out_stream(small_parts["validation"], small_tokenizer)
print(course.reveal(guess, round((len(small_ids) - 1) * math.log2(small_tokenizer.vocab_size)
                                 / len(small_text.encode("utf-8")), 3), "uniform bits per byte at V = 64"))
