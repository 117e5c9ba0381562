"""The functions students call, under torch.nn.functional's names: ``import minishare.functional as F``.

Each is a thin door to one op in ``minishare.ops`` (or a short composition of ops); the maths and
the gradients live there. Reductions take NumPy's ``axis=`` (PyTorch says ``dim=``).
"""
from minishare import backend, ops
from minishare.tensor import Tensor


def _as_tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def linear(input, weight, bias=None):
    """y = x Wᵀ + b; x (..., in), W (out, in), b (out,) -> (..., out)."""
    return ops.Linear.apply(input, weight) if bias is None else ops.Linear.apply(input, weight, bias)


def lora_linear(input, weight, lora_A, lora_B, bias=None):
    """y = x (W + B A)ᵀ + b; x (..., in), W (out, in), A (r, in), B (out, r), b (out,) -> (..., out)."""
    args = (input, weight, lora_A, lora_B) + (() if bias is None else (bias,))
    return ops.LoRALinear.apply(*args)


def relu(input):
    return ops.ReLU.apply(input)


def gelu(input, approximate="none"):
    """x Φ(x); ``approximate="tanh"`` is BERT's and ALBERT's "gelu_new"."""
    return ops.GELU.apply(input, approximate=approximate)


def tanh(input):
    return ops.Tanh.apply(input)


def softmax(input, axis=-1):
    return ops.Softmax.apply(input, axis=axis)


def masked_softmax(input, mask, axis=-1):
    """softmax over the entries where ``mask`` (a boolean array or Tensor, broadcast to the input)
    is True; the others get probability exactly 0. The same as
    ``softmax(masked_fill(input, ~mask, -inf))``, in one op: attention's scores are masked and
    normalized in the same passes, and the mask needs no backward of its own."""
    mask = mask.data if isinstance(mask, Tensor) else backend.asarray(mask)
    return ops.Softmax.apply(input, axis=axis, mask=mask)


def log_softmax(input, axis=-1):
    return ops.LogSoftmax.apply(input, axis=axis)


def layer_norm(input, weight=None, bias=None, eps=1e-5):
    """Normalize over the last axis, then scale by ``weight`` and shift by ``bias`` (either may be
    None). PyTorch's ``F.layer_norm`` also takes ``normalized_shape``; here it is always the last
    axis."""
    input = _as_tensor(input)
    H = input.shape[-1]
    if weight is None:
        weight = Tensor(backend.xp.ones(H, dtype=input.dtype))
    if bias is None:
        bias = Tensor(backend.xp.zeros(H, dtype=input.dtype))
    return ops.LayerNorm.apply(input, weight, bias, eps=eps)


def dropout(input, p=0.5, training=True):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p); identity when
    ``training`` is False or p = 0."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability must lie in [0, 1], got {p}")
    if not training or p == 0:
        return input
    return ops.Dropout.apply(input, p=p)


def embedding(input, weight):
    """Rows of ``weight`` (V, E) picked by the integer ids ``input`` (...) -> (..., E)."""
    return ops.Embedding.apply(input, weight)


def cross_entropy(input, target, ignore_index=-100, reduction="mean"):
    """Cross-entropy of logits ``input`` (N, C) against class ids ``target`` (N,)."""
    return ops.CrossEntropy.apply(input, target, ignore_index=ignore_index, reduction=reduction)


def where(condition, input, other):
    """``input`` where ``condition`` holds, else ``other`` (broadcast)."""
    cond = condition.data if isinstance(condition, Tensor) else backend.asarray(condition)
    return ops.Where.apply(Tensor(cond), input, other)


def masked_fill(input, mask, value):
    """``input`` with ``value`` put where ``mask`` is True (PyTorch's ``Tensor.masked_fill``)."""
    return where(mask, value, input)


def gather_tokens(input, index):
    """The tokens ``index`` (B, k) of each sequence of ``input`` (B, T, ...) -> (B, k, ...)."""
    return ops.GatherTokens.apply(input, _index(index))


def scatter_add_tokens(input, index, src):
    """``input`` (B, T, ...) with ``src`` (B, k, ...) added at the positions ``index`` (B, k)."""
    return ops.ScatterAddTokens.apply(input, _index(index), src)


def _index(index):
    """Integer positions as a Tensor without a gradient (a host or backend array, or a Tensor)."""
    return index if isinstance(index, Tensor) else Tensor(backend.asarray(index))


def concatenate(tensors, axis=0):
    return ops.Concatenate.apply(*tensors, axis=axis)


def stack(tensors, axis=0):
    return ops.Stack.apply(*tensors, axis=axis)


split = ops.split
