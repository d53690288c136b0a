"""Software profiles: the stack between a model and the device, as a typed, sourced model.

archsim's cost model prices the device's work; what users time is the device plus the software that
drives it. A :class:`SoftwareProfile` describes that software:

* **host work** per framework operator (the framework's dispatcher and the operator's first launch),
  per further kernel the operator's library launches (the launch API call alone: cuDNN's layout
  transposes, Winograd's transforms, a split-K reduction) and per iteration (a Python training-loop
  step, a TF1 ``Session.run``, a ``cudaGraphLaunch``), counted in *instructions* and priced on the
  system's host CPU model:
  ``seconds = instructions / (min(host_ipc, issue_width) x clock_hz)``, so a faster host dispatches
  faster (the instructions are the software's, the clock and issue width the host's);
* the **launch mode**: ``eager`` (one host dispatch per operator, overlapped with the kernels before it
  by the asynchronous queue) or ``graph`` (CUDA Graphs / a TensorRT engine: the kernels of an
  iteration are launched as one graph, host work per iteration only);
* **synchronisation**: whether each iteration ends with a device synchronisation, after which the
  host's per-iteration work cannot overlap the device;
* **operator fusion** rules (:mod:`archsim.software.fusion`): conv + batch norm + activation,
  GEMM epilogues, elementwise chains, attention -> fused attention;
* **algorithm selection** (``algorithm_selection``): ``"autotuned"``, the library times its
  candidate algorithms and keeps the fastest (``torch.backends.cudnn.benchmark = True``,
  cudnnFindConvolutionForwardAlgorithm, TensorFlow's autotuning, TensorRT's tactic timing), or
  ``"heuristic"``, it takes what cuDNN's heuristics return without timing (PyTorch's default
  ``benchmark = False``, cudnnGetConvolutionForwardAlgorithm_v7), modelled as the implicit
  precomputed GEMM for every convolution (see :data:`ALGORITHM_SELECTIONS`);
* the **tensor layout** (``channels_last``): whether the layout transforms around Tensor-Core
  convolutions are needed;
* a **precision policy** (:mod:`archsim.software.precision`): the dtype of matrix work (AMP fp16,
  int8) and which op kinds stay in fp32, plus the per-op host work of autocasting;
* the **input pipeline** (``data_loading``): the framework's data-loader workers per GPU and the host
  instructions one worker spends on one training sample (read, decode, augment), priced on the host
  CPU model like the dispatch work; the discrete-event engine runs them as loader workers on the
  host's cores (``archsim.InputPipeline.from_software``), shared by every GPU of the host;
* **kernel efficiency** of the framework's own kernels where they fall short of the tuned-library
  roofline archsim prices (e.g. TensorFlow 1.x's default CPU convolutions), per device role and op
  kind, each a named, sourced factor.

Profiles are TOML presets under ``models/software/`` (:func:`archsim.software.load_software`),
validated strictly (frozen, unknown keys are errors), each number with a ``[[sources]]`` entry.
``"none"`` is the device-only profile: today's behaviour, the default.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from archsim.hardware import CPUDevice
from archsim.hardware.base import Source

__all__ = ["SoftwareProfile", "FusionRules", "PrecisionPolicy", "KernelEfficiency", "Collectives", "DataLoading",
           "LAUNCH_MODES",
           "FUSION_RULES", "ALGORITHM_SELECTIONS"]

LAUNCH_MODES: tuple[str, ...] = ("none", "eager", "graph")
FUSION_RULES: tuple[str, ...] = ("conv_bn_act", "gemm_epilogue", "elementwise_chains", "attention")
ALGORITHM_SELECTIONS: tuple[str, ...] = ("autotuned", "heuristic")
"""How the convolution library picks a forward algorithm.

