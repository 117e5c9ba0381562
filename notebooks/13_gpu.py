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
# # 13. The same code on a GPU
#
# Every op in minishare asks one module, `minishare.backend`, for its array library at call time.
# NumPy is the default; CuPy, which mirrors NumPy's API on NVIDIA GPUs, runs the same code on a
# GPU. Between them sits a stand-in, `"strict"`: NumPy underneath, but its arrays refuse to mix with
# plain NumPy arrays, as CuPy's do. It finds host/device mixing on a laptop.
#
# **You will:** switch backends; see the strict stand-in catch a silent host/device mix and say how
# to fix it; time one training step on each backend this machine has (a GPU only if one is present:
# the notebook says so otherwise); read what changes on CuPy.

# %%
import numpy as np

import minishare
from minishare import backend, optim
from minishare.analysis import memory
from minishare.analysis.course_figures import plot_bars
from minishare.experiments import course
from minishare.models import AlbertConfig, AlbertForPreTraining

print(course.setup())
print("active backend:", backend.name)

# %% [markdown]
# ## 13.1 The switch
#
# `backend.use(name)` (or `MINISHARE_BACKEND=name` before Python starts) makes `backend.xp` NumPy,
# CuPy or the strict stand-in. Ops never import NumPy for their math; they write `backend.xp.exp(x)`.
# Data crosses between host and device only through two functions:

# %%
course.Source(backend.asarray)

# %%
course.Source(backend.to_numpy)

# %% [markdown]
# ## 13.2 The strict stand-in catches a silent mix
#
# On NumPy, adding a host array to a tensor's data just works, so a bug that would crash on a GPU
# passes every CPU test. Under `"strict"`, it fails with a message naming the fix:

# %%
backend.use("strict")
x = minishare.tensor([1.0, 2.0, 3.0])
print("x.data is a", type(x.data).__module__ + "." + type(x.data).__name__)
try:
    x.data + np.ones(3)                                  # a host array meets a "device" array
except TypeError as error:
    print(type(error).__name__ + ":", error)
print("explicit transfer works:", x.data + backend.asarray(np.ones(3)))
backend.use("numpy")

# %% [markdown]
# ## 13.3 Is there a GPU here?

# %%
try:
    backend.use("cupy")
    gpu = True
    print("CuPy found a GPU: the timings below include it")
except RuntimeError as error:
    gpu = False
    print("No GPU here, so this notebook runs on the CPU only:", error)
finally:
    backend.use("numpy")

# %% [markdown]
# ## 13.4 One training step on each backend
#
# Build the model *after* switching (arrays made under one backend are not moved by a switch),
# then time a step with `memory.step_time`, which waits for the GPU before reading the clock
# (CuPy launches kernels asynchronously; without the wait you would time the launch).

# %%
course.Source(backend.synchronize)

# %%
B, T = course.pick(quick=(8, 32), full=(32, 128))
rng = np.random.default_rng(0)
ids_host = rng.integers(5, 1000, (B, T))
labels_host = np.where(rng.random((B, T)) < 0.15, ids_host, -100)
seconds = {}
for name in ("numpy", "strict") + (("cupy",) if gpu else ()):
    backend.use(name)
    minishare.manual_seed(0)
    model = AlbertForPreTraining(AlbertConfig.from_preset("albert-tiny", vocab_size=1000))
    ids, labels = backend.asarray(ids_host), backend.asarray(labels_host)     # host -> device, explicitly
    times = memory.step_time(model, lambda m: m(ids, labels=labels).loss, optim.AdamW(model.parameters(), lr=1e-3),
                             repeats=course.pick(quick=3, full=10))
    seconds[name] = {"training step": times["train"] * 1e3, "inference": times["inference"] * 1e3}
backend.use("numpy")
for name, s in seconds.items():
    print(f"{name:7s} training step {s['training step']:7.1f} ms   inference {s['inference']:7.1f} ms")
plot_bars({name: s for name, s in seconds.items()}, ylabel="milliseconds (median)", xlabel="what is timed",
          title=f"albert-tiny, batch {B} × {T} tokens, on each backend present"
                + ("" if gpu else " (no GPU here: CPU backends only)"))

# %% [markdown]
# The strict backend computes with NumPy and adds a wrapper around every call, so it is slower than
# NumPy; it exists to find bugs, not to run fast. On a GPU, a tiny model like this one is often no
# faster than the CPU: each op launches a kernel, and at this size the launches dominate. The gap
# opens with larger H and batches (exercise 2).
#
# ## 13.5 What changes on CuPy
#
# Three things differ on a GPU, and the library handles each in one place:
#
# - **Functions NumPy lacks or spells differently.** `backend.erf` (the exact GELU) takes CuPy's
#   from `cupyx.scipy.special` and computes on the host otherwise.
# - **Clocks.** CuPy returns before the GPU has finished; `backend.synchronize` waits before a
#   time is read (above).
# - **Waiting for the device.** Reading a device value on the host (`bool(x)`, `float(x)`,
#   `.item()`) makes the host wait until the GPU's queue is empty. An op's input check such as
#   "ids lie in [0, V)" would do that at every call; `backend.check` records the check instead,
#   and a training step reads all of them together. The strict backend *counts* these waits, so
#   a test can say how many a step costs:

# %%
course.Source(backend.check)

# %%
backend.use("strict")
minishare.manual_seed(0)
model = AlbertForPreTraining(AlbertConfig.from_preset("albert-tiny", vocab_size=1000))
ids, labels = backend.asarray(ids_host), backend.asarray(labels_host)
before = backend.host_syncs()
loss = model(ids, labels=labels).loss
loss.backward()
print(f"host waits during one forward and backward pass on the strict backend: {backend.host_syncs() - before}")
backend.use("numpy")

# %% [markdown]
# ## 13.6 Exercises
#
# 1. Run the whole test suite under the stand-in: `MINISHARE_BACKEND=strict python -m pytest -q`.
#    Then break it on purpose: in a copy of an op, replace one `backend.xp` call with `numpy` and
#    see which test names the mix.
# 2. Time `albert-base`-sized steps (H = 768) on NumPy with batch 8 × 128 and compare with the tiny
#    model: how does the time grow with H? (FLOPs grow as H², notebook 11.)
# 3. Where does `Tensor.numpy()` transfer, and why is it the only way a test reads a result?

# %% [markdown]
# ## 13.7 Predict, then run
#
# **Q1.** On the strict backend, what type does `backend.to_numpy(x.data)` return?

# %%
guess = None
backend.use("strict")
returned = type(backend.to_numpy(minishare.tensor([1.0]).data)).__name__
backend.use("numpy")
print(course.reveal(guess, returned, "name of the type returned"))

# %% [markdown]
# **Q2.** How many times slower than NumPy was the strict backend's training step above?

# %%
guess = None
print(course.reveal(guess, round(seconds["strict"]["training step"] / seconds["numpy"]["training step"], 2),
                    "strict / numpy, training step"))
