"""``LoRALinear``: a linear layer whose weight is a shared W plus a low-rank correction B A of its
own, and the truncated SVD that initializes the correction.

A Relaxed Recursive Transformer (Bae et al., 2024, arXiv 2410.20672) ties the layers of a
trained model into a few shared sets, then gives each position back a little freedom: position
ℓ computes with

    W'_set(ℓ) + B_ℓ A_ℓ,     B_ℓ (out, r), A_ℓ (r, in),

a LoRA module (Hu et al., 2021) of rank r. The shared W' and its bias are the shared layer's own
tensors (the same Parameters at every position that uses the set, so they are stored and counted
once); A and B belong to the position and add r (in + out) parameters to it. The paper
initializes them from the truncated SVD of what sharing took away, the residual of the original
layer to its shared set:

    W_ℓ - W'_set(ℓ) = U Σ Vᵀ,     B_ℓ = U_r Σ_r,   A_ℓ = V_rᵀ

(``lora_from_svd``), the best rank-r approximation of the residual (Eckart & Young, 1936): at
r = min(in, out) the position computes the original layer exactly, at r = 0 the shared one.
"""
import numpy   # host-side: the SVD of a residual runs once, at conversion

from minishare import backend, functional as F
from minishare.checks import check_int
from minishare.errors import InvalidValue
from minishare.nn import init
from minishare.nn.layers import Linear
from minishare.nn.module import Parameter


def check_rank(rank, in_features, out_features):
    """The one rule of a LoRA rank: an int in [0, min(in, out)] (a higher rank adds parameters and
    no freedom: B A has rank at most min(in, out) already)."""
    rank = check_int(rank, "rank")
    if not 0 <= rank <= min(in_features, out_features):
        raise InvalidValue(f"rank must lie in [0, min(in_features, out_features)] = "
                           f"[0, {min(in_features, out_features)}], got {rank}")
    return rank


class LoRALinear(Linear):
    """y = x (W + B A)ᵀ + b: a ``Linear`` relaxed by a rank-``rank`` correction (``F.lora_linear``).

    ``weight`` (out, in) and ``bias`` (out,) are a Linear's; ``lora_A`` (r, in) and ``lora_B``
    (out, r) the correction, PEFT's names and layouts. Built on its own, it starts as LoRA does
    (Hu et al., 2021, Sec. 4.1: A random, B zero, so B A = 0 and it computes its Linear);
    ``LoRALinear.relaxing(linear, rank)`` shares an existing Linear's tensors instead."""

    def __init__(self, in_features, out_features, rank, bias=True):
        super().__init__(in_features, out_features, bias)
        self.rank = check_rank(rank, in_features, out_features)
        self.lora_A = init.normal_(Parameter(init.empty(self.rank, in_features)), std=1 / in_features ** 0.5)
        self.lora_B = init.zeros_(Parameter(init.empty(out_features, self.rank)))

    @classmethod
    def relaxing(cls, linear, rank):
        """A LoRALinear whose W and b *are* ``linear``'s Parameters (shared, not copied), with a
        correction of its own, B A = 0 until set (``init_from_svd_``)."""
        relaxed = cls(linear.in_features, linear.out_features, rank, bias=linear.bias is not None)
        relaxed.weight, relaxed.bias = linear.weight, linear.bias
        for p in (relaxed.lora_A, relaxed.lora_B):      # a float64 model stays float64
            p.data = p.data.astype(linear.weight.dtype)
        return relaxed

    def init_from_svd_(self, original):
        """Set B A to the rank-r truncated SVD of ``original`` - W (Bae et al., 2024): ``original``
        is the weight (out, in) this position had before it was tied. Returns self."""
        B, A = lora_from_svd(backend.to_numpy(original) - self.weight.numpy(), self.rank)
        self.lora_B.data = backend.asarray(B.astype(self.lora_B.dtype))
        self.lora_A.data = backend.asarray(A.astype(self.lora_A.dtype))
        return self

    def forward(self, x):
        return F.lora_linear(x, self.weight, self.lora_A, self.lora_B, self.bias)

    def extra_repr(self):
        return f"{super().extra_repr()}, rank={self.rank}"


def lora_from_svd(residual, rank):
    """(B, A) with B A the best rank-``rank`` approximation of ``residual`` (out, in), a host
    array: residual = U Σ Vᵀ, B = U_r Σ_r (out, r), A = V_rᵀ (r, in), as Bae et al. (2024) put
    the singular values into B."""
    residual = numpy.asarray(residual)
    if residual.ndim != 2:
        raise InvalidValue(f"lora_from_svd needs a 2-D residual (out, in), got shape {residual.shape}")
    rank = check_rank(rank, residual.shape[1], residual.shape[0])
    U, S, Vt = numpy.linalg.svd(residual, full_matrices=False)   # U (out, k), S (k,), Vt (k, in)
    return U[:, :rank] * S[:rank], Vt[:rank]
