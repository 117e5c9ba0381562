"""Convert, don't retrain: a trained model turned into a Recursive Transformer (its layers tied
into a few shared sets), relaxed by a low-rank correction per position, or written over shared
bases (Basis Sharing).

Bae et al. (2024, arXiv 2410.20672, "Relaxed Recursive Transformers") start from a trained model
of N layers and tie them by a plan (``minishare.sharing``: Cycle repeats a block of M layers, the
paper's main choice; Sequence repeats each layer in a row). Each shared set starts from the
trained layers, one of the paper's three looping initializations (``INITS``):

    average    W'_j = mean of W_ℓ over the positions ℓ that set j serves
    stepwise   W'_j = W_{j·N/M}, every (N/M)-th layer, so the sets keep layers from the whole depth
    lower      W'_j = W_j, the first M layers

``to_relaxed`` then gives each position a LoRA correction ``W'_set(ℓ) + B_ℓ A_ℓ`` initialized
from the truncated SVD of W_ℓ - W'_set(ℓ) (``minishare.nn.lora``). Every conversion returns a new
model and leaves the trained one as it was; uptraining the result is ordinary training.
Parameters are the model's own: counted with ``count_parameters``, a shared set once.

A model is converted by the names of its parameters: a stack's component set k is
``<stack>.<component>_sets.<k>.<rest>`` (``minishare.nn.transformer.Stack``), so the same code
converts ``DecoderLM``, ``AlbertModel`` and ``EncoderDecoderModel``.
"""
import copy
import dataclasses
import re
from collections import OrderedDict

from minishare.errors import InvalidValue
from minishare.nn import init
from minishare.nn.basis import basis_linears
from minishare.nn.container import ModuleList
from minishare.nn.layers import LayerNorm, Linear
from minishare.nn.lora import LoRALinear
from minishare.nn.transformer import Stack
from minishare.sharing import COMPONENTS, Plan

INITS = ("average", "stepwise", "lower")
# "<stack>.<component>_sets.<set>.<rest>": the stack's name (with its dot), component, set, the rest
SET_NAME = re.compile(r"^(?P<stack>(?:.*\.)?)(?P<component>cross_attention|attention|ffn)_sets\."
                      r"(?P<set>\d+)\.(?P<rest>.+)$")


