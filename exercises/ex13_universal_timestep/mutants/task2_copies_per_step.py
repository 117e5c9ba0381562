"""One registered layer, but each step runs a deep copy of it made in __init__ (kept in a plain
list, so the parameter count looks right): the copies start equal to the layer, then drift, and
the registered layer gets no gradient from the steps."""
import copy


class UniversalEncoder(Module):
    def __init__(self, hidden_size, num_heads, intermediate_size, steps):
        super().__init__()
        self.steps = steps
        self.attention = Residual(MultiHeadAttention(hidden_size, num_heads), hidden_size, "post", 0.0, 1e-12)
        self.ffn = Residual(FFN(hidden_size, intermediate_size, "relu"), hidden_size, "post", 0.0, 1e-12)
        self.unrolled = [(copy.deepcopy(self.attention), copy.deepcopy(self.ffn)) for _ in range(steps)]

    def forward(self, x, mask=None):
        B, T, H = x.shape
        for t, (attention, ffn) in enumerate(self.unrolled):
            x = x + timestep_signal(t, T, H).astype(x.dtype)
            x = ffn(attention(x, mask=mask))
        return x

    def double(self):
        super().double()
        for attention, ffn in self.unrolled:
            attention.double()
            ffn.double()
        return self
