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

A model is converted stack by stack (``minishare.nn.transformer.Stack``): the recursive model
is built for the new plan, as any model is, and each of its sets is filled from the trained
stack's sets at the positions it starts from (``Stack.set_at``: the trained plan says which set
ran there); relaxing re-plans each stack (``Stack.replan``) to one set per position. So the same
code converts ``DecoderLM``, ``AlbertModel`` and ``EncoderDecoderModel``.
"""
import copy
import dataclasses

from minishare.errors import InvalidValue
from minishare.nn import init
from minishare.nn.basis import basis_linears
from minishare.nn.layers import LayerNorm, Linear
from minishare.nn.lora import LoRALinear
from minishare.nn.transformer import Stack
from minishare.sharing import COMPONENTS, Plan

INITS = ("average", "stepwise", "lower")


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
    _check_init(init)
    recursive = _empty_like(model, dataclasses.replace(model.config, num_unique_layers=None, sharing={
        c: list(plan.schedule(c)) for c in COMPONENTS}))
    trained, filled = dict(_stacks(model)), set()
    for name, stack in _stacks(recursive):
        for component, sets in stack.components():
            for j, shared in enumerate(sets):
                _average_into(shared, [trained[name].set_at(component, position)
                                       for position in source_layers(plan, component, j, init)])
                filled.update(id(p) for p in shared.parameters())
    originals = dict(model.named_parameters(remove_duplicate=False))
    for name, p in recursive.named_parameters():
        if id(p) not in filled:                   # embeddings, heads, a Pre-LN stack's final norm
            p.data = originals[name].data.copy()
    return recursive


def to_relaxed(model, plan, rank, init="average", shared=None, unique_norms=False):
    """A Relaxed Recursive Transformer from the trained ``model``: ``to_recursive(model, plan,
    init)`` (or the recursive model ``shared``, trained further, say), then every Linear of every
    position relaxed to a ``LoRALinear`` of rank ``rank`` on its shared set's tensors, initialized
    from the truncated SVD of the trained layer's weight minus the shared one. At rank 0 it
    computes the recursive model; at full rank (min(in, out) of every Linear) and with
    ``unique_norms`` (each position's LayerNorms its own, copied from the trained layer; the paper
    relaxes the linear layers only) it computes ``model`` itself.

    Each stack is re-planned to ``not-shared`` (position ℓ runs set ℓ): set ℓ is the shared set
    of ℓ relaxed towards the trained layer at ℓ, holding the shared tensors; ``stack.shared_plan``
    is the plan it was relaxed from (``plan``, or ``shared``'s)."""
    relaxed = to_recursive(model, plan, init) if shared is None else _copy(shared)
    trained = dict(_stacks(model))
    for name, stack in _stacks(relaxed):
        original, shared_plan = trained[name], stack.plan

        def relaxed_set(component, position):      # not-shared: set ℓ is position ℓ's
            return _relax(stack.set_at(component, position), original.set_at(component, position),
                          rank, unique_norms)
        stack.replan(Plan.build("not-shared", shared_plan.n_layers), relaxed_set)
        stack.shared_plan = shared_plan
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
def _average_into(target, sources):
    """Fill each Parameter of ``target`` with the mean of the same Parameter of ``sources``
    (modules of ``target``'s structure): W' = (W_1 + ... + W_k) / k, one source copied."""
    from_sources = [dict(source.named_parameters()) for source in sources]
    for name, p in target.named_parameters():
        layers = [source[name].data for source in from_sources]
        p.data = sum(layers[1:], layers[0].copy()) / len(layers)


def _relax(module, original, rank, unique_norms):
    """A copy of the shared ``module`` whose Parameters are ``module``'s own, each Linear relaxed
    to a LoRALinear on its tensors whose B A starts from the SVD of the same Linear of ``original``
    (the trained layer of ``module``'s structure) minus the shared weight; each LayerNorm a copy of
    ``original``'s if ``unique_norms``, shared otherwise, like every module without a Linear inside."""
    if isinstance(module, Linear):
        return LoRALinear.relaxing(module, rank).init_from_svd_(original.weight.data)
    if isinstance(module, LayerNorm) and unique_norms:
        norm = LayerNorm(module.normalized_shape, module.eps).to(module.weight.dtype)
        norm.weight.data, norm.bias.data = original.weight.data.copy(), original.bias.data.copy()
        return norm
    if not any(isinstance(m, (Linear, LayerNorm) if unique_norms else Linear) for m in module.modules()):
        return module
    clone = copy.copy(module)                  # same class and attributes, registries of its own
    for name, child in module.named_children():
        setattr(clone, name, _relax(child, getattr(original, name), rank, unique_norms))
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


def _stacks(model):
    """(name, stack) of every Stack in ``model``: the same names in two models of one class."""
    return [(name, m) for name, m in model.named_modules() if isinstance(m, Stack)]


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
    for name, stack in _stacks(model):
        if stack.plan.n_layers != plan.n_layers:
            raise InvalidValue(f"the plan has {plan.n_layers} positions but the stack "
                               f"{name or 'model'} has {stack.plan.n_layers}")
