"""The recurrent sets written once, as a not-shared stack: the depth does not grow with r."""


def looped_schedule(n_prelude, n_recurrent, n_coda, iterations):
    if n_recurrent < 1 or iterations < 1 or n_prelude < 0 or n_coda < 0:
        raise ValueError("bad looped stack")
    return list(range(n_prelude + n_recurrent + n_coda))
