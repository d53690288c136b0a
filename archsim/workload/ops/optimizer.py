"""The parameter update of a training step: SGD, SGD with momentum, Adam."""

from __future__ import annotations

from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_choice, check_positive

__all__ = ["OptimizerStep", "OPTIMIZERS"]

OPTIMIZERS = ("sgd", "sgd_momentum", "adam")

# (vector FLOP, special FLOP, optimizer-state tensors per parameter), per parameter, as PyTorch's
# torch.optim implementations compute them:
#   sgd:          w -= lr*g                                      1 FMA = 2
#   sgd_momentum: v = mu*v + g; w -= lr*v                        2 FMA = 4
#   adam (Kingma & Ba 2015, Alg. 1): m = b1*m + (1-b1)*g (3); v = b2*v + (1-b2)*g*g (4);
#                 bias corrections m/(1-b1^t), v/(1-b2^t) by precomputed scalars (2); sqrt (special);
#                 + eps (1); division = rcp (special) + multiply (1); w -= lr*update (FMA, 2) = 13 + 2 special
# Weight decay adds one FMA (2) in every case (decoupled, AdamW, or folded into g for SGD).
_COSTS = {"sgd": (2, 0, 0), "sgd_momentum": (4, 0, 1), "adam": (13, 2, 2)}


@dataclass(frozen=True)
class OptimizerStep(Op):
    """One optimizer update over ``params`` learnable parameters.

    Attributes:
        params: number of parameters updated.
        optimizer: ``"sgd"``, ``"sgd_momentum"`` or ``"adam"``.
        dtype: the model's weight and gradient type.
        master_weights: keep an fp32 master copy and fp32 optimizer state (mixed-precision training,
            Micikevicius et al., "Mixed Precision Training", ICLR 2018); ``None`` means yes for
            types narrower than 32 bits. Then the step reads the gradient (``dtype``), reads and writes
            the fp32 master weights and states, and writes the ``dtype`` working copy of the weights.
            Without, weights and states are ``dtype`` and read and written in place.
        weight_decay: apply weight decay (one more FMA per parameter).
    """

    kind = "optimizer"
    params: int
    optimizer: str = "adam"
    dtype: DType = DType.fp32
    master_weights: bool | None = None
    weight_decay: bool = False
    name: str = ""
    phase: str = "update"

    def __post_init__(self) -> None:
        self._common_post_init()
        check_positive(self, "params")
        check_choice(self, "optimizer", OPTIMIZERS)
        if self.master_weights is None:
            object.__setattr__(self, "master_weights", self.dtype.bits < 32)
        if self.phase != "update":
            raise WorkloadError(f"OptimizerStep.phase: must be 'update', got {self.phase!r}")

    @property
    def state_tensors(self) -> int:
        """Optimizer-state tensors per parameter (momentum; Adam's m and v)."""
        return _COSTS[self.optimizer][2]

    def flop_breakdown(self) -> dict[str, int]:
        vec, special, _ = _COSTS[self.optimizer]
        vec += 2 if self.weight_decay else 0
        return breakdown(vector=self.params * vec, special=self.params * special)

    def _state_dtype(self) -> DType:
        return DType.fp32 if self.master_weights else self.dtype

    def inputs(self) -> tuple[TensorSpec, ...]:
        p = (self.params,)
        grad = TensorSpec(p, self.dtype)
        w = TensorSpec(p, self._state_dtype())
        return (grad, w) + (TensorSpec(p, self._state_dtype()),) * self.state_tensors

    def outputs(self) -> tuple[TensorSpec, ...]:
        p = (self.params,)
        outs = (TensorSpec(p, self._state_dtype()),) * (1 + self.state_tensors)
        return outs + ((TensorSpec(p, self.dtype),) if self.master_weights else ())

    def backward(self) -> tuple[Op, ...]:
        raise WorkloadError("OptimizerStep: an update has no backward pass")
