"""numba-CUDA validation kernels (and cuBLAS through CuPy for the Tensor Core path).

Importing a module here imports ``numba.cuda``; set ``NUMBA_ENABLE_CUDASIM=1`` before that to run the
kernels in numba's CUDA simulator (correctness only, tiny sizes).
"""
