"""Steps counted from 1 (t = 1 .. steps), as "the first step" reads in prose: the signal of step
t + 1 is added before step t."""


class UniversalEncoder(UniversalEncoder):
    def forward(self, x, mask=None):
        B, T, H = x.shape
        for t in range(1, self.steps + 1):
            x = x + timestep_signal(t, T, H).astype(x.dtype)
            x = self.ffn(self.attention(x, mask=mask))
        return x
