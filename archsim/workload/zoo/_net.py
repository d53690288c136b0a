"""A small layer vocabulary over :class:`GraphBuilder` for the zoo's model definitions.

Layers follow the reference frameworks' definitions (Keras, torchvision, Hugging Face), so parameter
counts match theirs exactly. Dropout is a no-op at inference and is only emitted when training;
batch normalisation uses batch statistics when training.
"""

from __future__ import annotations

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType
from archsim.workload.graph import GraphBuilder, OpGraph, Value, training_step
from archsim.workload.ops import BatchNorm, Conv2d, Elementwise, Gemm, LayerNorm, Pool, Softmax

__all__ = ["Net", "finish"]


def finish(net: Net, training: bool, optimizer: str) -> OpGraph:
    """The built graph, turned into a training step when ``training``."""
    graph = net.b.build()
    return training_step(graph, optimizer) if training else graph


def check_batch(batch: int) -> None:
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise WorkloadError(f"batch: must be an int >= 1, got {batch!r}")


class Net:
    """Builder state for one model: element type, batch, training flag, and NCHW layer helpers."""

    def __init__(self, name: str, batch: int, dtype: DType | str, training: bool) -> None:
        check_batch(batch)
        self.dtype = DType.parse(dtype)
        self.batch = batch
        self.training = training
        self.b = GraphBuilder(name, batch, self.dtype)

    # --- convolutional layers (x is NCHW) -------------------------------------------------------
    def conv(self, x: Value, out_ch: int, kernel: int, stride: int = 1, padding: int = 0, groups: int = 1,
             bias: bool = False, name: str = "") -> Value:
        n, c, h, w = x.shape
        op = Conv2d(n, c, out_ch, h, w, kernel=kernel, stride=stride, padding=padding, groups=groups,
                    dtype=self.dtype, bias=bias, name=name)
        return self.b.add(op, x)

    def bn(self, x: Value, name: str = "") -> Value:
        n, c, h, w = x.shape
        return self.b.add(BatchNorm(n, c, h, w, self.dtype, batch_stats=self.training, name=name), x)

    def act(self, x: Value, fn: str = "relu", name: str = "") -> Value:
        """``fn`` applied to ``x``; unnamed, it is named after its input's op (``conv1.relu``), so no two
        activations of a model share the bare kind as their name."""
        if not name and x.producer is not None:
            name = f"{self.b.op_label(x.producer)}.{fn}"
        return self.b.add(Elementwise(x.shape, fn, self.dtype, name=name), x)

    def pool(self, x: Value, kernel: int, stride: int | None = None, padding: int = 0, mode: str = "max",
             name: str = "") -> Value:
        n, c, h, w = x.shape
        op = Pool(n, c, h, w, kernel=kernel, stride=stride or kernel, padding=padding, mode=mode,
                  dtype=self.dtype, name=name)
        return self.b.add(op, x)

    def global_avg_pool(self, x: Value, name: str = "") -> Value:
        n, c, h, w = x.shape
        return self.b.add(Pool(n, c, h, w, kernel=(h, w), mode="avg", dtype=self.dtype, name=name), x)

    # --- dense layers (x is (rows, features) or anything that flattens to it) -------------------
    def linear(self, x: Value, out_features: int, bias: bool = True, rows: int | None = None, name: str = "",
               tied: bool = False) -> Value:
        """``y = x W + b``; ``rows`` defaults to the batch; ``tied`` marks a weight owned by another op."""
        rows = rows or self.batch
        in_features = x.tensor.numel // rows
        op = Gemm(rows, out_features, in_features, self.dtype, weight=not tied, bias=bias, name=name)
        return self.b.add(op, x)

    def dropout(self, x: Value, name: str = "") -> Value:
        if not self.training:
            return x
        if not name and x.producer is not None:
            name = f"{self.b.op_label(x.producer)}.dropout"
        return self.b.add(Elementwise(x.shape, "dropout", self.dtype, name=name), x)

    def add(self, a: Value, b: Value, fn: str = "residual_add", name: str = "",
            shape: tuple[int, ...] | None = None) -> Value:
        """``fn(a, b)``; ``shape`` views ``a`` so that a smaller ``b`` broadcasts (numpy rules)."""
        shape = shape or a.shape
        if not name and a.producer is not None:
            name = f"{self.b.op_label(a.producer)}.{fn}"
        shapes = None if a.tensor.numel == b.tensor.numel else (shape, b.shape)
        return self.b.add(Elementwise(shape, fn, self.dtype, operand_shapes=shapes, name=name), a, b)

    def layernorm(self, x: Value, features: int, rms: bool = False, name: str = "") -> Value:
        shape = (x.tensor.numel // features, features)
        return self.b.add(LayerNorm(shape, self.dtype, rms=rms, name=name), x)

    def softmax(self, x: Value, features: int, name: str = "softmax") -> Value:
        return self.b.add(Softmax((x.tensor.numel // features, features), self.dtype, name=name), x)
