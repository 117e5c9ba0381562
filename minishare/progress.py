"""A progress bar for long loops (training steps, BPE merges), when tqdm is installed and wanted.

``import minishare`` needs NumPy alone, so tqdm is optional: without it, or with
``enabled=False``, there is no bar and the caller skips its updates.
"""
import sys


def bar(total, enabled, **options):
    """A tqdm bar over ``total`` items (``options`` go to tqdm: ``unit``, ``desc``), or None."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, leave=False, file=sys.stderr, **options)
