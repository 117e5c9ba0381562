"""The basic layers: Linear, Embedding, LayerNorm, Dropout (PyTorch's names and layouts)."""
from minishare import functional as F
from minishare.nn import init
from minishare.nn.module import Module, Parameter


class Linear(Module):
    """y = x Wᵀ + b.  W (out_features, in_features), b (out_features,); x (..., in) -> (..., out).
    Initialized as PyTorch does (uniform ±1/√in); models apply BERT's init on top."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(init.empty(out_features, in_features))
        self.bias = Parameter(init.empty(out_features)) if bias else None
        init.linear_default_(self.weight, self.bias)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table W (num_embeddings, embedding_dim): ids (...) -> (..., embedding_dim).
    Initialized N(0, 1), as PyTorch does."""

    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = init.normal_(Parameter(init.empty(num_embeddings, embedding_dim)))

    def forward(self, ids):
        return F.embedding(ids, self.weight)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Normalize over the last axis (size ``normalized_shape``), then scale and shift."""

    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.normalized_shape, self.eps = normalized_shape, eps
        self.weight = init.ones_(Parameter(init.empty(normalized_shape)))
        self.bias = Parameter(init.empty(normalized_shape))

    def forward(self, x):
        return F.layer_norm(x, self.weight, self.bias, eps=self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"


class Dropout(Module):
    """Zero activations with probability p while training; the identity in eval mode."""

    def __init__(self, p=0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must lie in [0, 1], got {p}")
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"