``"autotuned"`` (the default, archsim's behaviour before this field): per convolution, the faster of
implicit GEMM and, where it applies, Winograd, as cudnnFindConvolutionForwardAlgorithm does by timing
every candidate (cuDNN API reference; PyTorch ``torch.backends.cudnn.benchmark = True``; TensorFlow
1.x ``TF_CUDNN_USE_AUTOTUNE`` default on; ONNX Runtime CUDA EP ``cudnn_conv_algo_search`` default
EXHAUSTIVE). ``"heuristic"``: no timing. cudnnGetConvolutionForwardAlgorithm_v7 ranks the algorithms
"by expected (based on internal heuristic) relative performance"; NVIDIA does not publish that
ranking (ONNX Runtime CUDA EP docs quote that wording), so archsim models the documented
conservative choice, ``CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM`` for every forward
convolution: what ONNX Runtime's ``cudnn_conv_algo_search = DEFAULT`` runs (its docs: "the default
convolution algorithm"), and what DeepBench's conv_bench.cu sets without searching for int8 and for
Tensor-Core math (its comments: cuDNN supports only that algorithm there). It is never faster than
autotuning in archsim (the autotuned choice includes it). The GEMM tile inside the algorithm is
cuDNN's own choice in both modes (Find times algorithms, not tiles), so the tile search is unchanged.
"""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


class FusionRules(_Strict):
    """Which fusions the software performs (each a graph rewrite of :mod:`archsim.software.fusion`)."""

    conv_bn_act: bool = Field(False, description="inference conv -> batch norm -> activation [-> residual add] "
                                                 "into one convolution with an epilogue")
    gemm_epilogue: bool = Field(False, description="GEMM -> bias/activation into the GEMM's epilogue")
    elementwise_chains: bool = Field(False, description="chains of same-shape elementwise ops into one kernel")
    attention: bool = Field(False, description="unfused attention -> fused (FlashAttention-style) attention")

    @property
    def any(self) -> bool:
        """True when at least one rule is on."""
        return self.conv_bn_act or self.gemm_epilogue or self.elementwise_chains or self.attention


class PrecisionPolicy(_Strict):
    """Precision the software runs the model's ops in.

    ``matmul_dtype``: the dtype of convolutions, GEMMs and attention (``"as_model"`` keeps the
    graph's dtype; ``"fp16"``/``"bf16"`` is AMP autocast; ``"int8"`` a calibrated int8 engine);
    ``other_dtype``: the dtype of the remaining ops (``"as_model"`` or one dtype); ``keep_fp32``: op
    kinds that stay fp32 regardless (AMP's fp32 list: softmax, reductions, losses, optimizer
    updates). ``cast_instructions_per_op``: host work the precision layer adds to every dispatched op
    (autocast's dispatch key: a dtype check per op, a cast launch for the ops it recasts).
    ``allow_tf32``: convolutions, GEMMs and attention that run in fp32 take TF32 math (fp32 storage)
    on a GPU whose Tensor Cores have a tf32 rate, and stay fp32 elsewhere: PyTorch's
    ``torch.backends.cudnn.allow_tf32`` and ``torch.backends.cuda.matmul.allow_tf32`` (both True by
    default from PyTorch 1.7 to 1.11; from 1.12 the matmul flag defaults to False), cuBLAS's
    ``CUBLAS_COMPUTE_32F_FAST_TF32``.
    """

    matmul_dtype: Literal["as_model", "fp32", "tf32", "fp16", "bf16", "int8"] = "as_model"
    other_dtype: Literal["as_model", "fp32", "fp16", "bf16", "int8"] = "as_model"
    keep_fp32: tuple[str, ...] = ()
    cast_instructions_per_op: float = Field(0.0, ge=0)
    allow_tf32: bool = False


class KernelEfficiency(_Strict):
    """Fraction of archsim's (tuned-library) kernel rate the framework's own kernels reach, per op
    kind, on the GPU and on the host CPU (1 = the library kernel archsim prices; absent = 1)."""

    gpu: dict[str, float] = Field(default_factory=dict)
    host: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _range(self) -> KernelEfficiency:
        for role, table in (("gpu", self.gpu), ("host", self.host)):
            for kind, v in table.items():
                if not 0 < v <= 1:
                    raise ValueError(f"kernel_efficiency.{role}.{kind} must be in (0, 1], got {v}")
        return self

    def factor(self, role: str, kind: str) -> float:
        """The efficiency of ``kind`` on ``role`` (1 when the table has no entry)."""
        table = self.gpu if role == "gpu" else self.host if role == "host" else {}
        return float(table.get(kind, 1.0))


class Collectives(_Strict):
    """How the communication library runs a collective (NCCL): as GPU kernels beside the compute.

    ``sm_blocks``: thread blocks a ring all-reduce keeps resident per GPU (one per NCCL channel, each
    filling an SM); kernels that start while it runs get ``1 - sm_blocks / sm_count`` of the SMs.
    ``memory_bytes_per_byte``: device-memory bytes the kernels move per byte a rank sends (read
    the local chunk, read the received chunk, write the reduced one), drawn from the GPU's memory
    bandwidth beside the compute kernels. Both 0: the collective is link time only.
    """

    sm_blocks: int = Field(0, ge=0)
    memory_bytes_per_byte: float = Field(0.0, ge=0)


class DataLoading(_Strict):
    """The framework's training input pipeline on the host CPU (a PyTorch ``DataLoader``, DALI's CPU
    pipeline): ``workers_per_gpu`` worker processes (or threads) per training process, each preparing
    whole batches on one host core, ``sample_instructions`` host instructions per training sample
    (read, decode, augment, collate), priced like every host instruction count of the profile:
    ``seconds = sample_instructions / (min(host_ipc, issue_width) x clock_hz)``, so the same software
    prepares a sample faster on a faster host. ``prefetch_batches``: batches the loader queue holds
    per training process. ``main_threads``: host cores the training process's own thread holds for the
    whole run beside its workers (it dispatches the kernels and, under CUDA's default scheduling, spins
    while it waits for the device; 0: not modelled). ``workers_per_gpu = 0`` (the default): no input
    pipeline (device work only, data already on the host). :mod:`archsim.software.loader_cost` derives
    the PyTorch profiles' ``sample_instructions``.

    The workers and main threads of every GPU of a host share its cores (the engine's host core pool),
    so a host that feeds one GPU easily can starve eight: the data-parallel step cannot be shorter than
    ``batch x sample_s x gpus / min(workers_per_gpu x gpus, host cores - main_threads x gpus)``.
    """

    workers_per_gpu: int = Field(0, ge=0)
    sample_instructions: float = Field(0.0, ge=0)
    prefetch_batches: int = Field(2, ge=1)
    main_threads: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _both(self) -> DataLoading:
        if (self.workers_per_gpu > 0) != (self.sample_instructions > 0):
            raise ValueError("data_loading: give both workers_per_gpu and sample_instructions (> 0), or neither")
        if self.main_threads and not self.workers_per_gpu:
            raise ValueError("data_loading.main_threads needs an input pipeline (workers_per_gpu > 0)")
        return self

    @property
    def enabled(self) -> bool:
        """True when the profile describes an input pipeline."""
        return self.workers_per_gpu > 0


class SoftwareProfile(_Strict):
    """A framework or runtime: host work, launch mode, synchronisation, fusion, precision, kernels.

    Attributes:
        name: the preset id (``"pytorch-eager"``).
        description: what stack this is (framework, version, mode).
        launch_mode: ``"none"`` (device work only), ``"eager"`` or ``"graph"`` (see module doc).
        host_ipc: instructions per cycle the host sustains on framework code (interpreter and
            dispatcher code: branchy, cache-missing; capped by the core's issue width).
        op_dispatch_instructions: host instructions per framework operator (eager mode: the Python
            call, the dispatcher and the operator's first kernel launch), or per op on the host CPU.
        launch_api_instructions: host instructions of each further kernel one operator launches
            (eager mode): the launch API call alone (``cudaLaunchKernel`` from inside cuDNN or
            cuBLAS), not another pass through the framework.
        iteration_instructions: host instructions per iteration (the loop step around the model).
        sync_per_iteration: the iteration ends with a device synchronisation (``.item()``,
            ``torch.cuda.synchronize()``, ``Session.run`` returning numpy): the per-iteration host
            work is then serial with the device, not hidden behind it.
        algorithm_selection: ``"autotuned"`` or ``"heuristic"`` (:data:`ALGORITHM_SELECTIONS`): how
            the convolution library picks a forward algorithm; ``"heuristic"`` runs every forward
            convolution as implicit (precomputed) GEMM, never Winograd.
        channels_last: the framework keeps activations and filters in NHWC (PyTorch
            ``memory_format=torch.channels_last``, a TensorRT engine's chosen formats), so the
            Tensor-Core convolutions need no NCHW <-> NHWC transposes (the GPU model's
            ``efficiency.conv_nchw_transposes`` is off for the run); ``False``: the model's NCHW
            tensors, transposed as the device's library does.
        fusion, precision, kernel_efficiency, collectives, data_loading: see the classes.
        sources: where each number comes from (``fields`` name the profile's fields).
    """

    name: str = Field(min_length=1)
    description: str = ""
    launch_mode: Literal["none", "eager", "graph"]
    host_ipc: float = Field(1.0, gt=0)
    op_dispatch_instructions: float = Field(0.0, ge=0)
    launch_api_instructions: float = Field(0.0, ge=0)
    iteration_instructions: float = Field(0.0, ge=0)
    sync_per_iteration: bool = True
    algorithm_selection: Literal["autotuned", "heuristic"] = "autotuned"
    channels_last: bool = False
    fusion: FusionRules = FusionRules()
    precision: PrecisionPolicy = PrecisionPolicy()
    kernel_efficiency: KernelEfficiency = KernelEfficiency()
    collectives: Collectives = Collectives()
    data_loading: DataLoading = DataLoading()
    sources: list[Source] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> SoftwareProfile:
        if self.launch_mode == "none" and (self.op_dispatch_instructions or self.iteration_instructions
                                           or self.launch_api_instructions
                                           or self.precision.cast_instructions_per_op
                                           or self.data_loading.sample_instructions):
            raise ValueError("launch_mode 'none' is device work only: host instruction counts must be 0")
        if self.launch_mode == "graph" and (self.op_dispatch_instructions or self.precision.cast_instructions_per_op
                                            or self.launch_api_instructions):
            raise ValueError("launch_mode 'graph' launches an iteration's kernels as one graph: "
                             "op_dispatch_instructions and launch_api_instructions must be 0 (put the launch in "
                             "iteration_instructions)")
        return self

    @property
    def is_none(self) -> bool:
        """True for the device-only profile (today's behaviour: no host terms, no passes)."""
        return (self.launch_mode == "none" and not self.fusion.any and not self.channels_last
                and self.algorithm_selection == "autotuned"
                and self.precision == PrecisionPolicy() and self.kernel_efficiency == KernelEfficiency()
                and self.collectives == Collectives() and self.data_loading == DataLoading())

    @property
    def has_host_work(self) -> bool:
        """True when the profile prices any host work."""
        return self.launch_mode != "none"

    def host_rate_instructions_per_s(self, host: CPUDevice) -> float:
        """Instructions per second one host core runs framework code at: min(IPC, issue) x clock."""
        return min(self.host_ipc, float(host.core.issue_width)) * host.core.clock_hz

    def dispatch_s(self, host: CPUDevice) -> float:
        """Host seconds per framework operator (or per host-CPU op) on ``host``: the dispatch plus the
        precision policy's per-op host work (0 in graph mode)."""
        instructions = self.op_dispatch_instructions + self.precision.cast_instructions_per_op
        return instructions / self.host_rate_instructions_per_s(host)

    def launch_api_s(self, host: CPUDevice) -> float:
        """Host seconds of each kernel launch after an operator's first on ``host`` (the launch API
        call alone; 0 in graph mode)."""
        return self.launch_api_instructions / self.host_rate_instructions_per_s(host)

    def iteration_s(self, host: CPUDevice) -> float:
        """Host seconds of the per-iteration work on ``host``."""
        return self.iteration_instructions / self.host_rate_instructions_per_s(host)

    def sample_s(self, host: CPUDevice) -> float:
        """Host seconds one loader worker spends on one training sample on ``host`` (0 without an
        input pipeline)."""
        return self.data_loading.sample_instructions / self.host_rate_instructions_per_s(host)

    def __hash__(self) -> int:
        # Cost options (which carry the profile) key the engines' caches: hash the canonical dump.
        return hash(self.model_dump_json())
