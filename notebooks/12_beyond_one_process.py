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
# # 12. Beyond one process: checkpoints that keep sharing, and data parallel over MPI
#
# Two places outside the model must know about sharing: the file a model is saved to, and the
# network that carries gradients between the workers of data-parallel training. ALBERT (Lan et al.,
# 2019, Sec. 1) names both savings of sharing: fewer distinct parameters to store and fewer to
# communicate. Each holds only if the code keeps one shared tensor *one* tensor.
#
# **You will:** save a shared and an unshared model and compare what the files hold; load the
# shared one back and check that the shared positions are one tensor again; split a batch over
# two ranks in one process and see why the ranks' gradients must be weighted, not averaged; count
# what one Allreduce carries for each of ALBERT's variants.

# %%
import os
import tempfile
import zipfile

import numpy as np

from minishare import backend, checkpoint, distributed
from minishare.experiments import course
from minishare.models import AlbertConfig, AlbertForPreTraining, EncoderDecoderModel, TransformerConfig
from minishare.tasks import Seq2SeqTask

print(course.setup())

# %% [markdown]
# ## 12.1 The math
#
# **A checkpoint.** A model whose $N$ positions use $M$ sets holds $M$ sets of tensors, reached
# under $N$ names. A file should store each distinct tensor once and record the other names as
# *aliases* of it; loading must rebuild one tensor per set, not one per name.
#
# **Data parallel.** $K$ ranks each take a share of the global batch. A loss that is a mean over
# $n$ items is not the mean of the ranks' means when rank $r$ holds $n_r \ne n / K$ items; scaling
# rank $r$'s mean by $n_r / n$ makes the plain sum exact:
#
# $$\sum_r \frac{n_r}{n}\,\frac{1}{n_r}\sum_{i \in r} \ell_i = \frac{1}{n}\sum_i \ell_i .$$
#
# **Communication.** One gradient per distinct tensor crosses the network: with
# $P_{\text{distinct}}$ float32 parameters, a ring Allreduce sends about
# $2\,\frac{K-1}{K}\, 4\, P_{\text{distinct}}$ bytes per rank and step.

# %% [markdown]
# ## 12.2 A checkpoint that keeps sharing
#
# Six-layer ALBERTs, not-shared and all-shared, saved with `checkpoint.save`: the file holds each
# distinct tensor once, so the all-shared file is the smaller by the five layer sets it does not
# repeat. (The stack holds its *sets*, not its positions, so a shared layer set has one name; the
# tied output matrix is the name that aliases another.)

# %%
folder = tempfile.mkdtemp(prefix="minishare-nb12-")
models = {}
for sharing in ("not-shared", "all-shared"):
    config = AlbertConfig.from_preset("albert-tiny", vocab_size=500, num_hidden_layers=6, sharing=sharing)
    models[sharing] = model = AlbertForPreTraining(config)
    path = checkpoint.save(model, os.path.join(folder, f"{sharing}.npz"))
    with zipfile.ZipFile(path) as z:
        print(f"{sharing:11s} {len(z.namelist()) - 1:4d} arrays   {os.path.getsize(path) / 1e6:5.2f} MB   "
              f"{len(list(model.named_parameters(remove_duplicate=False)))} names of parameters")

# %% [markdown]
# The aliases the library records (the name on the left is the same tensor as the one on the
# right), from `checkpoint.aliases`:

# %%
model = models["all-shared"]
shown = checkpoint.aliases(model)
for alias, first in shown.items():
    print(f"{alias}  ->  {first}")
course.Source(checkpoint.aliases)

# %% [markdown]
# Loading rebuilds the model from its configuration, which recreates the sharing, fills each
# distinct tensor and checks that the file's aliases are the model's. The shared positions are one
# object again: a change through one name is seen through every other.

# %%
loaded = checkpoint.load(os.path.join(folder, "all-shared.npz"))
names = dict(loaded.named_parameters(remove_duplicate=False))
alias, first = next(iter(shown.items()))
print("one tensor under both names:", names[alias] is names[first])
print("the weights are the saved ones:",
      all(np.array_equal(p.numpy(), q.numpy()) for (_, p), (_, q) in zip(model.named_parameters(), loaded.named_parameters())))

# %% [markdown]
# ## 12.3 Data parallel, two ranks in one process
#
# `mpiexec -n K python -m minishare train --data-parallel` runs $K$ processes. What each computes
# can be run here in one: a global batch of 7 sequence pairs of the copy task, split over 2 ranks
# as `numpy.array_split` splits it (4 rows and 3), on a Cycle (rev) encoder-decoder. The rows differ
# in length, so the ranks hold different numbers of target tokens:

# %%
task = Seq2SeqTask("copy", batch_size=7, seed=0)
batch = task.batch(0)
K = 2
for rank in range(K):
    start, stop = distributed.shard_rows(7, K, rank)
    print(f"rank {rank}: rows {start}-{stop - 1}, {task.loss_counts(distributed.shard(batch, K, rank))['loss']} target "
          f"tokens of {task.loss_counts(batch)['loss']}")

