"""backprop_iterations ignored: every iteration is backpropagated, the full gradient where the
truncated one was asked for (right values, wrong gradient, r times the memory)."""


class LoopedBlock(LoopedBlock):
    def forward(self, x, iterations, backprop_iterations=None):
        return self.iterate(minishare.tensor(np.zeros(x.shape, dtype=x.dtype)), x, iterations)
