"""A tied head that skips its nonlinearity: dense H -> E, then straight into the norm and the
tied scores. Shapes, counts and the sum-of-uses gradient are all right; only the values show
the missing gelu."""
from minishare import functional as F


class TiedHead(TiedHead):                              # noqa: F821  (the solution's class)
    def forward(self, h):
        x = self.dense(h)
        x = x / ((x * x).mean(axis=-1, keepdims=True) + self.eps).sqrt() * self.gain
        return F.linear(x, self.weight, self.bias)
