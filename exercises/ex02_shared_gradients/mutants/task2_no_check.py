"""Accepts any tensor in ``inputs``: an intermediate result is recorded in the graph as a node
without its array, so it never matches and its gradient silently goes nowhere."""


def backward(root, grad, inputs):
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
                total = pending.get(id(parent))
                pending[id(parent)] = parent_grad if total is None else total + parent_grad
