"""Landlock: the kernel locks a worker in, whatever user it runs as.

Linux 5.13 and later let any process give up, for good and for all its children, the right to
touch files outside a list of folders (Landlock; later kernels add TCP ports and signals). The
worker calls ``restrict`` before the submission's code runs: reading only the folders it needs,
writing only its scratch folder, executing no file, no TCP and, from ABI 6, no signal to a
process outside. An audit hook in Python can be argued with; this cannot, not even by root.

Three system calls (``landlock_create_ruleset``, ``landlock_add_rule``, ``landlock_restrict_self``,
numbers 444-446 on every architecture) and ``prctl(PR_SET_NO_NEW_PRIVS)``, through ctypes.
"""
import ctypes
import os

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
PR_SET_NO_NEW_PRIVS = 38
RULE_PATH_BENEATH = 1
# filesystem rights, by bit (include/uapi/linux/landlock.h)
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)   # + TRUNCATE, IOCTL_DEV
ALL_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
TCP_BIND_CONNECT = 0b11                  # ABI 4
SCOPE_UNIX_SIGNAL = 0b11                 # ABI 6: abstract unix sockets, signals
# read-only, for shared libraries loaded late (no teacher's file lives there)
SYSTEM = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/dev/urandom")


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi():
    """The kernel's Landlock ABI version (0: none)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    version = libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # _VERSION flag
    return max(0, version)


def restrict(read, write):
    """Lock this process in: read under ``read``, read and write under ``write``, nothing else.
    Returns whether the kernel applied it (False where Landlock is missing or disabled)."""
    version = abi()
    if version < 1:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    handled = ALL_BY_ABI[min(version, 5)]
    fields = [handled] + ([TCP_BIND_CONNECT] if version >= 4 else []) + ([SCOPE_UNIX_SIGNAL] if version >= 6 else [])
    attr = (ctypes.c_uint64 * len(fields))(*fields)
    ruleset = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        reading = READ_FILE | READ_DIR
        writing = handled & ~EXECUTE & ~(1 << 6) & ~(1 << 11)     # no devices either
        for paths, rights in ((read, reading), (write, writing)):
            for path in paths:
                _allow(libc, ruleset, path, rights)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.syscall(RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset)


def _allow(libc, ruleset, path, rights):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return                                # a folder that is not there needs no right
    try:
        if not os.path.isdir(path):
            rights &= FILE_ONLY
        rule = _PathBeneath(rights, fd)
        libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0))
    finally:
        os.close(fd)
