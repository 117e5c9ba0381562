"""The first k iterations backpropagated and the last r − k run as constants: the wrong end of
the loop, so the output is cut from the graph whenever k < r."""


class LoopedBlock(LoopedBlock):
    def forward(self, x, iterations, backprop_iterations=None):
        k = iterations if backprop_iterations is None else min(backprop_iterations, iterations)
        s = self.iterate(minishare.tensor(np.zeros(x.shape, dtype=x.dtype)), x, k)
        with minishare.no_grad():
            return self.iterate(s, x, iterations - k)
