"""Cache-sized blocks, for the ops whose forward is a long chain of whole-array NumPy steps.

NumPy runs a chain such as GELU's (fifteen ufuncs) one pass over the whole array at a time. At the
course's shape an FFN activation is 2048 x 256 float32, 2 MB, and with its temporaries it does not
fit in a core's L2 cache, so every pass goes out to slower memory. Run on blocks of about 128 kB,
the whole chain stays in the cache: GELU's forward there took half to three quarters of the time.
An elementwise result depends on its own element alone, so the blocks give the same numbers as
the whole array. A GPU has no such cache and would pay a kernel launch per block and step: on CuPy
the array is one block. Not every chain gains: where each step is short and cheap (LayerNorm over
64 features, cross-entropy's four passes) the calls per block cost more than the cache saves.
"""
from minishare import backend

BLOCK_BYTES = 1 << 17      # of the input; a block's inputs, results and temporaries fit in L2


def elementwise_in_blocks(f, x):
    """``f(x)`` for an elementwise ``f`` that returns a tuple of arrays of x's shape (or Nones),
    computed on blocks of the flattened ``x`` and gathered into new arrays."""
    flat = x.reshape(-1)
    step = max(1, BLOCK_BYTES // x.itemsize)                        # elements per block
    if backend.name == "cupy" or flat.size <= step:
        return f(x)
    results = None
    for start in range(0, flat.size, step):
        block = f(flat[start:start + step])
        if results is None:     # dtypes from the first block
            results = tuple(None if b is None else backend.xp.empty(flat.shape, b.dtype) for b in block)
        for result, b in zip(results, block):
            if b is not None:
                result[start:start + step] = b
    return tuple(None if r is None else r.reshape(x.shape) for r in results)
