"""Assigns the gradient that arrives at a tensor instead of adding it to what earlier uses sent:
the last use wins, so a weight shared by two layers gets only one layer's gradient."""


def backward(root, grad, inputs):
    for x in inputs:
        if x._ctx is not None or not x.requires_grad:
            raise ValueError("every one of inputs must be a leaf tensor with requires_grad=True")
    wanted = {id(x) for x in inputs}
    order = topological_order(root, inputs)
    on_path = {id(node) for node in order}
    pending = {id(root): grad}
    for node in reversed(order):
        g = pending.pop(id(node), None)
        if g is None:
            continue
        if node._ctx is None:
            if id(node) in wanted:
                node.grad = g.copy() if node.grad is None else node.grad + g
            continue
        for parent, parent_grad in zip(node._ctx.inputs, node._ctx.backward(g)):
            if parent_grad is not None and id(parent) in on_path:
                pending[id(parent)] = parent_grad
