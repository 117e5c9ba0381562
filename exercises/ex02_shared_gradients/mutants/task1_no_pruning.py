"""Chapter 1's _topological_order as printed: every tensor root depends on, whether or not it
lies on a path from the inputs (the library's backward has no ``inputs`` to prune by)."""


def topological_order(root, inputs):
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
    return order