def source_layers(plan, component, set_index, init="average"):
    """The positions of the trained model whose weights initialize set ``set_index`` of
    ``component`` under ``plan`` (``INITS``): all it serves ("average"), layer j·N/M
    ("stepwise"; N/M rounded down) or layer j ("lower")."""
    _check_init(init)
    if init == "average":
        return plan.positions_of(component, set_index)
    if init == "stepwise":
        return [set_index * plan.n_layers // plan.n_sets(component)]
    return [set_index]


def to_recursive(model, plan, init="average"):
    """A new model of ``model``'s class whose every stack follows ``plan`` (a ``Plan`` of the
    stack's N positions), each shared set initialized from ``model``'s trained layers by ``init``
    (``source_layers``); embeddings and heads are copied. ``model``'s own stacks may follow any
    plan: position ℓ's trained weights are those of the set its plan gives ℓ."""
    _check_plan(model, plan)
    recursive = _empty_like(model, dataclasses.replace(model.config, num_unique_layers=None, sharing={
        c: list(plan.schedule(c)) for c in COMPONENTS}))
    trained = dict(model.named_parameters(remove_duplicate=False))
    plans = _stack_plans(model)
    for name, p in recursive.named_parameters():
        match = SET_NAME.match(name)
        if match is None:
            p.data = trained[name].data.copy()
            continue
        stack, component, rest = match["stack"], match["component"], match["rest"]
        layers = [trained[_set_name(stack, component, plans[stack].index(component, i), rest)].data
                  for i in source_layers(plan, component, int(match["set"]), init)]
        p.data = sum(layers[1:], layers[0].copy()) / len(layers)       # one layer: a copy of it
    return recursive


def to_relaxed(model, plan, rank, init="average", shared=None, unique_norms=False):
    """A Relaxed Recursive Transformer from the trained ``model``: ``to_recursive(model, plan,
    init)`` (or the recursive model ``shared``, trained further, say), then every Linear of every
    position relaxed to a ``LoRALinear`` of rank ``rank`` on its shared set's tensors, initialized
    from the truncated SVD of the trained layer's weight minus the shared one. At rank 0 it
    computes the recursive model; at full rank (min(in, out) of every Linear) and with
    ``unique_norms`` (each position's LayerNorms its own, copied from the trained layer; the paper
    relaxes the linear layers only) it computes ``model`` itself.

    Each stack's ``plan`` then gives every position its own modules (``not-shared``: position ℓ
    runs module ℓ), which hold the shared tensors; ``stack.shared_plan`` is ``plan``."""
    relaxed = to_recursive(model, plan, init) if shared is None else _copy(shared)
    for stack in (m for m in relaxed.modules() if isinstance(m, Stack)):
        shared_plan = stack.plan
        for component, sets in stack.components():
            setattr(stack, f"{component}_sets", ModuleList(
                _relax(sets[shared_plan.index(component, i)], rank, unique_norms)
                for i in range(shared_plan.n_layers)))
        stack.plan, stack.shared_plan = Plan.build("not-shared", shared_plan.n_layers), shared_plan
    trained, plans = dict(model.named_parameters(remove_duplicate=False)), _stack_plans(model)
    for name, module in relaxed.named_modules():
        if isinstance(module, (LoRALinear, LayerNorm)) and SET_NAME.match(name + ".weight"):
            match = SET_NAME.match(name + ".weight")
            stack, component, rest = match["stack"], match["component"], match["rest"]
            source = _set_name(stack, component, plans[stack].index(component, int(match["set"])), rest)
            if isinstance(module, LoRALinear):
                module.init_from_svd_(trained[source].data)
            elif unique_norms:
                module.weight.data = trained[source].data.copy()
                module.bias.data = trained[source[:-len("weight")] + "bias"].data.copy()
    return relaxed


def to_basis_shared(model, k):
    """A new model in which every Linear of a stack's component sets is a ``BasisLinear``: per
    weight type (the query of every set, the FFN's first layer of every set, ...) one basis of k
    vectors shared by the n sets, or of min(out, n · in) vectors where k is more (the rank of the
    type's stacked weights: there the product is exact), coefficients and bias each set's own
    (``nn.basis``). Training-free: a k at least every type's rank gives back ``model``. (Wang et al. share a basis within
    groups of layers and pick the weight types; this shares one basis per type across all sets.)"""
    shared = _copy(model)
    for stack in (m for m in shared.modules() if isinstance(m, Stack)):
        for component, sets in stack.components():
            paths = [name for name, m in sets[0].named_modules() if isinstance(m, Linear)]
            for path in paths:
                *parents, attr = path.split(".")
                owners = [_walk(s, parents) for s in sets]
                linears = [getattr(o, attr) for o in owners]
                k_type = min(k, linears[0].out_features, len(linears) * linears[0].in_features)
                for owner, new in zip(owners, basis_linears(linears, k_type)):
                    setattr(owner, attr, new)
    return shared


# ---- the pieces -------------------------------------------------------------------------------
def _relax(module, rank, unique_norms):
    """A copy of ``module`` whose Parameters are ``module``'s own, each Linear relaxed to a
    LoRALinear on its tensors; LayerNorms new (filled in later) if ``unique_norms``, shared
    otherwise, like every module without a Linear inside."""
    if isinstance(module, Linear):
        return LoRALinear.relaxing(module, rank)
    if isinstance(module, LayerNorm) and unique_norms:
        return LayerNorm(module.normalized_shape, module.eps).to(module.weight.dtype)
    if not any(isinstance(m, (Linear, LayerNorm) if unique_norms else Linear) for m in module.modules()):
        return module
    clone = copy.copy(module)                                     # same class, same plain attributes
    object.__setattr__(clone, "_parameters", OrderedDict(module._parameters))
    object.__setattr__(clone, "_modules", OrderedDict())
    for name, child in module._modules.items():
        setattr(clone, name, _relax(child, rank, unique_norms))
    return clone


def _empty_like(model, config):
    """A model of ``model``'s class for ``config``, its parameters shapes only until filled."""
    with init.shape_only():
        return type(model)(config)


def _copy(model):
    """A model like ``model`` holding copies of its parameters, in their dtype (ties and sharing
    kept: the clone's own plan ties its tensors, and each is filled once)."""
    clone, source = _empty_like(model, model.config), dict(model.named_parameters(remove_duplicate=False))
    for name, p in clone.named_parameters():
        p.data = source[name].data.copy()
    return clone


def _stack_plans(model):
    """{stack name with its dot: its plan} of every Stack in ``model``."""
    return {(name + "." if name else ""): m.plan for name, m in model.named_modules() if isinstance(m, Stack)}


def _set_name(stack, component, set_index, rest):
    return f"{stack}{component}_sets.{set_index}.{rest}"


def _walk(module, names):
    """The submodule of ``module`` at the attribute names ``names``."""
    for name in names:
        module = getattr(module, name)
    return module


def _check_init(init):
    if not isinstance(init, str) or init not in INITS:
        raise InvalidValue(f"init must be one of {', '.join(INITS)}, got {init!r}")


def _check_plan(model, plan):
    if not isinstance(plan, Plan):
        raise InvalidValue(f"plan must be a minishare.sharing.Plan, got {plan!r}")
    for name, stack_plan in _stack_plans(model).items():
        if stack_plan.n_layers != plan.n_layers:
            raise InvalidValue(f"the plan has {plan.n_layers} positions but the stack "
                               f"{name.rstrip('.') or 'model'} has {stack_plan.n_layers}")
