"""The differentiable ops, one per class: forward and backward side by side (see ``Function`` in
``minishare.tensor``). ``minishare.functional`` offers them under PyTorch's names.

Where the equation written plainly is slow, an op has a fast form beside it, a subclass named
``Fast...`` that ``apply`` picks (``Function.fast``); ``minishare.backend.use_reference_ops(True)``
or ``MINISHARE_OPS=reference`` runs the reference forms instead."""
from minishare.ops.cross_entropy import CrossEntropy, FastCrossEntropy
from minishare.ops.dropout import Dropout
from minishare.ops.elementwise import Add, Div, Mul, Neg, Pow, Sub, Where, unbroadcast
from minishare.ops.embedding import Embedding
from minishare.ops.layer_norm import FastLayerNorm, LayerNorm
from minishare.ops.lora import LoRALinear
from minishare.ops.matmul import Linear, MatMul
from minishare.ops.nonlinear import GELU, Exp, FastGELU, Log, ReLU, Sqrt, Tanh
from minishare.ops.reduce import Max, Sum, mean, var
from minishare.ops.shape import Concatenate, GetItem, Reshape, Stack, Transpose, split
from minishare.ops.softmax import FastSoftmax, LogSoftmax, Softmax
from minishare.ops.tokens import GatherTokens, ScatterAddTokens
