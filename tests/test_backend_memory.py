"""``backend.keep_freed_memory``: once a training run has called it, an array freed and allocated
again reuses its pages instead of faulting in fresh zeroed ones from the kernel (a training step
does this with every activation and gradient), also when another thread freed it; ``import
minishare`` alone changes nothing."""
import platform
import resource
import subprocess
import sys
import os

import pytest

glibc = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


def _printed_by(setup, body):
    """The last line a fresh Python process prints, which imports numpy and minishare, runs
    ``setup``, defines ``step()`` (eight 4 MB arrays allocated together and freed, as a step's
    activations are) and runs ``body``."""
    code = (f"import ctypes, resource, threading, numpy, minishare\n{setup}\n"
            "def step():\n"
            "    arrays = [numpy.ones(1 << 20, dtype=numpy.float32) for _ in range(8)]\n"
            f"{body}")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return done.stdout.strip().splitlines()[-1]


def _faults_of_reallocating(keep):
    """Minor page faults of ``step()`` 10 times over, with or without minishare's setting."""
    return int(_printed_by("minishare.backend.keep_freed_memory()" if keep else "",
                           "step()\n"
                           "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
                           "for _ in range(10):\n"
                           "    step()\n"
                           "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n"))


@pytest.mark.skipif(not glibc, reason="mallopt is glibc's")
def test_once_asked_a_freed_array_is_reused_without_page_faults():
    from minishare import backend
    assert backend.keep_freed_memory() is True
    pages = 10 * 8 * (4 << 20) // resource.getpagesize()            # touched in the 10 steps
    assert _faults_of_reallocating(keep=False) > pages // 4          # glibc's default: many anew
    assert _faults_of_reallocating(keep=True) < pages // 80          # less than one array's worth


def _peak_of_a_thread_then_the_main_thread(arenas=None):
    """MB by which the resident peak rises when a worker thread runs ``step()`` and then the main
    thread does (as the elementwise blocks on a second thread and the step around them do), after
    ``keep_freed_memory``; ``arenas``: glibc's per-thread heaps set back to this many afterwards."""
    reset = "" if arenas is None else f"ctypes.CDLL('libc.so.6').mallopt(-8, {arenas})  # M_ARENA_MAX"
    return float(_printed_by(
        f"minishare.backend.keep_freed_memory()\n{reset}",
        "def kb(field):\n"
        "    return int(next(l for l in open('/proc/self/status') if l.startswith(field)).split()[1])\n"
        "open('/proc/self/clear_refs', 'w').write('5')   # the peak so far := what is resident\n"
        "start = kb('VmRSS')\n"
        "worker = threading.Thread(target=step)\n"
        "worker.start(); worker.join()\n"
        "step()\n"
        "print((kb('VmHWM') - start) / 1024)\n"))


@pytest.mark.skipif(not glibc, reason="mallopt is glibc's")
def test_memory_one_thread_freed_is_reused_by_another():
    arrays = 8 * 4                                                    # MB alive at once
    assert _peak_of_a_thread_then_the_main_thread() < 1.5 * arrays    # one set of pages, reused
    assert _peak_of_a_thread_then_the_main_thread(arenas=8) > 1.8 * arrays   # a heap per thread: two


@pytest.mark.skipif(glibc, reason="off glibc the setting does nothing")
def test_elsewhere_it_does_nothing_and_says_so():
    from minishare import backend
    assert backend.keep_freed_memory() is False
