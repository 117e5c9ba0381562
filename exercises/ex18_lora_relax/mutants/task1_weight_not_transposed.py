"""Multiplies by W + B A without the transpose, y = x (W + B A) + b: the same numbers for a
square W that is symmetric, and wrong (or not even the right shape) for any other."""


class LoRALinear(Function):
    def forward(self, x, weight, lora_A, lora_B, bias):
        self.x, self.weight, self.lora_A, self.lora_B = x, weight, lora_A, lora_B
        return x @ weight + (x @ lora_B) @ lora_A + bias

    def backward(self, grad):
        x2, g2 = self.x.reshape(-1, self.x.shape[-1]), grad.reshape(-1, grad.shape[-1])
        W, A, B = self.weight, self.lora_A, self.lora_B
        return (grad @ W.T + (grad @ A.T) @ B.T, x2.T @ g2, (x2 @ B).T @ g2, x2.T @ (g2 @ A.T), g2.sum(axis=0))
