"""A fresh copy of the layer for every iteration built in __init__ and used in turn: the depth is
not shared, so the parameters grow with the iterations (and the ones named are not the ones
used)."""
from minishare.nn import ModuleList


class LoopedBlock(LoopedBlock):
    def __init__(self, hidden_size, num_heads, intermediate_size):
        super().__init__(hidden_size, num_heads, intermediate_size)
        self.copies = ModuleList(
            ModuleList([Residual(MultiHeadAttention(hidden_size, num_heads), hidden_size, "post", 0.0, 1e-12),
                        Residual(FFN(hidden_size, intermediate_size, "relu"), hidden_size, "post", 0.0, 1e-12)])
            for _ in range(8))

    def iterate(self, s, x, n):
        for t in range(n):
            attention, ffn = (self.attention, self.ffn) if t == 0 else self.copies[t % 8]
            s = ffn(attention(s + x))
        return s
