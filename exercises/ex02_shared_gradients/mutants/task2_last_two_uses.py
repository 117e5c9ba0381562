"""The sum rule with a memory of one use: each gradient that arrives at a tensor is added to the
one the previous use sent, not to the running total. Right for a weight used twice (every
shared-weight example of the chapter); one used three times loses a use: [2, 4] instead of
[7, 10] when its uses send [5, 6], [1, 2] and [1, 2]."""


def backward(root, grad, inputs):
    for x in inputs:
        if x._ctx is not None or not x.requires_grad:
            raise ValueError("every one of inputs must be a leaf tensor with requires_grad=True")
    wanted = {id(x) for x in inputs}
    order = topological_order(root, inputs)
    on_path = {id(node) for node in order}
    pending, previous = {id(root): grad}, {}
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
                last = previous.get(id(parent))
                pending[id(parent)] = parent_grad if last is None else last + parent_grad
                previous[id(parent)] = parent_grad
