"""eps added to the standard deviation, 1 / (σ + eps), instead of to the variance under the root:
indistinguishable at eps = 1e-5 on unit-scale rows, wrong for a large eps."""


class LayerNorm(LayerNorm):
    def forward(self, x, weight, bias, eps=1e-5):
        xp = backend.xp
        centered = x - x.mean(axis=-1, keepdims=True)
        self.rstd = 1 / (xp.sqrt((centered ** 2).mean(axis=-1, keepdims=True)) + eps)
        self.x_hat, self.weight = centered * self.rstd, weight
        return self.x_hat * weight + bias
