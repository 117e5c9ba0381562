"""The coordinate embedding added once, before the first step, as a Transformer adds its position
embedding: the shared layer then cannot tell which step it is at."""


class UniversalEncoder(UniversalEncoder):
    def forward(self, x, mask=None):
        B, T, H = x.shape
        x = x + timestep_signal(0, T, H).astype(x.dtype)
        for t in range(self.steps):
            x = self.ffn(self.attention(x, mask=mask))
        return x
