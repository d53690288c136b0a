"""2-D convolution (dense, grouped, depthwise; forward and both backward passes) and pooling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_choice, check_positive, pair
from archsim.workload.ops.dense import Gemm
from archsim.workload.ops.elementwise import Reduce

__all__ = ["Conv2d", "Pool", "conv_out_size", "CONV_PASSES"]

CONV_PASSES = ("forward", "backward_data", "backward_weight")


def conv_out_size(size: int, kernel: int, stride: int, padding: int, dilation: int, field: str) -> int:
    """Output extent ``floor((size + 2p - d(k-1) - 1)/s) + 1`` (PyTorch ``Conv2d`` docs); >= 1 or an error."""
    out = (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    if out < 1:
        raise WorkloadError(f"{field}: kernel {kernel} (dilation {dilation}) does not fit input {size} + 2*{padding}")
    return out


def _set_pairs(op: Any, *fields: str) -> None:
    for f in fields:
        object.__setattr__(op, f, pair(getattr(op, f), f"{type(op).__name__}.{f}"))


@dataclass(frozen=True)
class Conv2d(Op):
    """A 2-D convolution, NCHW; the fields always describe the forward problem.

    Input ``(batch, in_channels, height, width)``, weight ``(out_channels, in_channels/groups, r, s)``,
    output ``(batch, out_channels, out_height, out_width)``. ``groups = in_channels = out_channels``
    is a depthwise convolution.

    ``pass_`` selects which of the three convolutions of training this op is (Chetlur et al.,
    "cuDNN: Efficient Primitives for Deep Learning", 2014): ``"forward"`` (x, w -> y),
    ``"backward_data"`` (dy, w -> dx) or ``"backward_weight"`` (x, dy -> dw). All three perform the
    same multiply-accumulates, ``N*K*P*Q*(C/g)*R*S``, so FLOP = ``2*N*K*P*Q*(C/g)*R*S`` each
    (+ ``N*K*P*Q`` vector adds for a forward bias).

    ``compute_dtype`` is the precision of the multiplies (cuDNN's convolution compute type; ``None``:
    ``dtype``): fp16 tensors with ``compute_dtype="fp32"`` run at the fp32 rate (DeepBench P100's
    "16 bit inputs, 32 bit multiplication"). ``accumulate_dtype`` is the accumulator's precision, as
    in :class:`~archsim.workload.ops.dense.Gemm` (``None``: fp32, int32 for integers; ``"fp16"`` for
    fp16/fp8 math).

    FLOP class: ``"matmul"``, except a depthwise-like convolution whose per-group GEMM is a
    matrix-vector product (``in_channels/groups == 1`` and ``out_channels/groups == 1``): it cannot
    use matrix units and is counted as ``"vector"``.
    """

    kind = "conv2d"
    batch: int
    in_channels: int
    out_channels: int
    height: int
    width: int
    kernel: tuple[int, int] | int = (3, 3)
    stride: tuple[int, int] | int = (1, 1)
    padding: tuple[int, int] | int = (0, 0)
    dilation: tuple[int, int] | int = (1, 1)
    groups: int = 1
    dtype: DType = DType.fp32
    bias: bool = False
    pass_: str = "forward"
    name: str = ""
    phase: str = "forward"
    compute_dtype: DType | None = None
    accumulate_dtype: str | None = None

    def __post_init__(self) -> None:
        self._common_post_init()
        _set_pairs(self, "kernel", "stride", "padding", "dilation")
        check_positive(self, "batch", "in_channels", "out_channels", "height", "width", "kernel", "stride",
                       "dilation", "groups")
        check_positive(self, "padding", minimum=0)
        check_choice(self, "pass_", CONV_PASSES)
        for f in ("in_channels", "out_channels"):
            if getattr(self, f) % self.groups:
                raise WorkloadError(f"Conv2d.{f}: {getattr(self, f)} is not divisible by groups={self.groups}")
        # Evaluate the output size now so an impossible geometry fails at construction.
        _ = self.out_height, self.out_width

    @property
    def out_height(self) -> int:
        return conv_out_size(self.height, self.kernel[0], self.stride[0], self.padding[0], self.dilation[0],
                             "Conv2d.height")

    @property
    def out_width(self) -> int:
        return conv_out_size(self.width, self.kernel[1], self.stride[1], self.padding[1], self.dilation[1],
                             "Conv2d.width")

    @property
    def is_depthwise_like(self) -> bool:
        return self.in_channels == self.groups and self.out_channels == self.groups and self.groups > 1

    def macs(self) -> int:
        r, s = self.kernel
        return (self.batch * self.out_channels * self.out_height * self.out_width
                * (self.in_channels // self.groups) * r * s)

    def flop_breakdown(self) -> dict[str, int]:
        bias = self.batch * self.out_channels * self.out_height * self.out_width if (
            self.bias and self.pass_ == "forward") else 0
        if self.is_depthwise_like:
            return breakdown(vector=2 * self.macs() + bias)
        return breakdown(matmul=2 * self.macs(), vector=bias)

    def x_spec(self) -> TensorSpec:
        return TensorSpec((self.batch, self.in_channels, self.height, self.width), self.dtype)

    def w_spec(self) -> TensorSpec:
        return TensorSpec((self.out_channels, self.in_channels // self.groups) + self.kernel, self.dtype)

    def y_spec(self) -> TensorSpec:
        return TensorSpec((self.batch, self.out_channels, self.out_height, self.out_width), self.dtype)

    def inputs(self) -> tuple[TensorSpec, ...]:
        if self.pass_ == "forward":
            ins = (self.x_spec(), self.w_spec())
            return ins + ((TensorSpec((self.out_channels,), self.dtype),) if self.bias else ())
        if self.pass_ == "backward_data":
            return (self.y_spec(), self.w_spec())
        return (self.x_spec(), self.y_spec())

    def outputs(self) -> tuple[TensorSpec, ...]:
        return ({"forward": self.y_spec(), "backward_data": self.x_spec(), "backward_weight": self.w_spec()}[
            self.pass_],)

    def param_count(self) -> int:
        if self.phase != "forward" or self.pass_ != "forward":
            return 0
        return self.w_spec().numel + (self.out_channels if self.bias else 0)

    def as_gemm(self) -> Gemm:
        """The implicit-GEMM (im2col / col2im) view of this pass, with the same MAC count.

        With ``G = groups``, ``C' = C/G``, ``K' = K/G`` and ``NPQ = batch*P*Q``:
        forward ``Y[NPQ, K'] = cols(X)[NPQ, C'RS] @ W[C'RS, K']``;
        backward-data ``dcols[NPQ, C'RS] = dY[NPQ, K'] @ W[K', C'RS]`` (then col2im);
        backward-weight ``dW[K', C'RS] = dY^T[K', NPQ] @ cols(X)[NPQ, C'RS]``; ``batch = G``.
        """
        r, s = self.kernel
        npq = self.batch * self.out_height * self.out_width
        crs = (self.in_channels // self.groups) * r * s
        kg = self.out_channels // self.groups
        dims = {"forward": (npq, kg, crs), "backward_data": (npq, crs, kg), "backward_weight": (kg, crs, npq)}
        m, n, k = dims[self.pass_]
        return Gemm(m, n, k, self.dtype, batch=self.groups, trans_a=self.pass_ == "backward_weight",
                    name=self.name, phase=self.phase, compute_dtype=self.compute_dtype,
                    accumulate_dtype=self.accumulate_dtype)

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        if self.pass_ != "forward":
            raise WorkloadError("Conv2d: only the forward pass has a backward pass")
        common = dict(kernel=self.kernel, stride=self.stride, padding=self.padding, dilation=self.dilation,
                      groups=self.groups, dtype=self.dtype, phase="backward", compute_dtype=self.compute_dtype,
                      accumulate_dtype=self.accumulate_dtype)
        args = (self.batch, self.in_channels, self.out_channels, self.height, self.width)
        ops: tuple[Op, ...] = (
            Conv2d(*args, pass_="backward_data", name=self._bwd_name("dX"), **common),
            Conv2d(*args, pass_="backward_weight", name=self._bwd_name("dW"), **common),
        )
        if self.bias:
            ops += (Reduce(self.y_spec().shape, axes=(0, 2, 3), dtype=self.dtype, name=self._bwd_name("db"),
                           phase="backward"),)
        return ops


@dataclass(frozen=True)
class Pool(Op):
    """Max or average 2-D pooling, NCHW (``stride`` defaults to ``kernel``; global pooling = kernel = (H, W)).

    FLOP per output: max ``R*S - 1`` compares; avg ``R*S - 1`` adds + 1 multiply (by ``1/(R*S)``).
    ``pass_="backward"`` scatters each output gradient over its window: ``R*S`` vector ops per output
    (avg: add ``dy/(R*S)``; max: compare with the saved max, select); it reads dy and (max) x, writes dx.
    """

    kind = "pool"
    batch: int
    channels: int
    height: int
    width: int
    kernel: tuple[int, int] | int = (2, 2)
    stride: tuple[int, int] | int | None = None
    padding: tuple[int, int] | int = (0, 0)
    mode: str = "max"
    dtype: DType = DType.fp32
    pass_: str = "forward"
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        if self.stride is None:
            object.__setattr__(self, "stride", pair(self.kernel, "Pool.kernel"))
        _set_pairs(self, "kernel", "stride", "padding")
        check_positive(self, "batch", "channels", "height", "width", "kernel", "stride")
        check_positive(self, "padding", minimum=0)
        check_choice(self, "mode", ("max", "avg"))
        check_choice(self, "pass_", ("forward", "backward"))
        _ = self.out_height, self.out_width

    @property
    def out_height(self) -> int:
        return conv_out_size(self.height, self.kernel[0], self.stride[0], self.padding[0], 1, "Pool.height")

    @property
    def out_width(self) -> int:
        return conv_out_size(self.width, self.kernel[1], self.stride[1], self.padding[1], 1, "Pool.width")

    def _outputs_numel(self) -> int:
        return self.batch * self.channels * self.out_height * self.out_width

    def flop_breakdown(self) -> dict[str, int]:
        window = self.kernel[0] * self.kernel[1]
        if self.pass_ == "backward":
            return breakdown(vector=self._outputs_numel() * window)
        return breakdown(vector=self._outputs_numel() * window - (self._outputs_numel() if self.mode == "max" else 0))

    def x_spec(self) -> TensorSpec:
        return TensorSpec((self.batch, self.channels, self.height, self.width), self.dtype)

    def y_spec(self) -> TensorSpec:
        return TensorSpec((self.batch, self.channels, self.out_height, self.out_width), self.dtype)

    def inputs(self) -> tuple[TensorSpec, ...]:
        if self.pass_ == "forward":
            return (self.x_spec(),)
        return (self.y_spec(), self.x_spec()) if self.mode == "max" else (self.y_spec(),)

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (self.x_spec(),) if self.pass_ == "backward" else (self.y_spec(),)

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        if self.pass_ != "forward":
            raise WorkloadError("Pool: only the forward pass has a backward pass")
        return (Pool(self.batch, self.channels, self.height, self.width, self.kernel, self.stride, self.padding,
                     self.mode, self.dtype, pass_="backward", name=self._bwd_name("dX"), phase="backward"),)
