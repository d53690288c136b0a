"""Scaled dot-product attention, unfused (materialised scores) or fused (FlashAttention)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_choice, check_positive
from archsim.workload.ops.dense import Gemm
from archsim.workload.ops.elementwise import Elementwise, Reduce
from archsim.workload.ops.softmax import Softmax

__all__ = ["Attention"]


@dataclass(frozen=True)
class Attention(Op):
    """``O = softmax(Q K^T / sqrt(d)) V`` per head, with grouped-query heads and an optional causal mask.

    Q and O are ``(batch, heads, seq_q, head_dim)``; K and V are ``(batch, kv_heads, seq_kv, head_dim)``
    (``kv_heads < heads``: grouped-query attention, Ainslie et al. 2023; each KV head serves
    ``heads/kv_heads`` query heads). With ``causal`` the ``seq_q`` queries are the last ``seq_q``
    positions of the ``seq_kv`` keys (prefill: ``seq_q == seq_kv``; a decode step: ``seq_q = 1``), so
    query ``i`` sees ``seq_kv - seq_q + i + 1`` keys.

    ``fused=False``: the op sequence of :meth:`decompose` (QK^T GEMM, [causal mask add], softmax, PV
    GEMM); the full ``seq_q x seq_kv`` score matrix is computed (masked entries too), written and read
    back: ``min_bytes`` = Q, K, V, O + S written by QK^T and read by softmax + P written and read by PV
    (+ a read-modify-write of S and the mask for the causal mask add).
    ``fused=True`` (FlashAttention, Dao et al. 2022; FlashAttention-2, Dao 2023): scores stay on chip,
    ``min_bytes`` = Q, K, V, O; fully masked tiles are skipped, so FLOP count only visible entries.
    The ``1/sqrt(d)`` scale is taken as folded into Q's projection; the online-softmax rescaling of
    the fused kernel is not counted.

    FLOP with ``E`` computed score entries per head and ``R = seq_q`` rows: matmul ``2 * 2*E*d``
    (QK^T and PV); softmax as :class:`Softmax` per row (vector ``5E - 2R``, special ``E + R``).
    ``pass_="backward"`` is the fused backward (FlashAttention-2): 5 GEMM-sized products (S recomputed,
    dV, dP, dQ, dK) = matmul ``5 * 2*E*d``; vector ``4E + 2*R*d`` (P recompute 2, ``dS = P*(dP - D)`` 2;
    ``D = rowsum(dO*O)`` 2 per output element); special ``E`` (exp). It reads Q, K, V, O, dO and writes
    dQ, dK, dV.
    """

    kind = "attention"
    batch: int
    heads: int
    seq_q: int
    seq_kv: int
    head_dim: int
    kv_heads: int | None = None
    causal: bool = False
    fused: bool = False
    dtype: DType = DType.fp32
    pass_: str = "forward"
    name: str = ""
    phase: str = "forward"
    compute_dtype: DType | None = None
    accumulate_dtype: str | None = None

    def __post_init__(self) -> None:
        self._common_post_init()
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.heads)
        check_positive(self, "batch", "heads", "seq_q", "seq_kv", "head_dim", "kv_heads")
        if self.heads % self.kv_heads:
            raise WorkloadError(f"Attention.kv_heads: {self.kv_heads} does not divide heads={self.heads}")
        if self.causal and self.seq_q > self.seq_kv:
            raise WorkloadError(f"Attention.seq_q: causal attention needs seq_q <= seq_kv, got {self.seq_q} > "
                                f"{self.seq_kv}")
        check_choice(self, "pass_", ("forward", "backward"))
        if self.pass_ == "backward" and not self.fused:
            raise WorkloadError("Attention.pass_: the unfused backward is a sequence of ops; see backward()")

    # --- geometry -------------------------------------------------------------------------------
    @property
    def visible_entries(self) -> int:
        """Score entries per head that the mask leaves visible."""
        if not self.causal:
            return self.seq_q * self.seq_kv
        sq, skv = self.seq_q, self.seq_kv
        return sq * (skv - sq) + sq * (sq + 1) // 2

    @property
    def computed_entries(self) -> int:
        """Score entries per head actually computed (all of them unless fused and causal)."""
        return self.visible_entries if self.fused else self.seq_q * self.seq_kv

    def _bh(self) -> int:
        return self.batch * self.heads

    def _scores(self) -> TensorSpec:
        return TensorSpec((self.batch, self.heads, self.seq_q, self.seq_kv), self.dtype)

    # --- work -----------------------------------------------------------------------------------
    def macs(self) -> int:
        per_product = self._bh() * self.computed_entries * self.head_dim
        return (5 if self.pass_ == "backward" else 2) * per_product

    def flop_breakdown(self) -> dict[str, int]:
        bh, e, rows, d = self._bh(), self.computed_entries, self.seq_q, self.head_dim
        if self.pass_ == "backward":
            return breakdown(matmul=2 * self.macs(), vector=bh * (4 * e + 2 * rows * d), special=bh * e)
        if not self.fused:
            return {k: sum(op.flop_breakdown()[k] for op in self.decompose()) for k in ("matmul", "vector", "special")}
        return breakdown(matmul=2 * self.macs(), vector=bh * (5 * e - 2 * rows), special=bh * (e + rows))

    def decompose(self) -> tuple[Op, ...]:
        """The unfused op sequence: ``S = Q K^T``, [``S += mask``], ``P = softmax(S)``, ``O = P V``."""
        bh, sq, skv, d = self._bh(), self.seq_q, self.seq_kv, self.head_dim
        cd, ad = self.compute_dtype, self.accumulate_dtype
        ops: list[Op] = [Gemm(sq, skv, d, self.dtype, batch=bh, trans_b=True, name=f"{self.label}.qk",
                              phase=self.phase, compute_dtype=cd, accumulate_dtype=ad)]
        if self.causal:
            ops.append(Elementwise(self._scores().shape, "add", self.dtype,
                                   operand_shapes=(self._scores().shape, (sq, skv)),
                                   name=f"{self.label}.mask", phase=self.phase))
        ops.append(Softmax(self._scores().shape, self.dtype, name=f"{self.label}.softmax", phase=self.phase))
        ops.append(Gemm(sq, d, skv, self.dtype, batch=bh, name=f"{self.label}.pv", phase=self.phase,
                        compute_dtype=cd, accumulate_dtype=ad))
        return tuple(ops)

    # --- data -----------------------------------------------------------------------------------
    def q_spec(self) -> TensorSpec:
        return TensorSpec((self.batch, self.heads, self.seq_q, self.head_dim), self.dtype)

    def kv_spec(self) -> TensorSpec:
        return TensorSpec((self.batch, self.kv_heads, self.seq_kv, self.head_dim), self.dtype)

    def inputs(self) -> tuple[TensorSpec, ...]:
        q, kv = self.q_spec(), self.kv_spec()
        if self.pass_ == "backward":
            return (q, kv, kv, q, q)  # Q, K, V, O, dO
        return (q, kv, kv)

    def outputs(self) -> tuple[TensorSpec, ...]:
        q, kv = self.q_spec(), self.kv_spec()
        return (q, kv, kv) if self.pass_ == "backward" else (q,)

    def min_bytes(self) -> int:
        base = super().min_bytes()
        if self.fused:
            return base
        s = self._scores().bytes
        extra = 4 * s  # S written then read by softmax; P written then read by PV
        if self.causal:
            extra += 2 * s + TensorSpec((self.seq_q, self.seq_kv), self.dtype).bytes  # mask add: S read+write, mask
        return int(math.ceil(base + extra))

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        if self.pass_ != "forward":
            raise WorkloadError("Attention: only the forward pass has a backward pass")
        if self.fused:
            return (Attention(self.batch, self.heads, self.seq_q, self.seq_kv, self.head_dim, self.kv_heads,
                              self.causal, True, self.dtype, pass_="backward", name=self._bwd_name("bwd"),
                              phase="backward", compute_dtype=self.compute_dtype,
                              accumulate_dtype=self.accumulate_dtype),)
        bh, sq, skv, d, dt = self._bh(), self.seq_q, self.seq_kv, self.head_dim, self.dtype
        cd, ad = self.compute_dtype, self.accumulate_dtype
        ops: list[Op] = [
            Gemm(skv, d, sq, dt, batch=bh, trans_a=True, name=self._bwd_name("dV"), phase="backward",
                 compute_dtype=cd, accumulate_dtype=ad),
            Gemm(sq, skv, d, dt, batch=bh, trans_b=True, name=self._bwd_name("dP"), phase="backward",
                 compute_dtype=cd, accumulate_dtype=ad),
            Softmax(self._scores().shape, dt, pass_="backward", name=self._bwd_name("dS"), phase="backward"),
            Gemm(sq, d, skv, dt, batch=bh, name=self._bwd_name("dQ"), phase="backward",
                 compute_dtype=cd, accumulate_dtype=ad),
            Gemm(skv, d, sq, dt, batch=bh, trans_a=True, name=self._bwd_name("dK"), phase="backward",
                 compute_dtype=cd, accumulate_dtype=ad),
        ]
        if self.kv_heads < self.heads:  # each KV head's gradient sums over the query heads it serves
            group = (self.batch, self.kv_heads, self.heads // self.kv_heads, skv, d)
            ops += [Reduce(group, axes=(2,), dtype=dt, name=self._bwd_name(f"{g}.group_sum"), phase="backward")
                    for g in ("dK", "dV")]
        return tuple(ops)
