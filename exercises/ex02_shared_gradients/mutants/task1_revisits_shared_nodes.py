"""Remembers what it has listed but not what it has visited: a shared node is walked again from
every use, so the output is right but a node used twice at each of 40 levels takes 2^40 steps."""


def topological_order(root, inputs):
    order, listed, stack = [], set(), [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            if id(node) not in listed:
                listed.add(id(node))
                order.append(node)
            continue
        stack.append((node, True))
        if node._ctx is not None:
            stack.extend((p, False) for p in node._ctx.inputs if p.requires_grad)
    on_path, kept = {id(x) for x in inputs}, []
    for node in order:
        if id(node) in on_path or (node._ctx is not None and any(id(p) in on_path for p in node._ctx.inputs)):
            on_path.add(id(node))
            kept.append(node)
    return kept
