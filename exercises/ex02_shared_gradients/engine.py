"""Exercise 2: reverse mode by hand, and why a shared weight gets the sum of its gradients.

A minishare Tensor made by an op remembers the op in ``t._ctx``; the op remembers its inputs in
``t._ctx.inputs`` and maps the gradient of its output to one gradient per input with
``t._ctx.backward(grad)`` (an array, or None for an input without a gradient). A leaf has
``_ctx = None``. Arrays are NumPy arrays (``t.data``). An input that an op computed is recorded
as a graph node without its array (so the array can be freed): it has ``_ctx``,
``requires_grad``, ``shape`` and ``dtype``, which is all the walk needs.

Write the walk that ``Tensor.backward`` does, without calling it. The library's own version is in
``minishare/tensor.py``: please do not look at it until you are done.
"""


def topological_order(root):
    """Task 1. Every tensor ``root`` depends on that has ``requires_grad``, root included, each
    listed once and after all of its inputs. Iterative, not recursive: a graph 10,000 ops deep
    must work."""
    ### BEGIN SOLUTION task 1
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
    ### END SOLUTION


def backward(root, grad):
    """Task 2. Add d(Σ grad ⊙ root)/d(leaf) into ``leaf.grad`` (a NumPy array; None means zero so
    far) for every leaf that requires a gradient. ``grad`` has root's shape. A tensor used by
    several ops, a weight shared by two layers above all, must receive the sum of what each use
    sends back, and each op's backward must run once."""
    ### BEGIN SOLUTION task 2
    pending = {id(root): grad}
    for node in reversed(topological_order(root)):
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
    ### END SOLUTION


def accumulated_gradients(loss_fn, params, microbatches):
    """Task 3. Gradient accumulation: the mean-loss gradient over all the micro-batches' examples,
    got one micro-batch at a time. ``loss_fn(batch)`` returns a scalar Tensor, the mean loss over
    that batch; batches may differ in size (``len(batch)`` examples). Call backward (yours or
    ``Tensor.backward``) once per micro-batch *without* clearing ``.grad`` in between (PyTorch's
    idiom), then return [p.grad for p in params]. Start from p.grad = None."""
    ### BEGIN SOLUTION task 3
    for p in params:
        p.grad = None
    total = sum(len(batch) for batch in microbatches)
    for batch in microbatches:
        (loss_fn(batch) * (len(batch) / total)).backward()   # weights: a batch's share of examples
    return [p.grad for p in params]
    ### END SOLUTION
