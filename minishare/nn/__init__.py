"""Neural-network building blocks (PyTorch's ``torch.nn`` names). ``minishare.nn.looped.LoopedStack``
is imported from its module: it builds on ``minishare.sharing``, which ``import minishare`` leaves
unloaded so that the grader sees a submission import it (``minishare.grader.worker``)."""
from minishare.nn import init, utils
from minishare.nn.container import ModuleList, Sequential
from minishare.nn.layers import Dropout, Embedding, LayerNorm, Linear
from minishare.nn.lora import LoRALinear
from minishare.nn.basis import BasisLinear
from minishare.nn.module import Module, Parameter
from minishare.nn.act import AdaptiveComputationTime
from minishare.nn.attention import MultiHeadAttention, causal_mask, padding_mask
from minishare.nn.transformer import FFN, Residual, Stack, decoder, encoder
from minishare.nn.mor import MixtureOfRecursions