# %%
config = TransformerConfig(vocab_size=task.task.vocab_size, hidden_size=16, num_attention_heads=2,
                           intermediate_size=32, num_hidden_layers=4, num_unique_layers=2, sharing="cycle-rev")
net = EncoderDecoderModel(config).double()


def gradients():
    return {name: backend.to_numpy(p.grad).copy() for name, p in net.named_parameters() if p.grad is not None}


net.zero_grad()
task.loss(net, batch)[0].backward()                  # one process, the whole batch
whole = gradients()
summed, averaged = {}, {}
for rank in range(K):
    net.zero_grad()
    sum(distributed.scaled_terms(task, net, batch, K, rank).values()).backward()   # what rank r sends
    for name, g in gradients().items():
        summed[name] = summed.get(name, 0) + g
    net.zero_grad()
    task.loss(net, distributed.shard(batch, K, rank))[0].backward()               # rank r's own mean
    for name, g in gradients().items():
        averaged[name] = averaged.get(name, 0) + g / K
flat = lambda grads: np.concatenate([grads[n].ravel() for n in sorted(whole)])
for label, grads in (("sum of the scaled terms", summed), ("average of the ranks' means", averaged)):
    error = np.linalg.norm(flat(grads) - flat(whole)) / np.linalg.norm(flat(whole))
    print(f"{label:28s} relative error against the whole batch's gradient: {error:.1e}")

# %% [markdown]
# The library's weighting, one function:

# %%
course.Source(distributed.scaled_terms)

# %% [markdown]
# ## 12.4 What one Allreduce carries
#
# One flat buffer per step: the gradient of every distinct parameter (a shared tensor once), one
# has-a-gradient flag per parameter, and the scaled losses. For the network above:

# %%
buffer, distinct = distributed.flatten_gradients(net.parameters())
every_name = sum(p.numpy().size for _, p in net.named_parameters(remove_duplicate=False))
print(f"{len(distinct)} distinct parameters; buffer of {buffer.size:,} numbers "
      f"(one per name would be {every_name:,})")

# %% [markdown]
# The `communication` experiment of `reproduce` counts those bytes for ALBERT's four variants at
# the ALBERT-base shape and times a step on two ranks at a small shape: compute against
# Allreduce. Quick mode runs it here (the timing needs mpi4py and `mpiexec`; without them the
# result says so); full mode loads the committed run.

# %%
comm = course.experiment("communication", notebook="12-communication")
base = comm["counted"]
for name, row in base.items():
    print(f"{name:16s} {row['parameters']:>12,} distinct parameters   {row['bytes'] / 1e6:7.1f} MB per step   "
          f"{row['bytes'] / base['not-shared']['bytes']:.3f} × not-shared")

# %%
course.show_experiment("communication", comm, notebook="12-communication")

# %% [markdown]
# The bytes shrink with the distinct parameters, by count. The compute column is not expected to
# move (notebook 11: $M$ appears nowhere in the FLOPs); the sentences under the table say what this
# run's timing can tell, only where the rounds' ranges separate.

# %% [markdown]
# ## 12.5 Exercises
#
# 1. **A checkpoint that keeps sharing** (exercise 12 in `exercises/ex12_checkpoint_sharing`):
#    store each distinct tensor once with its aliases, load without breaking identities, refuse a
#    model whose sharing differs, and re-tie a model whose sharing was lost.
# 2. Save the all-shared model of 12.2 the naive way, `np.savez(path, **{name: p.numpy() for name,
#    p in model.named_parameters(remove_duplicate=False)})`, and load it into a fresh model by
#    making a new Parameter per name. Are the word embeddings and the output matrix still one
#    tensor after one training step? What does the naive file fail to record?
# 3. In 12.3, split the batch over 3 ranks. Is the average of the ranks' means closer to the whole
#    batch's gradient or further from it? Why can it never be exact here?
# 4. With mpi4py and MPICH installed (`pip install mpi4py mpich`), run
#    `mpiexec -n 2 python -m minishare train --data-parallel --task copy --steps 20 --out runs/dp`
#    and the same without `mpiexec` and `--data-parallel` into another folder. Compare the two
#    `history` files: which numbers agree, and to how many digits?

# %% [markdown]
# ## 12.6 Predict, then run
#
# **Q1.** A ring Allreduce over K = 4 ranks of a model with one million distinct float32
# parameters: how many bytes does each rank send per step?

# %%
guess = None
print(course.reveal(guess, int(2 * (4 - 1) / 4 * 4 * 1_000_000), "bytes sent per rank and step"))

# %% [markdown]
# **Q2.** A global batch of 10 rows over K = 4 ranks: how many rows does the last rank (3) get?

# %%
guess = None
start, stop = distributed.shard_rows(10, 4, 3)
print(course.reveal(guess, stop - start, "rows of rank 3"))
