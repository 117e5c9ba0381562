"""LayerNorm with the unbiased variance (divide by H - 1, NumPy's ddof=1 or torch.var's default)
instead of the biased one of Ba et al. and every framework's LayerNorm."""


class LayerNorm(LayerNorm):
    def forward(self, x, weight, bias, eps=1e-5):
        xp = backend.xp
        H = x.shape[-1]
        centered = x - x.mean(axis=-1, keepdims=True)
        self.rstd = 1 / xp.sqrt((centered ** 2).sum(axis=-1, keepdims=True) / (H - 1) + eps)
        self.x_hat, self.weight = centered * self.rstd, weight
        return self.x_hat * weight + bias
