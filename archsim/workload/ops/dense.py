"""Matrix products: :class:`Gemm` (matrix x matrix) and :class:`Gemv` (matrix x vector)."""

from __future__ import annotations

from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_positive
from archsim.workload.ops.elementwise import Reduce

__all__ = ["Gemm", "Gemv"]


@dataclass(frozen=True)
class Gemm(Op):
    """``C[m, n] = op(A)[m, k] @ op(B)[k, n]``, repeated ``batch`` times (a strided batched GEMM).

    Attributes:
        m, n, k: GEMM dimensions (rows of C, columns of C, reduction length).
        dtype: element type of A, B and C (storage).
        compute_dtype: precision of the multiplies (the cuBLAS compute type); ``None``: ``dtype``. fp16
            storage with ``compute_dtype="fp32"`` is DeepBench's "16 bit inputs, 32 bit multiplication"
            (cublasGemmEx with fp32 math): it runs on the units, and at the rate, of fp32.
        accumulate_dtype: precision of the accumulator; ``None``: fp32 for floating inputs, int32 for
            integers (what frameworks use: cuBLAS ``CUBLAS_COMPUTE_32F`` for fp16 in PyTorch). fp16 and
            fp8 math may ask for ``"fp16"`` (``CUBLAS_COMPUTE_16F``): GeForce Tensor Cores run it at
            twice the fp32-accumulate rate (``tensor_core.fp16_accumulate_flop_per_cycle_per_sm``) and
            every Tensor Core at a lower MAC energy (``energy.tensor_flop_fp16_accumulate``); allowed
            values per math precision: :data:`archsim.workload.ops.base.ACCUMULATE_DTYPES`.
        batch: number of independent products.
        trans_a, trans_b: A is stored ``k x m`` / B is stored ``n x k`` (a layout fact: no cost change).
        weight: B is a learnable parameter (a linear layer's ``k x n`` weight, shared across ``batch``).
        bias: a learnable bias of ``n`` elements is added to C (``batch*m*n`` vector adds).

    FLOP: ``2*batch*m*n*k`` matmul (+ ``batch*m*n`` vector adds with a bias).
    Backward (Goodfellow et al., *Deep Learning*, 2016, sec. 6.5): ``dA = dC @ B^T`` (``m x k``, reduction
    over ``n``) and ``dB = A^T @ dC`` (``k x n``, reduction over ``m``), each
    with the forward's MAC count, so the backward pass costs 2x the forward; a bias adds the column
    sum ``db = sum_m dC``.
    """

    kind = "gemm"
    m: int
    n: int
    k: int
    dtype: DType = DType.fp32
    batch: int = 1
    trans_a: bool = False
    trans_b: bool = False
    weight: bool = False
    bias: bool = False
    name: str = ""
    phase: str = "forward"
    compute_dtype: DType | None = None
    accumulate_dtype: str | None = None

    def __post_init__(self) -> None:
        self._common_post_init()
        check_positive(self, "m", "n", "k", "batch")

    def _lead(self) -> tuple[int, ...]:
        return (self.batch,) if self.batch > 1 else ()

    def flop_breakdown(self) -> dict[str, int]:
        bias = self.batch * self.m * self.n if self.bias else 0
        return breakdown(matmul=2 * self.macs(), vector=bias)

    def macs(self) -> int:
        return self.batch * self.m * self.n * self.k

    def a_spec(self) -> TensorSpec:
        shape = (self.k, self.m) if self.trans_a else (self.m, self.k)
        return TensorSpec(self._lead() + shape, self.dtype)

    def b_spec(self) -> TensorSpec:
        shape = (self.n, self.k) if self.trans_b else (self.k, self.n)
        lead = () if self.weight else self._lead()
        return TensorSpec(lead + shape, self.dtype)

    def inputs(self) -> tuple[TensorSpec, ...]:
        ins = (self.a_spec(), self.b_spec())
        if self.bias:
            ins += (TensorSpec((self.n,), self.dtype),)
        return ins

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec(self._lead() + (self.m, self.n), self.dtype),)

    def param_count(self) -> int:
        if self.phase != "forward":
            return 0
        return (self.k * self.n if self.weight else 0) + (self.n if self.bias else 0)

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        # dA[m, k] = dC[m, n] @ B^T: reduction over n. With a shared weight and batch > 1 the
        # weight gradient sums over the batch, which is one GEMM with the batch folded into its
        # reduction dimension: dB[k, n] = A^T[k, batch*m] @ dC[batch*m, n].
        cd, ad = self.compute_dtype, self.accumulate_dtype
        d_a = Gemm(self.m, self.k, self.n, self.dtype, batch=self.batch, trans_b=not self.trans_b,
                   name=self._bwd_name("dX"), phase="backward", compute_dtype=cd, accumulate_dtype=ad)
        if self.weight:
            d_b = Gemm(self.k, self.n, self.batch * self.m, self.dtype, trans_a=True,
                       name=self._bwd_name("dW"), phase="backward", compute_dtype=cd, accumulate_dtype=ad)
        else:
            d_b = Gemm(self.k, self.n, self.m, self.dtype, batch=self.batch, trans_a=True,
                       name=self._bwd_name("dW"), phase="backward", compute_dtype=cd, accumulate_dtype=ad)
        ops: tuple[Op, ...] = (d_a, d_b)
        if self.bias:
            ops += (Reduce((self.batch * self.m, self.n), axes=(0,), dtype=self.dtype,
                           name=self._bwd_name("db"), phase="backward"),)
        return ops


@dataclass(frozen=True)
class Gemv(Op):
    """``y[m] = A[m, k] @ x[k]``, repeated ``batch`` times with independent matrices.

    A product with one shared matrix and several vectors is a :class:`Gemm` with ``n`` = vectors.
    FLOP: ``2*batch*m*k`` multiply-accumulate (class ``matmul``; it is memory-bound on any machine
    since every matrix element is used once). Backward: ``dx = A^T @ dy`` (a GEMV ``k x m``) and
    ``dA = dy x^T`` (a rank-1 update, ``m*k`` MACs, expressed as a Gemm with ``k = 1``).
    """

    kind = "gemv"
    m: int
    k: int
    dtype: DType = DType.fp32
    batch: int = 1
    weight: bool = False
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        check_positive(self, "m", "k", "batch")
        if self.weight and self.batch > 1:
            raise WorkloadError("Gemv.weight: a shared weight with batch > 1 is a Gemm (n = batch)")

    def _lead(self) -> tuple[int, ...]:
        return (self.batch,) if self.batch > 1 else ()

    def macs(self) -> int:
        return self.batch * self.m * self.k

    def flop_breakdown(self) -> dict[str, int]:
        return breakdown(matmul=2 * self.macs())

    def inputs(self) -> tuple[TensorSpec, ...]:
        lead = self._lead()
        return (TensorSpec(lead + (self.m, self.k), self.dtype), TensorSpec(lead + (self.k,), self.dtype))

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec(self._lead() + (self.m,), self.dtype),)

    def param_count(self) -> int:
        return self.m * self.k if (self.weight and self.phase == "forward") else 0

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        return (
            Gemv(self.k, self.m, self.dtype, batch=self.batch, name=self._bwd_name("dX"), phase="backward"),
            Gemm(self.m, self.k, 1, self.dtype, batch=self.batch, name=self._bwd_name("dW"), phase="backward"),
        )
