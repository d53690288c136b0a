"""Data movement: bytes crossing each level boundary of a memory hierarchy, from a tiling model.

The question answered here is: an op runs below a level of capacity ``S`` bytes (a cache, a
shared-memory array, a register file); how many bytes must cross from the next outer level into
it? The answer is the traffic of the best tiling that fits in ``S``, found by an *analytical
mapper*: an exhaustive search over a small candidate set of tile shapes and dataflows, the idea of
Timeloop's mapper (Parashar et al., ISPASS 2019) restricted to closed-form loop nests, in the
spirit of the GEMM I/O bounds of Hong & Kung (STOC 1981) and Irony, Toledo & Tiskin (JPDC 2004).

Formulas (element sizes ``a``, ``b``, ``c`` bytes for A, B and C of C[m,n] = A[m,k] B[k,n]):

* output-stationary tile ``tm x tn`` of C kept resident while k streams in unit slices, which fits
  when ``tm tn c + (tm a + tn b) <= S``:
  ``Q = a m k ceil(n / tn) + b k n ceil(m / tm) + c m n``;
* A-panel resident (``tm`` full rows of A, one column of B and of C at a time), fits when
  ``tm k a + k b + tm c <= S``: ``Q = a m k + b k n ceil(m / tm) + c m n``; B-panel symmetric.

The mapper takes the minimum over tile sizes (powers of two up to the dimension, and the dimension
itself) and the three dataflows. Three properties follow from the construction, and the tests
check them: ``Q >= min_bytes`` (every ceil is >= 1), ``Q <=`` the untiled count ``a m k n + b k n m +
c m n`` (the 1x1 output-stationary tile is always a candidate), and ``Q`` is non-increasing in
``S`` (a larger capacity only adds feasible candidates).

Convolution uses the implicit-GEMM view (cuDNN; Chetlur et al., arXiv:1410.0759): M = N P Q,
N_gemm = K, K_gemm = C R S. The A operand is never materialised: one pass over A reads the input
tensor once when the level holds a sliding window of R input rows (the halo is then reused from
the level), else it reads the im2col matrix. Flash-style attention follows Dao et al. (NeurIPS
2022, Theorem 2): a Q block of ``tq`` rows stays resident while K and V stream, so K and V are read
``ceil(Lq / tq)`` times. Streaming ops (elementwise, reductions, normalisations) move their inputs
and outputs once at every level; a row-wise two-pass op (softmax, layernorm) re-reads its input
when a row does not fit in the level.

All functions are vectorised: ``capacity_bytes`` may be an array (one entry per hardware point)
and the result has its shape.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from archsim.errors import EngineError

__all__ = [
    "Level",
    "GemmShape",
    "gemm_tiled_bytes",
    "gemm_bytes",
    "gemm_bytes_rows",
    "gemm_min_bytes",
    "gemm_untiled_bytes",
    "conv_a_pass_bytes",
    "conv_touched_bytes",
    "conv_bytes",
    "flash_attention_bytes",
    "streaming_bytes",
    "rowwise_bytes",
]


@dataclass(frozen=True)
class Level:
    """One memory level as the tiling model sees it: a name and the capacity one tile may use."""

    name: str
    capacity_bytes: float


@dataclass(frozen=True)
class GemmShape:
    """C[m, n] (+)= A[m, k] B[k, n], ``batch`` independent instances; element sizes in bytes.

    ``a_pass_bytes`` is the cost of one full pass over A (``a m k`` for a stored matrix, less for an
    implicit-GEMM convolution whose A is the input tensor seen through a sliding window).
    """

    m: int
    n: int
    k: int
    batch: int = 1
    a_bytes: float = 4.0
    b_bytes: float = 4.0
    c_bytes: float = 4.0
    a_pass_bytes: float | None = None

    def __post_init__(self) -> None:
        for name in ("m", "n", "k", "batch"):
            value = getattr(self, name)
            if not isinstance(value, int | np.integer) or value < 1:
                raise EngineError(f"GemmShape.{name} must be a positive int, got {value!r}")

    @property
    def a_pass(self) -> float:
        """Bytes of one pass over A (one instance)."""
        return float(self.a_pass_bytes) if self.a_pass_bytes is not None else self.a_bytes * self.m * self.k


def _tile_candidates(dim: int) -> np.ndarray:
    """Powers of two below ``dim`` and ``dim`` itself: the tile sizes the mapper tries."""
    powers = [1 << i for i in range(int(dim).bit_length()) if (1 << i) < dim]
    return np.array([*powers, dim], dtype=np.float64)


def gemm_tiled_bytes(shape: GemmShape, tm: np.ndarray | float, tn: np.ndarray | float) -> np.ndarray:
    """Output-stationary traffic of tiles ``tm x tn`` (any broadcastable arrays), all batches, bytes."""
    s = shape
    q = (s.a_pass * np.ceil(s.n / np.asarray(tn, dtype=np.float64))
         + s.b_bytes * s.k * s.n * np.ceil(s.m / np.asarray(tm, dtype=np.float64))
         + s.c_bytes * s.m * s.n)
    return q * s.batch


def gemm_min_bytes(shape: GemmShape) -> float:
    """Compulsory traffic: A, B and C each once (all batches), bytes."""
    s = shape
    return (s.a_pass + s.b_bytes * s.k * s.n + s.c_bytes * s.m * s.n) * s.batch


def gemm_untiled_bytes(shape: GemmShape) -> float:
    """Traffic with no reuse: every multiply-add fetches its A and B element, C written once, bytes."""
    s = shape
    return (s.a_pass * s.n + s.b_bytes * s.k * s.n * s.m + s.c_bytes * s.m * s.n) * s.batch


def gemm_bytes(shape: GemmShape, capacity_bytes: np.ndarray | float) -> np.ndarray:
    """Bytes crossing into a level of ``capacity_bytes`` (array) under the best tiling found.

    The minimum over output-stationary tiles and A-/B-panel-resident dataflows (module doc).
    A capacity too small for any tile gives the untiled count.
    """
    s = shape
    cap = np.atleast_1d(np.asarray(capacity_bytes, dtype=np.float64))[:, None]
    tms, tns = _tile_candidates(s.m), _tile_candidates(s.n)
    tm, tn = np.meshgrid(tms, tns, indexing="ij")
    tm, tn = tm.ravel()[None, :], tn.ravel()[None, :]
    untiled = gemm_untiled_bytes(s)
    # Output-stationary: a C tile plus one k-slice of its A rows and B columns.
    fits = tm * tn * s.c_bytes + tm * s.a_bytes + tn * s.b_bytes <= cap
    q_os = np.where(fits, gemm_tiled_bytes(s, tm, tn), untiled).min(axis=1)
    a_row = s.a_pass / s.m  # bytes of one row of A (one pass)
    # A-panel resident: tm rows of A, one column of B, tm outputs.
    tmc = tms[None, :]
    fits_a = tmc * a_row + s.k * s.b_bytes + tmc * s.c_bytes <= cap
    q_a = (s.a_pass + s.b_bytes * s.k * s.n * np.ceil(s.m / tmc) + s.c_bytes * s.m * s.n) * s.batch
    q_a = np.where(fits_a, q_a, untiled).min(axis=1)
    # B-panel resident: tn columns of B, one row of A, tn outputs.
    tnc = tns[None, :]
    fits_b = tnc * s.k * s.b_bytes + a_row + tnc * s.c_bytes <= cap
    q_b = (s.a_pass * np.ceil(s.n / tnc) + s.b_bytes * s.k * s.n + s.c_bytes * s.m * s.n) * s.batch
    q_b = np.where(fits_b, q_b, untiled).min(axis=1)
    out = np.minimum(np.minimum(q_os, q_a), q_b)
    return out.reshape(np.shape(capacity_bytes))


def gemm_bytes_rows(m: np.ndarray, n: np.ndarray, k: np.ndarray, batch: np.ndarray, a_bytes: np.ndarray,
                    b_bytes: np.ndarray, c_bytes: np.ndarray, a_pass: np.ndarray,
                    capacity_bytes: np.ndarray) -> np.ndarray:
    """:func:`gemm_bytes` of R GEMMs at once: row ``i`` is GEMM ``i`` at capacity ``capacity_bytes[i]``.

    Every argument is an array of shape (R,) (``a_pass`` the bytes of one pass over A, one
    instance). The same formulas in the same order as :func:`gemm_bytes`, so each row equals the
    one-GEMM call to the last bit; every row tries the tile sizes of :func:`_tile_candidates`, the
    powers of two of the largest dimension of all rows standing in for those at or above its own
    (duplicates of a candidate leave the minimum unchanged). The rows run compiled
    (:func:`archsim.cost.gemm_search.mapper_rows`): one call instead of a few dozen array
    operations, which dominate at the tens of rows of one estimate.
    """
    from archsim.cost import gemm_search as engine

    cols = [np.ascontiguousarray(v, dtype=np.float64) for v in
            (m, n, k, batch, a_bytes, b_bytes, c_bytes, a_pass, capacity_bytes)]
    out = np.empty(len(cols[0]))
    engine.mapper_rows(*cols, int(cols[0].max()).bit_length(), int(cols[1].max()).bit_length(), out)
    return out


def conv_a_pass_bytes(batch: int, in_channels: int, height: int, width: int, kernel_h: int, kernel_w: int,
                      out_h: int, out_w: int, elem_bytes: float, capacity_bytes: np.ndarray | float,
                      touched_bytes: float | None = None) -> np.ndarray:
    """Bytes of one pass over the implicit im2col matrix A at a level of ``capacity_bytes``.

    The input tensor once if the level holds the sliding window of ``kernel_h`` input rows of one
    image (``kernel_h x width x in_channels`` elements), else the im2col matrix
    ``N P Q x C R S`` (no halo reuse). Never below the input once, never above im2col.
    ``touched_bytes``: the bytes memory delivers for the input elements the convolution reads,
    counted in whole sectors (:func:`conv_touched_bytes`); a strided convolution over narrow rows
    then reads more than its im2col size. It is the floor of both bounds.
    """
    return np.where(np.asarray(capacity_bytes, dtype=np.float64) >= conv_window_bytes(
        in_channels, width, kernel_h, elem_bytes), *conv_a_pass_bounds(
        batch, in_channels, height, width, kernel_h, kernel_w, out_h, out_w, elem_bytes, touched_bytes))


def _touched_indices(size: int, kernel: int, stride: int, padding: int, dilation: int, out: int) -> np.ndarray:
    """Input indices along one axis that some output reads: ``o s - pad + j d`` inside ``[0, size)``."""
    idx = (np.arange(out)[:, None] * stride - padding + np.arange(kernel)[None, :] * dilation).ravel()
    return np.unique(idx[(idx >= 0) & (idx < size)])


_EXACT_SECTOR_COUNT = 1 << 20
"""Touched elements per plane up to which :func:`conv_touched_bytes` counts sectors exactly."""


@functools.lru_cache(maxsize=4096)
def conv_touched_bytes(batch: int, in_channels: int, height: int, width: int, kernel: tuple[int, int],
                       stride: tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int], out_h: int,
                       out_w: int, elem_bytes: float, sector_bytes: float) -> float:
    """Bytes fetched to read every input element a convolution uses, in whole ``sector_bytes`` sectors.

    Each NCHW plane (``height x width`` elements, contiguous) is read at the rows and columns some
    output uses; memory delivers whole sectors (NVIDIA: 32-byte sectors of the 128-byte L2 line, the
    DRAM access granularity). A 1x1 stride-4 convolution over 8-byte int8 rows touches one row in four,
    but every 32-byte sector holds a touched row: the whole plane is fetched (4x its im2col bytes).
    Counted exactly per plane (the same for every plane of the tensor) up to 2^20 touched elements,
    else the plane's bytes (the upper bound). Never above the input rounded up to whole sectors.
    """
    rows = _touched_indices(height, kernel[0], stride[0], padding[0], dilation[0], out_h)
    cols = _touched_indices(width, kernel[1], stride[1], padding[1], dilation[1], out_w)
    plane = height * width * elem_bytes
    if len(rows) * len(cols) <= _EXACT_SECTOR_COUNT:
        offsets = (rows[:, None] * width + cols[None, :]).ravel() * elem_bytes
        per_plane = len(np.unique(np.floor(offsets / sector_bytes))) * sector_bytes
    else:
        per_plane = plane
    input_bytes = batch * in_channels * plane
    return float(min(batch * in_channels * per_plane, np.ceil(input_bytes / sector_bytes) * sector_bytes))


def conv_window_bytes(in_channels: int, width: int, kernel_h: int, elem_bytes: float) -> float:
    """The sliding window of ``kernel_h`` input rows of one image, bytes."""
    return kernel_h * width * in_channels * elem_bytes


def conv_a_pass_bounds(batch: int, in_channels: int, height: int, width: int, kernel_h: int, kernel_w: int,
                       out_h: int, out_w: int, elem_bytes: float,
                       touched_bytes: float | None = None) -> tuple[float, float]:
    """(low, high): the A pass of :func:`conv_a_pass_bytes` when the window fits, and when it does not."""
    input_bytes = batch * in_channels * height * width * elem_bytes
    im2col_bytes = batch * out_h * out_w * in_channels * kernel_h * kernel_w * elem_bytes
    low, high = min(input_bytes, im2col_bytes), max(input_bytes, im2col_bytes)
    if touched_bytes is not None:
        low = max(low, touched_bytes)
        high = max(high, low)
    return low, high


def conv_bytes(shape: GemmShape, a_pass_by_capacity: np.ndarray, capacity_bytes: np.ndarray | float) -> np.ndarray:
    """Implicit-GEMM convolution traffic: the GEMM mapper with the A pass cost of each capacity."""
    caps = np.atleast_1d(np.asarray(capacity_bytes, dtype=np.float64))
    a_pass = np.broadcast_to(np.atleast_1d(a_pass_by_capacity), caps.shape)
    out = np.empty_like(caps)
    # The A pass cost takes at most two values (window fits or not): one mapper call per value.
    for value in np.unique(a_pass):
        sel = a_pass == value
        sub = GemmShape(shape.m, shape.n, shape.k, shape.batch, shape.a_bytes, shape.b_bytes, shape.c_bytes,
                        a_pass_bytes=float(value) / shape.batch)
        out[sel] = gemm_bytes(sub, caps[sel])
    return out.reshape(np.shape(capacity_bytes))


def flash_attention_bytes(batch_heads: int, seq_q: int, seq_k: int, head_dim: int, elem_bytes: float,
                          capacity_bytes: np.ndarray | float) -> np.ndarray:
    """Fused (flash-style) attention traffic into a level of ``capacity_bytes``, bytes.

    A Q block of ``tq`` rows and its output accumulator (fp32) stay resident with one K/V row:
    ``tq d (e + 4) + 2 d e <= S``; Q and O cross once, K and V ``ceil(Lq / tq)`` times
    (Dao et al. 2022, Theorem 2: Theta(N^2 d^2 / M) for N = Lq = Lk).
    """
    cap = np.atleast_1d(np.asarray(capacity_bytes, dtype=np.float64))[:, None]
    tq = _tile_candidates(seq_q)[None, :]
    d, e = head_dim, elem_bytes
    qo = 2 * seq_q * d * e
    kv = 2 * seq_k * d * e
    fits = tq * d * (e + 4) + 2 * d * e <= cap
    untiled = qo + kv * seq_q
    q = np.where(fits, qo + kv * np.ceil(seq_q / tq), untiled).min(axis=1) * batch_heads
    return q.reshape(np.shape(capacity_bytes))


def streaming_bytes(min_bytes: float, capacity_bytes: np.ndarray | float) -> np.ndarray:
    """A streaming op (elementwise, a one-pass reduction) moves its compulsory bytes at every level."""
    return np.full(np.shape(capacity_bytes), float(min_bytes)) if np.ndim(capacity_bytes) else np.asarray(
        float(min_bytes))


def rowwise_bytes(min_bytes: float, input_bytes: float, row_bytes: float,
                  capacity_bytes: np.ndarray | float) -> np.ndarray:
    """A two-pass row-wise op (softmax, layernorm): the input is read again when a row does not fit."""
    cap = np.asarray(capacity_bytes, dtype=np.float64)
    return np.where(cap >= row_bytes, float(min_bytes), float(min_bytes) + float(input_bytes))
