"""Gradient norms by layer position: how strongly the loss pulls on each position's weights.

Definition. Position i of an encoder stack runs one attention set and one FFN set (each with its
LayerNorm), chosen by the sharing plan. Its *use* of those parameters has a gradient of its own:
the gradient the loss would give them if position i had a private copy holding the same values.
A shared set's gradient is the sum of the gradients of its uses (the sum rule of reverse mode),
so these per-use gradients are exactly the terms of that sum. We compute them literally: build
the not-shared twin of the model, load into position i a copy of the sets the plan gives it (same
values, so the same forward pass and loss), run backward once, and read each position's own
gradients. The norm reported for position i is the L2 norm over all of its parameters (attention
and FFN together; ``"attention"`` and ``"ffn"`` give the two apart).

Why look at it. Xiong et al. (2020, "On Layer Normalization in the Transformer Architecture")
show that at initialization a Post-LN Transformer's parameter gradients grow toward the output
layers, while Pre-LN's stay about level, which is why Post-LN needs a learning-rate warm-up and
Pre-LN does not. Takase & Kiyono (2021) argue that Cycle (rev), which gives the lowest and the
highest positions the same set (A B C ... C B A), helps those layers. A plot of the per-position
norms at initialization and after training shows both.
"""
import dataclasses
import math
import re

from minishare.nn import init

_SET = re.compile(r"^(?P<prefix>(?:.*\.)?encoder\.)(?P<component>attention|ffn)_sets\.(?P<index>\d+)\.(?P<rest>.+)$")


def unshared_twin(model):
    """A not-shared copy of ``model`` (an ALBERT with a ``config``) in which position i holds
    copies of the values of the sets the plan gives position i: the same function, with one
    private parameter set per position. Built shape-only and then loaded, so it draws no random
    numbers (the caller's random stream is left as it was)."""
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "plan"):
        raise TypeError(f"unshared_twin needs an ALBERT model with a config, got {type(model).__name__}")
    plan = config.plan()
    with init.shape_only():
        twin = type(model)(dataclasses.replace(config, sharing="not-shared", num_unique_layers=None))
    state = model.state_dict()

    def source(name):
        m = _SET.match(name)
        if m is None:
            return name
        index = plan.index(m["component"], int(m["index"]))
        return f"{m['prefix']}{m['component']}_sets.{index}.{m['rest']}"
    for name, p in twin.named_parameters(remove_duplicate=False):   # keeps the model's dtype
        p.data = state[source(name)].copy()
    return twin.train(model.training)


def position_gradient_norms(model, loss_fn):
    """L2 norm of the gradient of ``loss_fn(model)`` with respect to each layer position's use
    of its parameters (see the module docstring). Returns {"layer": [N floats], "attention":
    [N], "ffn": [N]}, position 0 first (the layer next to the embeddings). ``model`` itself is
    not touched: its gradients stay as they were."""
    twin = unshared_twin(model)
    loss_fn(twin).backward()
    N = model.config.num_hidden_layers
    squares = {"attention": [0.0] * N, "ffn": [0.0] * N}
    for name, p in twin.named_parameters():
        m = _SET.match(name)
        if m is not None and p.grad is not None:
            squares[m["component"]][int(m["index"])] += float((p.grad * p.grad).sum())
    return {"layer": [math.sqrt(a + f) for a, f in zip(squares["attention"], squares["ffn"])],
            "attention": [math.sqrt(a) for a in squares["attention"]],
            "ffn": [math.sqrt(f) for f in squares["ffn"]]}
