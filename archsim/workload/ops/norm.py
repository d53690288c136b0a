"""Normalisation layers: :class:`LayerNorm` (and RMSNorm) and :class:`BatchNorm` (2-D, NCHW)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_choice, check_positive, shape_tuple

__all__ = ["LayerNorm", "BatchNorm"]


@dataclass(frozen=True)
class LayerNorm(Op):
    """Layer normalisation (Ba et al. 2016) over the last ``norm_size`` elements of each row, or RMSNorm.

    Attributes:
        shape: tensor shape; rows = ``numel / norm_size``.
        norm_size: elements normalised together (default ``shape[-1]``).
        affine: learnable scale gamma (and, for LayerNorm, shift beta) of ``norm_size`` elements.
        rms: RMSNorm (Zhang & Sennrich 2019): no mean subtraction and no beta.

    Forward FLOP per row of ``D``: mean ``D`` (``D-1`` adds + 1 multiply), centre ``D``, variance
    ``2D`` (squares, adds, 1 multiply), ``+eps`` 1, ``rsqrt`` 1 special, normalise ``D``, affine ``2D``:
    vector ``7D + 1`` (``5D + 1`` without affine). RMSNorm: mean square ``2D``, ``+eps`` 1, rsqrt,
    normalise ``D``, scale ``D``: ``4D + 1`` (``3D + 1``). Saved statistics (2 floats per row) are not
    counted as outputs.

    ``pass_="backward"`` (reads x, dy, gamma; writes dx, dgamma, dbeta), per element: recompute x-hat 2,
    ``g*dy`` 1, two row sums 3, ``dx = rstd*(g*dy - m1 - xhat*m2)`` 4, dgamma 2, dbeta 1 = 13 vector, plus
    2 per row (the two means); without affine 9. RMSNorm: 9 per element + 1 per row (6 without affine).
    """

    kind = "layernorm"
    shape: tuple[int, ...]
    dtype: DType = DType.fp32
    norm_size: int | None = None
    affine: bool = True
    rms: bool = False
    pass_: str = "forward"
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        object.__setattr__(self, "shape", shape_tuple(self.shape, "LayerNorm.shape"))
        if self.norm_size is None:
            object.__setattr__(self, "norm_size", self.shape[-1])
        check_positive(self, "norm_size")
        if math.prod(self.shape) % self.norm_size:
            raise WorkloadError(f"LayerNorm.norm_size: {self.norm_size} does not divide the shape {self.shape}")
        check_choice(self, "pass_", ("forward", "backward"))

    @property
    def rows(self) -> int:
        return math.prod(self.shape) // self.norm_size

    def _n_params(self) -> int:
        return 0 if not self.affine else self.norm_size * (1 if self.rms else 2)

    def flop_breakdown(self) -> dict[str, int]:
        d, rows = self.norm_size, self.rows
        if self.pass_ == "forward":
            if self.rms:
                per_row = 4 * d + 1 if self.affine else 3 * d + 1
            else:
                per_row = 7 * d + 1 if self.affine else 5 * d + 1
            return breakdown(vector=rows * per_row, special=rows)
        if self.rms:
            per_elem, per_row = (9 if self.affine else 6), 1
        else:
            per_elem, per_row = (13 if self.affine else 9), 2
        return breakdown(vector=rows * (d * per_elem + per_row))

    def inputs(self) -> tuple[TensorSpec, ...]:
        x = TensorSpec(self.shape, self.dtype)
        params = (TensorSpec((self._n_params(),), self.dtype),) if self.affine else ()
        return (x,) + params if self.pass_ == "forward" else (x, x) + params

    def outputs(self) -> tuple[TensorSpec, ...]:
        y = TensorSpec(self.shape, self.dtype)
        if self.pass_ == "forward" or not self.affine:
            return (y,)
        return (y, TensorSpec((self._n_params(),), self.dtype))

    def param_count(self) -> int:
        return self._n_params() if (self.phase == "forward" and self.pass_ == "forward") else 0

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        if self.pass_ != "forward":
            raise WorkloadError("LayerNorm: only the forward pass has a backward pass")
        return (LayerNorm(self.shape, self.dtype, self.norm_size, self.affine, self.rms, pass_="backward",
                          name=self._bwd_name("dX"), phase="backward"),)


@dataclass(frozen=True)
class BatchNorm(Op):
    """2-D batch normalisation (Ioffe & Szegedy 2015), NCHW, with learnable gamma and beta (``2*C`` params).

    ``batch_stats=False`` (inference): running statistics folded per channel into ``y = a*x + b``:
    2 vector per element, plus per channel ``a = gamma*rsqrt(var+eps)`` (1 add, 1 special, 1 multiply)
    and ``b = beta - mean*a`` (2): 4 vector + 1 special. Reads x and 4 vectors of C.
    ``batch_stats=True`` (training): mean (1 per element), variance (3: subtract, square, add),
    normalise and affine (2) = 6 vector per element, plus per channel 2 divides-by-count + the 4 + 1 above.
    Running-statistics buffers are not parameters (as in PyTorch's ``parameters()``).

    ``pass_="backward"`` (reads x, dy, gamma; writes dx, dgamma, dbeta): per element recompute x-hat 2,
    dbeta 1, dgamma 2, ``dx = g*rstd*(dy - dbeta/M - xhat*dgamma/M)`` 4 = 9 vector.
    """

    kind = "batchnorm"
    batch: int
    channels: int
    height: int = 1
    width: int = 1
    dtype: DType = DType.fp32
    batch_stats: bool = False
    pass_: str = "forward"
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        check_positive(self, "batch", "channels", "height", "width")
        check_choice(self, "pass_", ("forward", "backward"))

    @property
    def numel(self) -> int:
        return self.batch * self.channels * self.height * self.width

    @property
    def rows(self) -> int | None:
        """Independent reductions of a two-pass kernel: one per channel (over ``batch x height x width``)
        when the op needs batch statistics (training forward, and the backward's dgamma/dbeta sums that
        ``dx`` depends on), ``None`` at inference (``y = a*x + b`` in one pass).

        Batch statistics are known only after the whole channel has been read, so the kernels read the
        input twice: PyTorch's native CUDA batch norm runs ``batch_norm_collect_statistics`` then
        ``batch_norm_elemt`` (forward) and ``batch_norm_backward_reduce`` then ``batch_norm_backward_elemt``
        (backward), aten/src/ATen/native/cuda/Normalization.cuh; cuDNN's ForwardTraining/Backward do the
        same reduction first. The cost model re-reads the input from L2 or DRAM when a channel does not fit
        on chip (``archsim.cost.gpu.rowwise_traffic``).
        """
        return self.channels if (self.batch_stats or self.pass_ == "backward") else None

    def flop_breakdown(self) -> dict[str, int]:
        n, c = self.numel, self.channels
        if self.pass_ == "backward":
            return breakdown(vector=9 * n)
        if self.batch_stats:
            return breakdown(vector=6 * n + 6 * c, special=c)
        return breakdown(vector=2 * n + 4 * c, special=c)

    def inputs(self) -> tuple[TensorSpec, ...]:
        x = TensorSpec((self.batch, self.channels, self.height, self.width), self.dtype)
        vec = TensorSpec((self.channels,), self.dtype)
        if self.pass_ == "backward":
            return (x, x, vec)
        return (x,) + (vec,) * (2 if self.batch_stats else 4)

    def outputs(self) -> tuple[TensorSpec, ...]:
        x = TensorSpec((self.batch, self.channels, self.height, self.width), self.dtype)
        if self.pass_ == "backward":
            return (x, TensorSpec((2 * self.channels,), self.dtype))
        return (x,)

    def param_count(self) -> int:
        return 2 * self.channels if (self.phase == "forward" and self.pass_ == "forward") else 0

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        if self.pass_ != "forward":
            raise WorkloadError("BatchNorm: only the forward pass has a backward pass")
        return (BatchNorm(self.batch, self.channels, self.height, self.width, self.dtype, batch_stats=True,
                          pass_="backward", name=self._bwd_name("dX"), phase="backward"),)
