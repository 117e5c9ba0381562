"""An encoder that builds one layer per step (a ModuleList of `steps` attention/FFN pairs) and
runs layer t at step t: a deep Transformer with a timestep signal, not the Universal Transformer's
one shared layer. It has `steps` times the parameters."""
from minishare.nn import ModuleList


class UniversalEncoder(Module):
    def __init__(self, hidden_size, num_heads, intermediate_size, steps):
        super().__init__()
        self.steps = steps
        self.attention_layers = ModuleList([Residual(MultiHeadAttention(hidden_size, num_heads), hidden_size, "post", 0.0, 1e-12)
                                            for _ in range(steps)])
        self.ffn_layers = ModuleList([Residual(FFN(hidden_size, intermediate_size, "relu"), hidden_size, "post", 0.0, 1e-12)
                                      for _ in range(steps)])
        self.attention, self.ffn = self.attention_layers[0], self.ffn_layers[0]

    def forward(self, x, mask=None):
        B, T, H = x.shape
        for t in range(self.steps):
            x = x + timestep_signal(t, T, H).astype(x.dtype)
            x = self.ffn_layers[t](self.attention_layers[t](x, mask=mask))
        return x
