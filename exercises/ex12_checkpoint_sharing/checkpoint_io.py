"""Exercise 12: saving and loading a checkpoint that keeps parameter sharing (course chapter 12;
ALBERT, Lan et al., 2019, Sec. 1: fewer distinct parameters means less to store and to send).

A Module's ``named_parameters(remove_duplicate=False)`` lists a shared tensor under every name it
is reachable by (each layer position that uses it, or the tied decoder); ``named_parameters()``
lists it once, under its first name. A checkpoint should store each distinct tensor once and
remember the other names as *aliases*, and loading must not turn one tensor into copies.

File format for this exercise (not the library's): one ``.npz`` (``numpy.savez``) holding
``tensor/<k>`` for the k-th distinct tensor, k = 0, 1, ... in the order of ``named_parameters()``,
and ``__names__``: the JSON text of {name: k} for *every* name of
``named_parameters(remove_duplicate=False)``, as a uint8 array. A shared tensor is stored once, and
all its names map to its one k (as a PyTorch file maps tensors to shared storages). Write the file
atomically (``minishare.files.atomic_write(path, "wb")``): a save that fails halfway must leave
the file that was there before intact, and no other file behind.

The library's ``minishare/checkpoint.py`` (in its own format) and ``Module.shared_names`` hold
answers: please do not look at them until you are done; the grader does not let a submission use
them, nor ``Module.load_state_dict``.
"""
import json

import numpy as np

from minishare.files import atomic_write


def aliases(model):
    """Task 1. {name: first name of the same tensor} for every name of a shared tensor except its
    first (an unshared model gives {})."""
    ### BEGIN SOLUTION task 1
    first, result = {}, {}
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in first:
            result[name] = first[id(p)]
        else:
            first[id(p)] = name
    return result
    ### END SOLUTION


def save_shared(model, path):
    """Task 1. Write ``model``'s distinct tensors once each, and the map of every name to its
    tensor, to ``path`` in the format above, atomically."""
    ### BEGIN SOLUTION task 1
    index, arrays, names = {}, {}, {}                 # index: id(tensor) -> k
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) not in index:
            index[id(p)] = len(index)
            arrays[f"tensor/{index[id(p)]}"] = p.numpy()
        names[name] = index[id(p)]
    arrays["__names__"] = np.frombuffer(json.dumps(names).encode(), dtype=np.uint8)
    with atomic_write(path, "wb") as f:               # a temporary file, renamed when complete
        np.savez(f, **arrays)
    ### END SOLUTION


def load_shared(model, path):
    """Task 2. Fill ``model`` (built with the same structure) from ``path`` in place, keeping every
    Parameter object (so shared tensors stay shared) and its dtype. Raise ValueError naming the
    problem when the file's sharing differs from the model's (names that map to one k in the file
    but are different tensors in the model, or the other way round), or when a name or a tensor
    is missing or unexpected, or a tensor has another shape; check everything before changing
    the model. Returns the model."""
    ### BEGIN SOLUTION task 2
    with np.load(path, allow_pickle=False) as npz:
        files = {key: npz[key] for key in npz.files}
    names = json.loads(files.pop("__names__").tobytes().decode())          # {name: k}
    own = dict(model.named_parameters(remove_duplicate=False))
    if set(names) != set(own):
        raise ValueError(f"{path}: names missing from the file {sorted(set(own) - set(names))}, "
                         f"unexpected {sorted(set(names) - set(own))}")
    k_of = {}                                                             # id(tensor) -> k
    for name, p in own.items():
        if k_of.setdefault(id(p), names[name]) != names[name]:
            raise ValueError(f"{path}: {name} is one tensor with another name in the model, "
                             "a different tensor in the file: the sharing differs")
    if len(set(k_of.values())) != len(k_of):
        raise ValueError(f"{path}: the file stores as one tensor what the model holds as several: "
                         "the sharing differs")
    if set(files) != {f"tensor/{k}" for k in k_of.values()}:
        raise ValueError(f"{path}: tensors {sorted(files)}, expected one per distinct tensor")
    params = {names[name]: p for name, p in own.items()}                   # k -> its Parameter
    for k, p in params.items():
        if files[f"tensor/{k}"].shape != p.shape:
            raise ValueError(f"{path}: tensor {k} has shape {files[f'tensor/{k}'].shape}, the model {p.shape}")
    for k, p in params.items():
        p.data = files[f"tensor/{k}"].astype(p.dtype)                     # the same Parameter object
    return model
    ### END SOLUTION


def retie(model, alias_map):
    """Task 3. A model whose tensors were loaded as copies (each name its own tensor): make every
    alias name in ``alias_map`` ({alias: first name}) refer to the Parameter at its first name,
    by setting the attribute at the alias's dotted path. Returns the number of parameters (numbers,
    not tensors) the model no longer stores."""
    ### BEGIN SOLUTION task 3
    before = sum(p.size for p in model.parameters())
    by_name = dict(model.named_parameters(remove_duplicate=False))
    for alias, first in alias_map.items():
        *path, attribute = alias.split(".")
        owner = model
        for part in path:
            owner = owner._modules[part]
        setattr(owner, attribute, by_name[first])
    return before - sum(p.size for p in model.parameters())
    ### END SOLUTION
