"""Gives the head a copy of the table (a new Parameter with the same values) instead of the
table itself: equal at the start, two tensors that drift apart at the first step."""
from minishare.nn import Linear, Module, Parameter, init


class TiedHead(Module):
    eps = 1e-6

    def __init__(self, word_embeddings, hidden_size):
        super().__init__()
        V, E = word_embeddings.weight.shape
        self.dense = Linear(hidden_size, E)
        self.gain = init.ones_(Parameter(init.empty(E)))
        self.weight = Parameter(word_embeddings.weight.data.copy())
        self.bias = Parameter(init.empty(V))

    def forward(self, h):
        x = F.gelu(self.dense(h))                                          # noqa: F821
        x = x / ((x * x).mean(axis=-1, keepdims=True) + self.eps).sqrt() * self.gain
        return F.linear(x, self.weight, self.bias)                         # noqa: F821
