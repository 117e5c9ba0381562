"""RMSNorm that still subtracts the row mean: LayerNorm without the bias, which is not Zhang &
Sennrich's op (RMSNorm drops the centring as well)."""


class RMSNorm(RMSNorm):
    def forward(self, x, weight, eps=1e-6):
        xp = backend.xp
        x = x - x.mean(axis=-1, keepdims=True)
        self.r = 1 / xp.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
        self.x_hat, self.weight = x * self.r, weight
        return self.x_hat * weight
