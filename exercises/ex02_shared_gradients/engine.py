"""Exercise 2: reverse mode by hand, and why a shared weight gets the sum of its gradients.

A minishare Tensor made by an op remembers the op in ``t._ctx``; the op remembers its inputs in
``t._ctx.inputs`` and maps the gradient of its output to one gradient per input with
``t._ctx.backward(grad)`` (an array, or None for an input without a gradient). A leaf has
``_ctx = None``. Arrays are NumPy arrays (``t.data``). An input that an op computed is recorded
as a graph node without its array (so the array can be freed): it has ``_ctx``,
``requires_grad``, ``shape`` and ``dtype``, which is all the walk needs.

The walk here is the one of PyTorch's ``loss.backward(inputs=[...])``: gradients for the leaves
asked for, and only the ops between them and the loss run. Chapter 1 prints the library's
``Tensor.backward``, which has no ``inputs`` and walks the whole graph; it may not be called here.
"""


def topological_order(root, inputs):
    """Task 1. The tensors on a path from one of ``inputs`` (leaves that require grad) to ``root``:
    every tensor that ``root`` depends on (root included) and that is one of ``inputs`` or depends
    on one of them. Each listed once, after all of its inputs (root last; an empty list when root
    depends on none of them). Only inputs that require grad lead anywhere. Iterative, not
    recursive: a graph 10,000 ops deep must work."""
    ### BEGIN SOLUTION task 1
    order, visited, stack = [], set(), [(root, False)]
    while stack:                                    # every tensor root depends on, inputs first
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
    # a node is on a path when it is an input or one of its inputs is: one pass, inputs first
    on_path = {id(x) for x in inputs}
    kept = []
    for node in order:
        if id(node) in on_path or (node._ctx is not None and any(id(p) in on_path for p in node._ctx.inputs)):
            on_path.add(id(node))
            kept.append(node)
    return kept
    ### END SOLUTION


def backward(root, grad, inputs):
    """Task 2. Add d(Σ grad ⊙ root)/dx into ``x.grad`` (a NumPy array; None means zero so far)
    for every leaf x in ``inputs``, and change no other ``.grad``. ``grad`` has root's shape. A
    tensor used by several ops, a weight shared by two layers above all, must receive the sum of
    what each use sends back; the backward of every op between ``inputs`` and ``root`` runs once,
    and no other op's runs. Raise ValueError if one of ``inputs`` is not a leaf that requires
    grad (its gradient would silently go nowhere)."""
    ### BEGIN SOLUTION task 2
    for x in inputs:
        if x._ctx is not None or not x.requires_grad:
            raise ValueError("backward(): every one of inputs must be a leaf tensor with requires_grad=True")
    wanted = {id(x) for x in inputs}
    order = topological_order(root, inputs)
    on_path = {id(node) for node in order}
    pending = {id(root): grad}                      # the gradient of each tensor, summed so far
    for node in reversed(order):                    # each after every tensor that uses it
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
                pending[id(parent)] = parent_grad if total is None else total + parent_grad   # the sum rule
    ### END SOLUTION


def accumulated_gradients(loss_fn, params, microbatches):
    """Task 3. Gradient accumulation: the mean-loss gradient over all the micro-batches' examples,
    got one micro-batch at a time. ``loss_fn(batch)`` returns a scalar Tensor, the mean loss over
    that batch; batches may differ in size (``len(batch)`` examples). Call backward (yours, with
    ``inputs=params``, or ``Tensor.backward``) once per micro-batch *without* clearing ``.grad`` in
    between (PyTorch's idiom), then return [p.grad for p in params]. Start from p.grad = None."""
    ### BEGIN SOLUTION task 3
    for p in params:
        p.grad = None
    total = sum(len(batch) for batch in microbatches)
    for batch in microbatches:
        (loss_fn(batch) * (len(batch) / total)).backward()   # weights: a batch's share of examples
    return [p.grad for p in params]
    ### END SOLUTION
