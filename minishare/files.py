"""Writing files atomically, the one way every file of minishare is written (checkpoints,
histories, tokenizers, figures, reports).

The new content goes into a temporary file in the target's folder, is flushed to disk, and only
then renamed over the target: a rename within one file system is atomic, so a reader (or a run
that crashed halfway) sees either the old file or the complete new one, never half a file.

A temporary file is named ``.<target>.<pid>.<random>.tmp``. A writer killed outright (SIGKILL, a
power cut) cannot remove its own; the next write to the same target removes every temporary of
that target whose process is gone, and leaves those of live writers alone.
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
    prefix = f".{os.path.basename(path)}."
    _clear_stale(folder, prefix)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{prefix}{os.getpid()}.", suffix=".tmp")
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


def _clear_stale(folder, prefix):
    """Remove the temporaries ``prefix<pid>.<random>.tmp`` in ``folder`` whose process is gone."""
    for name in os.listdir(folder):
        if name.startswith(prefix) and name.endswith(".tmp"):
            pid = name[len(prefix):].split(".")[0]
            if not (pid.isdigit() and _alive(int(pid))):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(folder, name))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):     # another user's process; a pid beyond the OS's
        return True
    return True
