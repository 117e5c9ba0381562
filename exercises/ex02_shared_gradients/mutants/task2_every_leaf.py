"""Chapter 1's Tensor.backward rewritten by hand, as printed: it accumulates into every leaf that
requires grad, not only into the inputs asked for (and runs every op to get there)."""


def backward(root, grad, inputs):
    for x in inputs:
        if x._ctx is not None or not x.requires_grad:
            raise ValueError("every one of inputs must be a leaf tensor with requires_grad=True")
    order, visited, stack = [], set(), [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        if node._ctx is not None:
            stack.extend((p, False) for p in node._ctx.inputs if p.requires_grad and id(p) not in visited)
    pending = {id(root): grad}
    for node in reversed(order):
        g = pending.pop(id(node), None)
        if g is None:
            continue
        if node._ctx is None:
            node.grad = g.copy() if node.grad is None else node.grad + g
            continue
        for parent, parent_grad in zip(node._ctx.inputs, node._ctx.backward(g)):
            if parent_grad is not None and parent.requires_grad:
                total = pending.get(id(parent))
                pending[id(parent)] = parent_grad if total is None else total + parent_grad
