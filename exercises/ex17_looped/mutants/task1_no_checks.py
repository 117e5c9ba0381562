"""No refusal: zero iterations give a stack without its block, and a negative prelude is read as
none."""


def looped_schedule(n_prelude, n_recurrent, n_coda, iterations):
    block = list(range(n_prelude, n_prelude + n_recurrent))
    return list(range(n_prelude)) + block * iterations + list(range(n_prelude + n_recurrent,
                                                                   n_prelude + n_recurrent + n_coda))
