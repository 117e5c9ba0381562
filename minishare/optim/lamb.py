"""LAMB, the layer-wise adaptive large-batch optimizer that ALBERT pre-trains with."""
from minishare import backend
from minishare.optim.adam import adam_direction, check_adam_hyperparameters
from minishare.optim.optimizer import Optimizer


class LAMB(Optimizer):
    """LAMB: Adam's direction plus decoupled weight decay, rescaled per tensor by a trust ratio.

    For each parameter tensor p (the paper's "layer"), with m̂ and v̂ Adam's bias-corrected moments
    (see ``adam_direction``):

        u = m̂ / (√v̂ + ε) + λ p
        r = ‖p‖ / ‖u‖                  (r = 1 where ‖p‖ = 0 or ‖u‖ = 0)
        p ← p − lr · r · u

    ‖·‖ is the L2 norm of the whole tensor. Since ‖r u‖ = ‖p‖, every tensor moves by lr times its
    own norm, whatever the scale of its gradients: that is what lets one learning rate serve
    embeddings, attention and FFN matrices at batch sizes of 32k and more. With r fixed at 1 the
    rule is exactly AdamW.
    You, Li, Reddi, Hseu, Kumar, Bhojanapalli, Song, Demmel, Keutzer & Hsieh (2020), "Large Batch
    Optimization for Deep Learning: Training BERT in 76 minutes", Algorithm 2; ALBERT (Lan et al.,
    2020) uses it with lr = 0.00176, λ = 0.01, ε = 1e-6.

    Which variant: this one applies Adam's bias correction, as the paper's Algorithm 2 does, so
    that Adam, AdamW and LAMB here share one direction and differ only by the decay and the trust
    ratio. ALBERT's reference code (lamb_optimizer.py) omits the correction, like BERT's optimizer
    it descends from. Because r·u does not depend on the scale of u, the correction only shifts the
    balance between the Adam term and λ p: without it the Adam term is (1 − β₁ᵗ)/√(1 − β₂ᵗ) times
    larger (up to about 6.5 near t = 12 with the default betas, back to 1 after a few thousand
    steps), so weight decay is relatively weaker during warm-up. Two further choices follow
    ALBERT's code: the paper's scaling function φ(‖p‖) is the identity, and λ p is added to the
    update, not to the gradient (decoupled, as in AdamW). ALBERT's code also sets r = 1 for biases
    and LayerNorm; here every tensor gets its trust ratio.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def _check_hyperparameters(self, group):
        super()._check_hyperparameters(group)
        check_adam_hyperparameters(group)

    def _update(self, param, grad, state, group):
        xp = backend.xp
        u = adam_direction(grad, state, *group["betas"], group["eps"]) + group["weight_decay"] * param
        param_norm, update_norm = xp.linalg.norm(param), xp.linalg.norm(u)     # 0-d, on the device
        usable = (param_norm > 0) & (update_norm > 0)
        trust_ratio = xp.where(usable, param_norm / xp.where(usable, update_norm, 1), 1)
        return param - group["lr"] * trust_ratio.astype(param.dtype) * u
