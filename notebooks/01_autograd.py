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
# # 1. Autograd from scratch: why a weight used twice gets the sum of two gradients
#
# Every technique in this course (ALBERT's shared layers, the Universal Transformer, Takase &
# Kiyono's Cycle, a tied output layer) uses **one tensor at several places** in a network. Whether
# that trains correctly comes down to one line of the autograd engine. This notebook builds the
# engine up from the chain rule, then reads minishare's own, then checks it against finite
# differences.
#
# **You will:** derive the sum rule; write a scalar autograd of 25 lines; see minishare's graph of a
# shared weight draw itself; read one op's forward and backward side by side; gradcheck it; and see
# why finite differences need ε ≈ 1e-6.

# %%
import numpy as np

import minishare
import minishare.functional as F
from minishare import ops
from minishare.analysis.course_figures import plot_finite_difference
from minishare.analysis.graph import Graph
from minishare.experiments import course

print(course.setup())

# %% [markdown]
# ## 1.1 The math: the chain rule, and the sum rule
#
# If the loss depends on a weight $w$ only through one intermediate $u = g(w)$, the chain rule
# gives $\frac{\partial L}{\partial w} = \frac{\partial L}{\partial u}\,\frac{\partial u}{\partial w}$.
#
# A **shared** weight reaches the loss along several paths. With $w$ used twice,
# $L = L\big(u_1(w),\, u_2(w)\big)$, the multivariable chain rule says
#
# $$\frac{\partial L}{\partial w} \;=\; \frac{\partial L}{\partial u_1}\frac{\partial u_1}{\partial w}
#   \;+\; \frac{\partial L}{\partial u_2}\frac{\partial u_2}{\partial w}.$$
#
# One gradient per use, **added**. An ALBERT layer used at 12 positions gets the sum of 12
# gradients. An engine that *assigned* instead of adding would keep only the last use, and sharing
# would silently train only one layer position.

# %% [markdown]
# ## 1.2 From scratch: a scalar autograd in 25 lines
#
# A value remembers its inputs and, for each input, the local derivative. `backward` visits the
# values in reverse topological order and adds `local × upstream` into each input's gradient.
# (This is a teaching toy; minishare's engine below does the same on arrays.)

# %%
class Value:
    def __init__(self, data, inputs=()):
        self.data, self.grad, self.inputs = data, 0.0, inputs   # inputs: ((value, local derivative), ...)

    def __add__(self, other):
        return Value(self.data + other.data, ((self, 1.0), (other, 1.0)))

    def __mul__(self, other):
        return Value(self.data * other.data, ((self, other.data), (other, self.data)))

    def backward(self):
        order, seen = [], set()
        def visit(v):
            if id(v) not in seen:
                seen.add(id(v))
                for parent, _ in v.inputs:
                    visit(parent)
                order.append(v)
        visit(self)
        self.grad = 1.0
        for v in reversed(order):
            for parent, local in v.inputs:
                parent.grad += local * v.grad      # += : the sum rule

w, x1, x2 = Value(3.0), Value(2.0), Value(5.0)
y = w * x1 + w * x2                                # w used twice
y.backward()
print(f"dy/dw = {w.grad}  (x1 + x2 = {x1.data + x2.data})")

# %% [markdown]
# ## 1.3 The library: `Tensor`, `Function`, `backward()`
#
# minishare's `Tensor` wraps an array; a `Function` (an op) records its inputs; `backward()` walks
# the graph in reverse topological order. The line that carries the whole course is `accumulate`:

# %%
from minishare.tensor import accumulate

course.Source(accumulate)

# %% [markdown]
# The same shared weight, now a vector. The graph draws itself: leaves at the bottom, arrows in the
# forward direction; the orange leaf is used twice, so two arrows leave it and two gradients come
# back and are added.

# %%
rng = np.random.default_rng(0)
w = minishare.tensor(rng.standard_normal(4), requires_grad=True)     # float64: arrays keep their dtype
a = minishare.tensor(rng.standard_normal(4))
b = minishare.tensor(rng.standard_normal(4))
y = (w * a).sum() + (w * b).sum()
Graph(y, names={"w": w, "a": a, "b": b})

# %%
y.backward()
print("w.grad :", w.grad)
print("a + b  :", a.data + b.data, " <- the sum of the two uses' gradients")
assert np.allclose(w.grad, a.data + b.data)

# %% [markdown]
# ## 1.4 One op, forward and backward side by side
#
# Softmax, $y_i = e^{x_i} / \sum_j e^{x_j}$, has the vector-Jacobian product
# $\frac{\partial L}{\partial x} = y \odot \big(g - \sum_j g_j y_j\big)$ for an upstream gradient $g$.
# Here is the op as the library writes it, the equation in its docstring:

# %%
course.Source(ops.Softmax)

