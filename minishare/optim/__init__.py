"""Optimizers and learning-rate schedules (PyTorch's ``torch.optim`` names).

    from minishare import optim
    optimizer = optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = optim.linear_warmup_decay(optimizer, num_warmup_steps=100, num_training_steps=1000)

Every optimizer updates a shared tensor once per step and keeps one state for it, however many
layers use it (see ``optimizer.py``). ``clip_grad_norm_`` lives in ``minishare.nn.utils``, as in
PyTorch, and is offered here too because it belongs to the same few lines of a training step.
"""
from minishare.nn.utils import clip_grad_norm_
from minishare.optim.adam import Adam, AdamW
from minishare.optim.lamb import LAMB
from minishare.optim.lr_scheduler import LambdaLR, cosine_warmup_decay, linear_warmup_decay
from minishare.optim.optimizer import Optimizer
from minishare.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "LAMB", "LambdaLR", "linear_warmup_decay",
           "cosine_warmup_decay", "clip_grad_norm_"]
