"""RMSNorm's input gradient r ⊙ w ⊙ g, as if the root mean square did not depend on x: the
projection -x̂ ⟨g, x̂⟩ / H is missing."""


class RMSNorm(RMSNorm):
    def backward(self, grad):
        H = self.x_hat.shape[-1]
        return self.r * grad * self.weight, (grad * self.x_hat).reshape(-1, H).sum(axis=0)
