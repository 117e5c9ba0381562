"""Re-injection by replacement: every iteration starts again from x (s <- layer(x)), so r
iterations compute what one does and the state carries nothing forward."""


class LoopedBlock(LoopedBlock):
    def iterate(self, s, x, n):
        for _ in range(n):
            s = self.ffn(self.attention(x))
        return s
