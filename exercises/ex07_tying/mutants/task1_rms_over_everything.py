"""Takes the root mean square over the whole batch (``mean()`` without an axis) instead of over
each position's E features: every position is divided by the same number."""
from minishare import functional as F


class TiedHead(TiedHead):                              # noqa: F821
    def forward(self, h):
        x = F.gelu(self.dense(h))
        x = x / ((x * x).mean() + self.eps).sqrt() * self.gain
        return F.linear(x, self.weight, self.bias)
