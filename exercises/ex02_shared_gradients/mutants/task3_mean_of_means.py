"""Averages the micro-batches' mean losses (each scaled by 1 / number of micro-batches): the mean
over examples only when every micro-batch has the same size."""


def accumulated_gradients(loss_fn, params, microbatches):
    for p in params:
        p.grad = None
    for batch in microbatches:
        (loss_fn(batch) * (1.0 / len(microbatches))).backward()
    return [p.grad for p in params]
