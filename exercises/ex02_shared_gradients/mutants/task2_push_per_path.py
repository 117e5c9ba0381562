"""Pushes each gradient down to the inputs recursively as soon as it is computed, without waiting
for a tensor's other uses: the sums come out right, but an op runs once per path through it, 2^40
times for a node used twice at each of 40 levels (and a deep chain passes the recursion limit)."""


def backward(root, grad, inputs):
    for x in inputs:
        if x._ctx is not None or not x.requires_grad:
            raise ValueError("every one of inputs must be a leaf tensor with requires_grad=True")
    wanted = {id(x) for x in inputs}

    def push(node, g):
        if node._ctx is None:
            if id(node) in wanted:
                node.grad = g.copy() if node.grad is None else node.grad + g
            return
        for parent, parent_grad in zip(node._ctx.inputs, node._ctx.backward(g)):
            if parent_grad is not None and parent.requires_grad:
                push(parent, parent_grad)
    push(root, grad)
