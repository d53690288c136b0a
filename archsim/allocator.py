"""The C allocator's settings for long numeric runs: keep freed memory for reuse (glibc ``mallopt``).

By default glibc serves blocks above a dynamic threshold (128 KiB to 32 MiB) with ``mmap`` and gives
freed heap above a trim threshold back to the OS. A stacked cost pass allocates and frees hundreds
of (ops x points) temporaries of ~0.1-11 MB, so from ~1,000 points on a pass may page-fault its
memory in again each time: 2,000-4,300 minor faults per 1,024-point ResNet-50 ``estimate_many`` or
serial sweep, and how many depends on what the process allocated before (which sets glibc's dynamic
thresholds). :func:`keep_freed_memory` raises both thresholds; the results do not change.

The setting is process-wide, so archsim applies it only in processes it owns: its sweep worker
processes and the ``archsim sweep`` command. A script that runs long sweeps or ``estimate_many``
calls in its own process may call it (README "Speed" gives the figures with and without).
"""

from __future__ import annotations

import sys

__all__ = ["keep_freed_memory"]

# glibc ``mallopt`` parameters (malloc.h). Both settings are needed: with only the trim threshold
# raised, glibc's dynamic mmap threshold is switched off and stays at 128 KiB, so blocks above it
# are mapped and unmapped on every allocation.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
TRIM_THRESHOLD_BYTES = 1 << 30  # keep up to 1 GiB of freed heap for reuse
MMAP_THRESHOLD_BYTES = 32 << 20  # the top of glibc's own dynamic range (64-bit): larger blocks still mapped


def keep_freed_memory() -> bool:
    """Make glibc keep freed memory for reuse in this process instead of returning it to the OS.

    Process-wide and permanent for the process. Same results, fewer page faults: a 1,024-point
    serial H100 sweep or a 1,000-point ``estimate_many`` no longer varies with the allocator's
    state (README "Speed"). Resident memory can stay up to ``TRIM_THRESHOLD_BYTES`` (1 GiB) above the
    live data. Returns whether the settings took effect; a no-op (``False``) on a C library without
    ``mallopt`` (musl, macOS, Windows).
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1
    return mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1 and ok