# %% [markdown]
# ## 1.5 Checking a gradient: finite differences
#
# `gradcheck` compares backward with central differences
# $\frac{\partial\phi}{\partial x_i} \approx \frac{\phi(x + \varepsilon e_i) - \phi(x - \varepsilon e_i)}{2\varepsilon}$
# in float64. Why central, and why ε ≈ 1e-6? Measure it: the error of one derivative of
# $\phi(x) = \sum_i v_i\,\mathrm{softmax}(x)_i$ for a range of ε.

# %%
x = minishare.tensor(rng.standard_normal(5), requires_grad=True)
v = rng.standard_normal(5)
(F.softmax(x, axis=-1) * minishare.tensor(v)).sum().backward()
exact = x.grad[0]

def phi(shift):
    moved = x.data.copy()
    moved[0] += shift
    return float((F.softmax(minishare.tensor(moved), axis=-1).data * v).sum())

eps = np.logspace(-12, -1, 23)
errors = {"central (φ(x+ε) − φ(x−ε)) / 2ε": [abs((phi(e) - phi(-e)) / (2 * e) - exact) for e in eps],
          "one-sided (φ(x+ε) − φ(x)) / ε": [abs((phi(e) - phi(0)) / e - exact) for e in eps]}
plot_finite_difference(eps, errors, title="Finite differences of softmax in float64: error against ε")

# %% [markdown]
# Large ε: the truncation error falls as ε² (central) or ε (one-sided). Small ε: round-off grows as
# about $10^{-16}/\varepsilon$. The central difference bottoms out near ε ≈ 1e-5 to 1e-6, which is
# why `gradcheck` uses ε = 1e-6 and float64 (in float32 the floor would be ~1e-3: too coarse to tell
# a right gradient from a slightly wrong one).
#
# The library's `gradcheck` does this for every entry, with a random cotangent:

# %%
x = minishare.tensor(rng.standard_normal((3, 4)), requires_grad=True)
print(minishare.gradcheck(lambda x: F.softmax(x, axis=-1), x))

# %% [markdown]
# A wrong backward is caught, and the message names the entry:

# %%
class WrongSquare(minishare.Function):
    """y = x², with a backward that forgot the factor 2."""
    def forward(self, x):
        self.x = x
        return x * x

    def backward(self, grad):
        return (grad * self.x,)          # should be 2 x

try:
    minishare.gradcheck(WrongSquare.apply, minishare.tensor(rng.standard_normal(3), requires_grad=True))
except minishare.GradcheckError as error:
    print("caught:", error)

# %% [markdown]
# ## 1.6 Exercises
#
# 1. **Sigmoid.** Complete `backward` of $\sigma(x) = 1/(1 + e^{-x})$, whose derivative is
#    $\sigma(1 - \sigma)$, until the check prints `True`.
# 2. **LayerNorm's backward.** Read `course.Source(ops.LayerNorm)`; derive
#    $\partial L/\partial x$ on paper for H = 2 and compare with the code.
# 3. **Assign instead of add.** In the scalar `Value` above, replace `+=` by `=` and run the shared
#    example again. Which of the two uses does the gradient keep, and why that one?

# %%
class Sigmoid(minishare.Function):
    def forward(self, x):
        self.y = 1 / (1 + np.exp(-x))
        return self.y

    def backward(self, grad):
        return (grad * 0,)               # TODO: the derivative of the sigmoid

try:
    print(minishare.gradcheck(Sigmoid.apply, minishare.tensor(rng.standard_normal(4), requires_grad=True)))
except minishare.GradcheckError as error:
    print("not yet:", str(error)[:90], "...")

# %% [markdown]
# ## 1.7 Predict, then run
#
# Write your prediction into `guess` before running each cell.
#
# **Q1.** A weight $w$ (4 numbers) is used three times: $y = \sum w \odot a + \sum w \odot b + \sum w \odot w$.
# With $w = (1, 1, 1, 1)$, $a = (1, 2, 3, 4)$ and $b = (4, 3, 2, 1)$, what is `w.grad[0]`?

# %%
guess = None
w = minishare.tensor(np.ones(4), requires_grad=True)
a3, b3 = minishare.tensor(np.array([1.0, 2, 3, 4])), minishare.tensor(np.array([4.0, 3, 2, 1]))
((w * a3).sum() + (w * b3).sum() + (w * w).sum()).backward()
print(course.reveal(guess, float(w.grad[0]), "w.grad[0]"))

# %% [markdown]
# **Q2.** You call `backward()` twice on the same loss without zeroing the gradient. By what factor
# does `w.grad` change? (As in PyTorch, the first call must say `retain_graph=True`: by default
# backward frees the arrays the forward pass saved, as soon as it has used them.)

# %%
guess = None
w = minishare.tensor(np.ones(2), requires_grad=True)
loss = (w * w).sum()
loss.backward(retain_graph=True)
first = float(w.grad[0])
loss.backward()
print(course.reveal(guess, float(w.grad[0]) / first, "w.grad after two backward() / after one"))
