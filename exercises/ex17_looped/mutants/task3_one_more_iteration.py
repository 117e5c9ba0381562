"""Off by one: k + 1 iterations backpropagated, the first of them one that should have run as a
constant."""


class LoopedBlock(LoopedBlock):
    def forward(self, x, iterations, backprop_iterations=None):
        k = iterations if backprop_iterations is None else min(backprop_iterations + 1, iterations)
        s = minishare.tensor(np.zeros(x.shape, dtype=x.dtype))
        with minishare.no_grad():
            s = self.iterate(s, x, iterations - k)
        return self.iterate(s, x, k)
