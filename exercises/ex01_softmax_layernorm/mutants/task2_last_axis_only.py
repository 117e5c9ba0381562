"""The inner product <g, y> summed over the last axis whatever ``axis`` was: right for the usual
axis=-1 of attention, wrong along any other axis."""


class SoftmaxWithTemperature(SoftmaxWithTemperature):
    def backward(self, grad):
        grad_z = self.y * (grad - (grad * self.y).sum(axis=-1, keepdims=True))
        grad_x = grad_z / self.tau
        grad_tau = -(grad_x * self.x).sum() / self.tau
        return grad_x, backend.xp.asarray(grad_tau).reshape(self.tau.shape)
