"""Sums the uses within one backward but then sets ``leaf.grad`` instead of adding to it: a
second backward (the next micro-batch) throws away the first one's gradient."""


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
                node.grad = g.copy()
            continue
        for parent, parent_grad in zip(node._ctx.inputs, node._ctx.backward(g)):
            if parent_grad is not None and id(parent) in on_path:
                total = pending.get(id(parent))
                pending[id(parent)] = parent_grad if total is None else total + parent_grad
