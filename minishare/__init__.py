"""minishare: a hand-written autograd and Transformer for learning how parameter sharing makes
Transformers smaller (ALBERT, the Universal Transformer, Takase & Kiyono).

    import minishare
    x = minishare.tensor([[1.0, 2.0]], requires_grad=True)
    (x * x).sum().backward()      # x.grad == 2x
"""
from minishare import backend
from minishare.gradcheck import GradcheckError, gradcheck
from minishare.random import manual_seed
from minishare.tensor import Function, Tensor, as_tensor, is_grad_enabled, no_grad, tensor
from minishare.threads import get_num_threads, set_num_threads
from minishare.analysis.params import count_parameters      # noqa: E402 (needs the engine above)
from minishare.checkpoint import CheckpointError, load, save  # noqa: E402

__all__ = ["backend", "Tensor", "Function", "tensor", "as_tensor", "no_grad", "is_grad_enabled", "gradcheck",
           "GradcheckError", "manual_seed", "count_parameters", "save", "load", "CheckpointError",
           "set_num_threads", "get_num_threads"]
