"""archsim: time and energy of neural-network workloads on CPUs, GPUs, DRAM and PIM.

The public namespace is small; see ``__all__``. Nothing is computed at import.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
