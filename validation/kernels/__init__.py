"""Validation kernels: ``gpu/`` (numba-CUDA, CuPy/cuBLAS) and ``cpu/`` (numba).

Each kernel module has ``cases(sizes) -> list[KernelCase]``.
"""
