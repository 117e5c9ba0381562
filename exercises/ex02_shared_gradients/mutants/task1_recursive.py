"""The textbook recursive depth-first search (visit the inputs, then append the node): right, and
short, but a graph 10,000 ops deep passes Python's recursion limit of 1,000 frames."""


def topological_order(root, inputs):
    order, visited, on_path = [], set(), {id(x) for x in inputs}

    def visit(node):
        visited.add(id(node))
        parents = [p for p in node._ctx.inputs if p.requires_grad] if node._ctx is not None else []
        for p in parents:
            if id(p) not in visited:
                visit(p)
        if id(node) in on_path or any(id(p) in on_path for p in parents):
            on_path.add(id(node))
            order.append(node)
    visit(root)
    return order
