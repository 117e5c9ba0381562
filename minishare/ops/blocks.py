"""Cache-sized blocks, for the ops whose forward is a long chain of whole-array NumPy steps.

NumPy runs a chain such as GELU's (fifteen ufuncs) one pass over the whole array at a time. When
the array and its temporaries are much larger than a core's cache, every pass goes out to slower
memory; run on blocks of about 1 MB, the chain stays in the cache. Measured on this repository's
machine (2 AMD EPYC cores, 2026-12-06), the tanh GELU's forward over ALBERT-base's FFN activation
(1024 x 3072 float32, 12.6 MB) took 15.5 ms whole, 7.2 ms in blocks of 1 MB and 10.9 ms in blocks
of 128 kB (a block's Python calls then cost more than the cache saves); over the course's (2048 x
256, 2 MB) the whole array was fastest, 1.1 ms against 1.7 ms in 128 kB blocks, since the freed
temporaries are reused at once (``backend.keep_freed_memory``). So an array of up to four blocks
runs whole. An elementwise result depends on its own element alone, so the blocks give the same
numbers as the whole array. A GPU has no such cache and would pay a kernel launch per block and
step: on CuPy the array is one block. Not every chain gains: where each step is short and cheap
(LayerNorm over 64 features, cross-entropy's four passes) the calls per block cost more than the
cache saves.
"""
import os
from concurrent.futures import ThreadPoolExecutor

from minishare import backend
from minishare.threads import elementwise_threads

BLOCK_BYTES = 1 << 20      # of the input: a block's inputs, results and temporaries stay in cache
WHOLE_BLOCKS = 4           # an array of up to this many blocks runs in one pass (see above)
_pool = None               # (pid, workers, executor): threads do not survive a fork


def elementwise_in_blocks(f, x):
    """``f(x)`` for an elementwise ``f`` that returns a tuple of arrays of x's shape (or Nones),
    computed on blocks of the flattened ``x`` and gathered into new arrays. With more than one
    thread (``threads.set_num_threads``) the blocks are dealt out in runs, one run a thread: NumPy
    lets go of the interpreter lock inside a ufunc, and each block writes only its own slice of
    the results, so the numbers are the same with any number of threads."""
    flat = x.reshape(-1)
    step = max(1, BLOCK_BYTES // x.itemsize)                        # elements per block
    if backend.name == "cupy" or flat.size <= WHOLE_BLOCKS * step:
        return f(x)
    first = f(flat[:step])      # the results' dtypes come from the first block
    results = tuple(None if b is None else backend.xp.empty(flat.shape, b.dtype) for b in first)

    def put(start, block):
        for result, b in zip(results, block):
            if b is not None:
                result[start:start + step] = b

    def run(starts):
        for start in starts:
            put(start, f(flat[start:start + step]))

    put(0, first)
    starts = range(step, flat.size, step)
    workers = min(elementwise_threads(), len(starts))
    if workers > 1:
        runs = [starts[i::workers] for i in range(workers)]
        errors = backend.xp.geterr()       # the caller's floating-point error state, in every thread

        def run_as_caller(starts):
            with backend.xp.errstate(**errors):
                run(starts)
        list(_executor(workers).map(run_as_caller, runs))
    else:
        run(starts)
    return tuple(None if r is None else r.reshape(x.shape) for r in results)


def _executor(workers):
    global _pool
    if _pool is None or _pool[:2] != (os.getpid(), workers):
        _pool = (os.getpid(), workers, ThreadPoolExecutor(workers, thread_name_prefix="minishare-blocks"))
    return _pool[2]
