"""Exercise 12: saving and loading a checkpoint that keeps parameter sharing (course chapter 12;
ALBERT, Lan et al., 2019, Sec. 1: fewer distinct parameters means less to store and to send).

A Module's ``named_parameters(remove_duplicate=False)`` lists a shared tensor under every name it
is reachable by (each layer position that uses it, or the tied decoder); ``named_parameters()``
lists it once, under its first name. A checkpoint should store each distinct tensor once and
remember the other names as *aliases*, and loading must not turn one tensor into copies.

File format for this exercise: one ``.npz`` (``numpy.savez``) holding ``param/<first name>`` for
each distinct tensor and ``__aliases__``, the JSON text of {alias: first name} as a uint8 array.
Write the file atomically (``minishare.files.atomic_write(path, "wb")``).

The library's ``minishare/checkpoint.py`` holds an answer: please do not look at it until you are
done.
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
    """Task 1. Write ``model``'s distinct tensors once each, and its aliases, to ``path``."""
    ### BEGIN SOLUTION task 1
    arrays = {f"param/{name}": p.numpy() for name, p in model.named_parameters()}
    arrays["__aliases__"] = np.frombuffer(json.dumps(aliases(model)).encode(), dtype=np.uint8)
    with atomic_write(path, "wb") as f:
        np.savez(f, **arrays)
    ### END SOLUTION


def load_shared(model, path):
    """Task 2. Fill ``model`` (built with the same structure) from ``path`` in place, keeping every
    Parameter object (so shared tensors stay shared). Raise ValueError naming the problem when the
    file's aliases differ from the model's sharing, or when a tensor is missing, unexpected or of
    another shape. Returns the model."""
    ### BEGIN SOLUTION task 2
    with np.load(path, allow_pickle=False) as npz:
        files = {key: npz[key] for key in npz.files}
    saved = json.loads(files.pop("__aliases__").tobytes().decode())
    if saved != aliases(model):
        raise ValueError(f"{path}: the file's sharing (aliases {saved}) differs from the model's "
                         f"({aliases(model)})")
    own = dict(model.named_parameters())
    stored = {key[len("param/"):]: value for key, value in files.items()}
    if set(stored) != set(own):
        raise ValueError(f"{path}: missing {sorted(set(own) - set(stored))}, "
                         f"unexpected {sorted(set(stored) - set(own))}")
    for name, p in own.items():
        if stored[name].shape != p.shape:
            raise ValueError(f"{path}: {name} has shape {stored[name].shape}, the model {p.shape}")
    for name, p in own.items():
        p.data = stored[name].astype(p.dtype)
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
