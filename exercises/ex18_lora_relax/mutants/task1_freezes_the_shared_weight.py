"""Returns no gradient for W, as LoRA fine-tuning freezes its pretrained weight: in a Relaxed
Recursive Transformer the shared W trains too (uptraining updates W, A and B together)."""


class LoRALinear(LoRALinear):
    def backward(self, grad):
        grad_x, _, grad_A, grad_B, grad_b = super().backward(grad)
        return grad_x, None, grad_A, grad_B, grad_b
