"""Writing files atomically, the one way every file of minishare is written (checkpoints,
histories, tokenizers, figures, reports).

The new content goes into a temporary file in the target's folder, is flushed to disk, and only
then renamed over the target: a rename within one file system is atomic, so a reader (or a run
that crashed halfway) sees either the old file or the complete new one, never half a file.
"""
import contextlib
import os
import tempfile


@contextlib.contextmanager
def atomic_write(path, mode="w", **open_options):
    """``with atomic_write(path, "wb") as f: ...`` writes ``path`` atomically; if the block
    raises, the temporary file is removed and ``path`` keeps its old content."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **open_options) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)          # mkstemp makes files private (0600); these are ordinary outputs
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise
