"""Cache-sized blocks, for the ops whose forward is a long chain of whole-array NumPy steps.

NumPy runs a chain such as GELU's (fifteen ufuncs) one pass over the whole array at a time. At the
course's shape an FFN activation is 2048 x 256 float32, 2 MB, and with its temporaries it does not
fit in a core's L2 cache, so every pass goes out to slower memory. Run on blocks of about 128 kB,
the whole chain stays in the cache: GELU's forward there took half to three quarters of the time. A block's results
depend on that block's rows alone, so they are the same numbers as on the whole array. A GPU has
no such cache and would pay a kernel launch per block and step: on CuPy the array is one block.
"""
from minishare import backend

BLOCK_BYTES = 1 << 17      # of the first input; a block's inputs, results and temporaries fit in L2


def in_blocks(f, *arrays):
    """``f(*arrays)``, a tuple of arrays (or Nones), computed on blocks of rows (the first axis)
    and gathered into new arrays. Every result's row i must depend only on row i of the inputs."""
    rows = arrays[0].shape[0]
    step = max(1, BLOCK_BYTES * rows // max(arrays[0].nbytes, 1))      # rows per block
    if backend.name == "cupy" or rows <= step:
        return f(*arrays)
    results = None
    for start in range(0, rows, step):
        block = f(*(a[start:start + step] for a in arrays))
        if results is None:     # shapes and dtypes from the first block
            results = tuple(None if b is None else backend.xp.empty((rows,) + b.shape[1:], b.dtype)
                            for b in block)
        for result, b in zip(results, block):
            if b is not None:
                result[start:start + step] = b
    return results


def elementwise_in_blocks(f, x):
    """``f(x)`` for an elementwise ``f`` returning a tuple of arrays of x's shape (or Nones), in
    blocks of the flattened ``x``."""
    results = in_blocks(f, x.reshape(-1))
    return tuple(None if r is None else r.reshape(x.shape) for r in results)
