"""GPU models: streaming multiprocessor, Tensor Cores and the GPU device.

Peak FLOP/s = SMs x clock x FLOP/cycle/SM. For the CUDA cores FLOP/cycle/SM = FMA lanes x 2, e.g.
V100: 80 SMs x 1.53 GHz x 64 fp32 lanes x 2 = 15.7 TFLOP/s (V100 whitepaper, Table 1). For Tensor
Cores the dense FLOP/cycle/SM is a field per precision, e.g. V100 fp16: 8 Tensor Cores x 64 FMA x 2
= 1024, so 80 x 1.53 GHz x 1024 = 125 TFLOP/s.

AMD GPUs use the same schema with ``vendor = "amd"``: ``sm_count`` counts compute units (CUs),
``sm.warp_size`` is the wavefront (64 on CDNA; RDNA runs wave32 by default), ``sm.max_warps`` the
resident wavefronts per CU, shared memory the LDS, ``tensor_core`` the Matrix Cores (MFMA units,
CDNA; ``per_sm`` = matrix cores per CU) and ``infinity_cache`` the memory-side last-level cache
between L2 and DRAM (RDNA2/3 Infinity Cache; CDNA3's MALL).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from archsim.hardware.base import HardwareModel, NonNegativeInt, Precision, Source, reads, si
from archsim.hardware.energy import MAX_NODE_NM, EnergyTable, PowerModel
from archsim.hardware.memory import DRAM, Cache
from archsim.units import Area, Frequency, Power, Size, Time


class StreamingMultiprocessor(HardwareModel):
    """One SM: CUDA-core lanes, schedulers, register file, shared memory/L1 and occupancy limits."""

    cuda_cores: int = Field(gt=0, description="fp32 FMA lanes per SM")
    fma_lanes: dict[Precision, NonNegativeInt] = Field(
        description="FMA lanes per SM per precision on the CUDA cores (fp16 counts packed half2 lanes)"
    )
    special_function_units: int = Field(gt=0, description="SFU lanes per SM (exp, rsqrt, sin)")
    warp_schedulers: int = Field(gt=0)
    warp_size: int = Field(32, gt=0)
    registers: int = Field(gt=0, description="32-bit registers per SM")
    max_registers_per_thread: int = Field(255, gt=0)
    shared_memory_bytes: Size = si("shared_memory", gt=0, description="max shared memory per SM")
    max_shared_memory_per_block_bytes: Size = si("max_shared_memory_per_block", gt=0)
    max_warps: int = Field(gt=0, description="resident warps per SM")
    max_blocks: int = Field(gt=0, description="resident thread blocks per SM")
    max_threads_per_block: int = Field(1024, gt=0)
    l1: Cache = Field(description="the unified L1/shared-memory array of one SM (the L1/texture cache if separate)")
    unified_l1_shared: bool = Field(
        True, description="shared memory and L1 share one array (Fermi, Kepler, Volta and later); "
        "False for Maxwell/Pascal, whose shared memory is a separate array"
    )

    @model_validator(mode="after")
    @reads("fma_lanes", "cuda_cores", "max_shared_memory_per_block_bytes", "shared_memory_bytes", "unified_l1_shared",
           "l1", "max_warps", "warp_size", "max_threads_per_block")
    def _limits(self) -> StreamingMultiprocessor:
        if self.fma_lanes.get("fp32") != self.cuda_cores:
            raise ValueError(f"fma_lanes.fp32 must equal cuda_cores ({self.cuda_cores})")
        if self.max_shared_memory_per_block_bytes > self.shared_memory_bytes:
            raise ValueError("max_shared_memory_per_block exceeds shared_memory")
        if self.unified_l1_shared and self.shared_memory_bytes > self.l1.size_bytes:
            raise ValueError("shared_memory exceeds the L1/shared array size (l1.size)")
        if self.max_warps * self.warp_size < self.max_threads_per_block:
            raise ValueError("max_warps x warp_size is below max_threads_per_block")
        return self

    @property
    def max_threads(self) -> int:
        """Resident threads per SM."""
        return self.max_warps * self.warp_size


MMA_FLOP_PER_INSTRUCTION = 4096.0
"""Default FLOP of one issued warp MMA: mma.sync m16n8k16 = 2 x 16 x 8 x 16 (PTX ISA, Warp-level MMA shapes),
one HMMA.16816 SASS instruction from sm_80 on."""

MMA_OPERAND_BYTES_PER_FLOP: dict[str, float] = {
    "fp16": 768 / 4096, "bf16": 768 / 4096,  # m16n8k16: A 16x16 + B 16x8 at 2 B = 768 B per 4096 FLOP
    "tf32": 768 / 2048, "fp32": 768 / 2048,  # m16n8k8 (fp32 inputs run as tf32): A 16x8 + B 8x8 at 4 B
    "fp8": 768 / 8192, "int8": 768 / 8192,  # m16n8k32: A 16x32 + B 32x8 at 1 B = 768 B per 8192 FLOP
    "int4": 768 / 16384,  # m16n8k64: A 16x64 + B 64x8 at 0.5 B
    "fp64": 512 / 512,  # m8n8k4: A 8x4 + B 4x8 at 8 B = 512 B per 512 FLOP
}
"""A and B operand bytes an MMA reads per FLOP, by input precision, from the PTX ISA's warp-level
``mma.sync`` shapes (the largest shape per precision on sm_80). The Tensor Core operand-delivery
energy (``energy.tensor_operand_flop``, stated per 16-bit FLOP) scales with it: the same wires and
latches carry half the bytes per FLOP for 8-bit inputs and twice for tf32."""


class TensorCore(HardwareModel):
    """Matrix-multiply-accumulate units: dense (non-sparse) FLOP per cycle per SM per precision."""

    per_sm: int = Field(gt=0)
    flop_per_cycle_per_sm: dict[Precision, NonNegativeInt] = Field(min_length=1)
    channel_multiple: int = Field(
        8, ge=1,
        description="input and output channels of a Tensor-Core convolution are padded to a multiple of this "
                    "many elements (the MMA k-step for fp16; NVIDIA Deep Learning Performance Guide, "
                    "Convolutional Layers, 'Channels In And Out Requirements': multiples of 8 for FP16)",
    )
    flop_per_instruction: float = Field(
        MMA_FLOP_PER_INSTRUCTION, gt=0,
        description="FLOP of one issued warp-level MMA instruction (SASS), which the power model charges one "
                    "instruction issue each: HMMA.16816 (m16n8k16, 2 x 16 x 8 x 16 = 4096) from sm_80 on; "
                    "HMMA.1688 (m16n8k8, 2048) on Turing sm_75; on Volta sm_70 one PTX mma.m8n8k4 (four "
                    "quad-pairs x 8 x 8 x 4, 2048 FLOP) issues as four HMMA.884 STEP0-3 instructions, 512 each",
    )
    fp16_accumulate_flop_per_cycle_per_sm: dict[Precision, NonNegativeInt] = Field(
        default_factory=dict,
        description="dense FLOP per cycle per SM of the fp16 and fp8 inputs when the product accumulates in "
                    "fp16 (an op's accumulate_dtype='fp16'), where it differs from flop_per_cycle_per_sm (the "
                    "fp32-accumulate rate): GeForce parts run it at twice the rate (NVIDIA Turing/Ampere GA102/"
                    "Ada whitepapers, 'FP16 Tensor TFLOPS with FP16 Accumulate'); absent: the fp32-accumulate "
                    "rate (data-centre and professional parts run both at one rate)",
    )

    @model_validator(mode="after")
    @reads("fp16_accumulate_flop_per_cycle_per_sm", "flop_per_cycle_per_sm")
    def _fp16_accumulate(self) -> TensorCore:
        for precision, rate in self.fp16_accumulate_flop_per_cycle_per_sm.items():
            if precision not in ("fp16", "fp8") or not self.flop_per_cycle_per_sm.get(precision) or rate <= 0:
                raise ValueError(f"fp16_accumulate_flop_per_cycle_per_sm: {precision!r} is not allowed; allowed: "
                                 "fp16, fp8 with a rate > 0 where flop_per_cycle_per_sm lists them (only those "
                                 "inputs accumulate in fp16)")
        return self


class GPUEfficiency(HardwareModel):
    """Named calibration factors of a GPU, each backed by a source in the preset."""

    launch_overhead_s: Time = si("launch_overhead", gt=0, description="kernel launch to start, host side")
    dram_bandwidth_efficiency: float = Field(gt=0, le=1, description="STREAM-like copy / peak")
    dram_read_only_efficiency: float | None = Field(
        None, gt=0, le=1,
        description="achievable fraction of peak of read-only DRAM traffic (no read/write bus turnarounds; "
                    "gpu-stream read / peak); None: dram_bandwidth_efficiency (mixed traffic, triad / peak)")
    dram_write_only_efficiency: float | None = Field(
        None, gt=0, le=1,
        description="achievable fraction of peak of write-only DRAM traffic (gpu-stream init / peak); "
                    "None: dram_bandwidth_efficiency")
    l2_bandwidth_efficiency: float = Field(gt=0, le=1)
    vector_efficiency: float = Field(gt=0, le=1, description="achievable fraction of CUDA-core peak")
    conv_vector_efficiency: float | None = Field(
        None, gt=0, le=1,
        description="achievable fraction of CUDA-core peak in the convolution library's implicit-GEMM kernels "
                    "(the forward and weight-gradient passes, whose A operand is the gathered im2col matrix; "
                    "Tensor-Core math keeps tensor_efficiency): an implicit GEMM computes the im2col "
                    "address of every operand element it gathers with integer instructions, which an SM without "
                    "separate INT32 cores (before Volta) issues on its FP32 cores, between the FFMAs; None: "
                    "vector_efficiency (Volta and later run INT32 beside FP32, NVIDIA Volta Tuning Guide 4.1.1)")
    tensor_efficiency: float = Field(gt=0, le=1, description="achievable fraction of Tensor Core peak")
    gemm_pipeline_stages: int = Field(
        ge=2, le=16,
        description="shared-memory stages of the GEMM main loop (CUTLASS kStages): stages - 1 k-slices "
                    "of operands are in flight per thread block, which sets the latency hiding by Little's law",
    )
    gemm_cluster_size: int = Field(
        1, ge=1, le=16,
        description="thread blocks of a GEMM cluster that share operand tiles: Hopper's CUTLASS sm90 kernels "
                    "launch 2 x 1 x 1 clusters whose B tile is loaded once by TMA multicast into both blocks' "
                    "shared memory (halving its L2 traffic); 1 before Hopper (no clusters)",
    )
    gemm_max_split_k: int = Field(
        16, ge=1, le=16,
        description="largest split-K factor the GEMM library launches (parallel split-K: the reduction "
                    "dimension cut into slices whose partial sums a second kernel adds; CUTLASS "
                    "--split-k-slices); 1: the library runs each output tile's whole K loop in one thread "
                    "block, so a GEMM with few output tiles and a long K is latency-bound on those blocks",
    )
    conv_nchw_transposes: bool = Field(
        True,
        description="the convolution library runs Tensor-Core convolutions with R x S > 1 filters on NHWC "
                    "tensors: NCHW inputs and filters are transposed by separate kernels first (cuDNN 7's "
                    "nchwToNhwcKernel), the output is written back as NCHW by the main kernel's epilogue "
                    "(its nhwc2nchw kernel variants); 1x1 filters run as a GEMM on NCHW in place. NVIDIA Deep "
                    "Learning Performance Guide, Convolutional Layers, 'Tensor Layouts In Memory: NCHW vs "
                    "NHWC'. False for a library with native NCHW Tensor-Core kernels",
    )


class GPUDevice(HardwareModel):
    """A GPU: SMs at a boost clock, Tensor Cores, L2, device memory, energy and calibration."""

    kind: Literal["gpu"] = "gpu"
    name: str = Field(min_length=1)
    vendor: Literal["nvidia", "amd"] = Field(
        "nvidia", description="nvidia or amd: AMD CUs, wavefronts, LDS and Matrix Cores map onto the SM fields "
                              "(module documentation)")
    architecture: str = Field(pattern=r"^[a-z][a-z0-9-]*$", description="e.g. volta, ampere, hopper")
    compute_capability: str = Field(pattern=r"^\d+\.\d+$")
    node_nm: float = Field(gt=0, le=MAX_NODE_NM, description="process node, nm (also in energy.node_nm)")
    sm_count: int = Field(gt=0)
    clock_hz: Frequency = si("clock", gt=0, description="boost clock the datasheet peaks use")
    tensor_clock_hz: Frequency | None = si(
        "tensor_clock", gt=0, default=None,
        description="clock the datasheet Tensor Core peaks use, when it differs from clock (H100: 1.83 vs 1.98 GHz)",
    )
    sm: StreamingMultiprocessor
    tensor_core: TensorCore | None = None
    l2: Cache
    sector_bytes: int = Field(
        32, gt=0, description="granularity of L2 <-> DRAM transfers: an access fetches whole sectors of this "
                              "many bytes (NVIDIA: 32-byte sectors of the 128-byte L2 line, Fermi onwards)")
    infinity_cache: Cache | None = Field(
        None, description="memory-side cache between L2 and DRAM (AMD Infinity Cache): recorded for comparisons; "
                          "the cost model does not price hits in it yet (DRAM-sized streams miss it)")
    dram: DRAM
    energy: EnergyTable
    static_power_w: Power = si("static_power", description="idle power")
    tdp_w: Power = si("tdp", gt=0)
    die_area_m2: Area | None = si("die_area", gt=0, default=None, description="area of the GPU die (the "
                                  "whole die, fused-off SMs included), m^2; the power model's area form needs it")
    die_sm_count: int | None = Field(None, gt=0, description="SMs on the full die (enabled or not); the "
                                     "power model's area form needs it")
    power_limit_w: Power | None = si("power_limit", gt=0, default=None,
                                     description="board power limit the DVFS governor enforces; None: tdp")
    power: PowerModel | None = Field(None, description="board/leakage/clock power and the V-f curve; "
                                     "None: static power only, no DVFS")
    efficiency: GPUEfficiency
    sources: list[Source] = Field(default_factory=list)

    @model_validator(mode="after")
    @reads("l2", "sm", "energy", "node_nm", "static_power_w", "tdp_w", "sector_bytes", "infinity_cache", "power",
           "die_area_m2", "die_sm_count")
    def _consistency(self) -> GPUDevice:
        if self.l2.size_bytes <= self.sm.l1.size_bytes:
            raise ValueError("l2.size must be larger than sm.l1.size")
        if self.energy.node_nm != self.node_nm:
            raise ValueError(f"energy.node_nm {self.energy.node_nm} differs from node_nm {self.node_nm}")
        if self.static_power_w > self.tdp_w:
            raise ValueError("static_power exceeds tdp")
        if self.l2.line_bytes % self.sector_bytes:
            raise ValueError(f"l2.line_size {self.l2.line_bytes} is not a multiple of sector_bytes {self.sector_bytes}")
        if self.infinity_cache is not None and self.infinity_cache.size_bytes <= self.l2.size_bytes:
            raise ValueError("infinity_cache.size must be larger than l2.size")
        if self.power is not None and self.power.area_form and (self.die_area_m2 is None or self.die_sm_count is None):
            raise ValueError("the power model's area terms need die_area and die_sm_count")
        return self

    @property
    def effective_power_limit_w(self) -> float:
        """The enforced board power limit (W): ``power_limit`` if given, else ``tdp``."""
        return self.power_limit_w if self.power_limit_w is not None else self.tdp_w

    @property
    def tensor_clock(self) -> float:
        """Clock of the Tensor Core peaks (Hz): ``tensor_clock`` if given, else ``clock``."""
        return self.tensor_clock_hz if self.tensor_clock_hz is not None else self.clock_hz

    @property
    def cuda_cores(self) -> int:
        """Total fp32 lanes: SMs x CUDA cores per SM."""
        return self.sm_count * self.sm.cuda_cores

    def peak_flop_per_s(self, precision: str = "fp32", unit: Literal["vector", "tensor"] = "vector") -> float:
        """Dense peak FLOP/s on the CUDA cores (``vector``) or Tensor Cores (``tensor``); 0 if none."""
        if unit == "tensor":
            if self.tensor_core is None:
                return 0.0
            per_sm = self.tensor_core.flop_per_cycle_per_sm.get(precision, 0)  # type: ignore[call-overload]
            return self.sm_count * self.tensor_clock * per_sm
        else:
            per_sm = 2 * self.sm.fma_lanes.get(precision, 0)  # type: ignore[call-overload]
        return self.sm_count * self.clock_hz * per_sm

    def best_peak_flop_per_s(self, precision: str) -> float:
        """The higher of the Tensor Core and CUDA-core peaks for ``precision``."""
        return max(self.peak_flop_per_s(precision, "tensor"), self.peak_flop_per_s(precision, "vector"))

    @property
    def dram_bandwidth_bytes_per_s(self) -> float:
        """Peak device-memory bandwidth (B/s)."""
        return self.dram.bandwidth_bytes_per_s

    def ridge_point(self, precision: str = "fp32") -> float:
        """FLOP per DRAM byte where the peak roofline turns compute-bound."""
        return self.best_peak_flop_per_s(precision) / self.dram_bandwidth_bytes_per_s
