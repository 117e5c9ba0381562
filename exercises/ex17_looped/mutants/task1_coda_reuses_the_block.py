"""The coda numbered from the last recurrent set instead of after it: its first set is the block's
last, so the coda shares parameters with the loop."""


def looped_schedule(n_prelude, n_recurrent, n_coda, iterations):
    if n_recurrent < 1 or iterations < 1 or n_prelude < 0 or n_coda < 0:
        raise ValueError("bad looped stack")
    block = list(range(n_prelude, n_prelude + n_recurrent))
    start = n_prelude + n_recurrent - 1
    return list(range(n_prelude)) + block * iterations + list(range(start, start + n_coda))
