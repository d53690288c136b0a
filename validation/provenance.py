"""Where and when measurements were taken: machine, versions, commit, load.

Nothing here is used to predict; it is recorded beside the measurements so a reader can judge them.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "PRESET_BY_DEVICE_NAME",
    "preset_for",
    "common",
    "git_commit",
    "cpu_properties",
    "nvidia_smi",
    "llc_bytes",
]

# Device-name fragment -> archsim preset, most specific first. The report uses the preset recorded in
# provenance.json; this table only fills it in when ``measure`` was not given ``--preset``.
PRESET_BY_DEVICE_NAME: tuple[tuple[str, str], ...] = (
    ("H200", "gpu/h200-sxm-141gb"),
    ("H100 80GB HBM3", "gpu/h100-sxm5-80gb"),
    ("A100-SXM4-80GB", "gpu/a100-sxm4-80gb"),
)


def preset_for(device_name: str) -> str | None:
    for fragment, preset in PRESET_BY_DEVICE_NAME:
        if fragment in device_name:
            return preset
    return None


def git_commit(repo: Path) -> dict[str, Any]:
    """HEAD commit and whether the working tree had changes (None when git or the repo is missing)."""
    if shutil.which("git") is None:
        return {"commit": None, "dirty": None}
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return {"commit": None, "dirty": None}
    return {"commit": head, "dirty": bool(status.strip())}


def common(repo: Path) -> dict[str, Any]:
    """Date (UTC), host, Python/numpy versions, git commit."""
    return {
        "date_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "hostname": platform.node(),
        "python_version": platform.python_version(),
        "numpy_version": np.__version__,
        **git_commit(repo),
    }


def nvidia_smi() -> dict[str, str] | None:
    """Clocks, power limit, driver and persistence mode from ``nvidia-smi`` (None when absent)."""
    if shutil.which("nvidia-smi") is None:
        return None
    fields = [
        "name",
        "driver_version",
        "clocks.sm",
        "clocks.max.sm",
        "clocks.mem",
        "clocks.max.mem",
        "power.limit",
        "persistence_mode",
        "temperature.gpu",
        "compute_mode",
    ]
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=True,
            timeout=20,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    values = [v.strip() for v in out.splitlines()[0].split(",")] if out.strip() else []
    return dict(zip(fields, values, strict=False))


def llc_bytes() -> int:
    """Largest CPU cache reported by sysfs for cpu0 (0 when unknown)."""
    best = 0
    for idx in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (idx / "size").read_text().strip()
        except OSError:
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text[:-1] if text[-1:] in "KMG" else text
        if digits.isdigit():
            best = max(best, int(digits) * mult)
    return best


def cpu_properties() -> dict[str, Any]:
    """CPU model (``/proc/cpuinfo``), logical CPUs, last-level cache, load average, numba version."""
    import numba

    model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "name": model or platform.processor() or "unknown cpu",
        "logical_cpus": os.cpu_count(),
        "llc_bytes": llc_bytes(),
        "loadavg_1_5_15": list(os.getloadavg()),
        "numba_version": numba.__version__,
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
    }
