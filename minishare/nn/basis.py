"""Basis Sharing (Wang et al., 2024, arXiv 2410.03765): the layers keep weights of their own, but
the weights of one type (every layer's query, say) are written over one shared basis.

Concatenate the n layers' weights of that type side by side and take one SVD:

    [W₁ W₂ … Wₙ] = U Σ Vᵀ ≈ U_k Σ_k V_kᵀ,      W_i ≈ B C_i,

with the basis B = U_k Σ_k (out, k) shared by the n layers and the coefficients C_i (k, in) the
i-th block of in columns of V_kᵀ, layer i's own. Every column of every W_i is a combination of the
same k basis vectors (the paper's Fig. 2). n weights of out × in become out · k + n · k · in
numbers, and at k = min(out, n · in) the product is exact. No training: it is a truncated SVD, so
its error is the singular values it drops (``reconstruction_error``). (The paper whitens each
weight with its inputs' statistics before the SVD, as SVD-LLM does, so that the error it
minimizes is the error of the layer's outputs on data; this plain version minimizes the error of
the weights.)
"""
import numpy   # host-side: one SVD per weight type, at conversion

from minishare import backend, functional as F
from minishare.checks import check_int
from minishare.errors import InvalidValue
from minishare.nn.module import Module, Parameter


def check_basis_rank(k, out_features, in_features, n_layers):
    """The one rule of a basis size: an int in [1, min(out, n · in)], the rank of the stacked
    weights at most."""
    k = check_int(k, "k")
    if not 1 <= k <= min(out_features, n_layers * in_features):
        raise InvalidValue(f"k must lie in [1, min(out_features, n_layers * in_features)] = "
                           f"[1, {min(out_features, n_layers * in_features)}], got {k}")
    return k


def basis_sharing(weights, k):
    """(basis (out, k), [coefficients (k, in)] per layer) of ``weights``, host arrays of one
    shape (out, in), one per layer: the rank-k truncated SVD of their side-by-side concatenation."""
    weights = [numpy.asarray(w) for w in weights]
    if not weights or any(w.ndim != 2 or w.shape != weights[0].shape for w in weights):
        raise InvalidValue(f"basis_sharing needs weights of one 2-D shape (out, in), got shapes "
                           f"{[w.shape for w in weights]}")
    out_features, in_features = weights[0].shape
    k = check_basis_rank(k, out_features, in_features, len(weights))
    U, S, Vt = numpy.linalg.svd(numpy.concatenate(weights, axis=1), full_matrices=False)
    basis = U[:, :k] * S[:k]                                           # (out, k)
    return basis, [Vt[:k, i * in_features:(i + 1) * in_features] for i in range(len(weights))]


def reconstruction_error(weights, k):
    """‖[W₁ … Wₙ] - B [C₁ … Cₙ]‖_F / ‖[W₁ … Wₙ]‖_F of ``basis_sharing(weights, k)``: the share of
    the stacked weights' norm that a basis of k vectors leaves out."""
    basis, coefficients = basis_sharing(weights, k)
    stacked = numpy.concatenate([numpy.asarray(w) for w in weights], axis=1)
    rebuilt = numpy.concatenate([basis @ c for c in coefficients], axis=1)
    return float(numpy.linalg.norm(stacked - rebuilt) / numpy.linalg.norm(stacked))


class BasisLinear(Module):
    """y = x (B C)ᵀ + b = (x Cᵀ) Bᵀ + b: a linear layer whose weight is a shared ``basis`` B (out,
    k), a Parameter several layers hold, times its own ``coefficients`` C (k, in). The input is
    first written in the k coefficients' coordinates, then mapped out through the basis; the
    product B C is never formed. ``bias`` (out,) is the layer's own."""

    def __init__(self, basis, coefficients, bias=None):
        super().__init__()
        if basis.ndim != 2 or coefficients.ndim != 2 or basis.shape[1] != coefficients.shape[0]:
            raise InvalidValue(f"BasisLinear needs a basis (out, k) and coefficients (k, in), got "
                               f"{basis.shape} and {coefficients.shape}")
        self.out_features, self.in_features = basis.shape[0], coefficients.shape[1]
        self.basis = basis
        self.coefficients = coefficients
        self.bias = bias

    def forward(self, x):
        return F.linear(F.linear(x, self.coefficients), self.basis, self.bias)   # (..., k) -> (..., out)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, k={self.basis.shape[1]}"


def basis_linears(linears, k):
    """One ``BasisLinear`` per Linear of ``linears`` (weights of one type, one per layer), all
    holding one shared basis Parameter; each keeps its Linear's bias Parameter."""
    basis, coefficients = basis_sharing([backend.to_numpy(lin.weight.data) for lin in linears], k)
    dtype = linears[0].weight.dtype
    shared = Parameter(backend.asarray(basis.astype(dtype)))
    return [BasisLinear(shared, Parameter(backend.asarray(c.astype(dtype))), lin.bias)
            for lin, c in zip(linears, coefficients)]
