"""numba CPU validation kernels: the loop nests that ``archsim.microarch.traces`` describes.

Each public module has ``cases(sizes) -> list[KernelCase]``; ``describe()`` returns a
:class:`archsim.microarch.traces.KernelTrace` that the interval core model predicts from.
"""
