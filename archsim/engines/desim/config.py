"""Typed configuration of the discrete-event engine: the input pipeline, data parallelism, PIM offload.

Each value is a frozen dataclass validated at construction; a bad field raises
:class:`~archsim.errors.EngineError` naming the field and what is allowed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from archsim.errors import EngineError

__all__ = ["InputPipeline", "DataParallel", "PIMOffload", "DDP_BUCKET_BYTES"]

DDP_BUCKET_BYTES = 25 * 2**20
"""Gradient bucket of PyTorch DistributedDataParallel (``bucket_cap_mb=25``, MiB as implemented)."""


def _positive_int(owner: str, field: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EngineError(f"{owner}.{field} must be an int >= 1, got {value!r}")


@dataclass(frozen=True)
class InputPipeline:
    """A data-loading / preprocessing stage on the host CPU feeding a training loop.

    As in PyTorch's ``DataLoader``, each of ``cores`` workers prepares whole batches (one host core
    each, taken from the host's cores, so workers contend with host ops) and puts them in a queue of
    ``prefetch_depth`` batches; the device step takes the next batch from the queue.

    Attributes:
        cores: worker processes (one core each).
        batch: samples per batch.
        prefetch_depth: batches the queue holds (PyTorch: ``num_workers x prefetch_factor``).
        seconds_per_sample: host time to load and preprocess one sample on one core, in s; or
        preprocess: an op describing the preprocessing of one sample, costed on one host core with
            the same cost function as every other op (give exactly one of the two).
        sample_bytes: bytes of one prepared sample copied host -> device before the step (0: no copy).
        main_threads: host cores the training process itself holds for the whole run, beside its
            workers (its main thread dispatching kernels and waiting for the device; one per GPU
            under ``data_parallel``); 0 (the default): the training process takes no host core.
    """

    cores: int
    batch: int
    prefetch_depth: int = 2
    seconds_per_sample: float | None = None
    preprocess: Any = None
    sample_bytes: float = 0.0
    main_threads: int = 0

    def __post_init__(self) -> None:
        _positive_int("InputPipeline", "cores", self.cores)
        m = self.main_threads
        if isinstance(m, bool) or not isinstance(m, int) or m < 0:
            raise EngineError(f"InputPipeline.main_threads must be an int >= 0, got {m!r}")
        _positive_int("InputPipeline", "batch", self.batch)
        _positive_int("InputPipeline", "prefetch_depth", self.prefetch_depth)
        if (self.seconds_per_sample is None) == (self.preprocess is None):
            raise EngineError("InputPipeline: give exactly one of seconds_per_sample (s) or preprocess (an op)")
        if self.seconds_per_sample is not None:
            s = self.seconds_per_sample
            if isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s) or s < 0:
                raise EngineError(f"InputPipeline.seconds_per_sample must be a finite float >= 0 (s), got {s!r}")
        elif not isinstance(getattr(self.preprocess, "kind", None), str):
            raise EngineError(f"InputPipeline.preprocess must be an archsim op, got {type(self.preprocess).__name__}")
        b = self.sample_bytes
        if isinstance(b, bool) or not isinstance(b, int | float) or not math.isfinite(b) or b < 0:
            raise EngineError(f"InputPipeline.sample_bytes must be a finite number >= 0 (bytes), got {b!r}")

    @classmethod
    def from_software(cls, software: Any, host: Any, batch: int, sample_bytes: float = 0.0) -> InputPipeline:
        """The input pipeline of one training process as ``software`` runs it on ``host``.

        ``software``: a :class:`~archsim.software.SoftwareProfile` with ``data_loading`` (workers per
        GPU, host instructions per sample); ``host``: the CPUDevice that prices the instructions (the
        System's host); ``batch``: samples per batch of one GPU; ``sample_bytes``: bytes of one prepared
        sample copied host -> device. Pass the result as ``loader=``: under ``data_parallel`` every
        GPU gets these workers and the profile's ``main_threads``, and they share the host's cores.
        """
        dl = getattr(software, "data_loading", None)
        if dl is None or not dl.enabled:
            name = getattr(software, "name", type(software).__name__)
            raise EngineError(f"InputPipeline.from_software: software profile {name!r} has no data_loading "
                              "(workers_per_gpu and sample_instructions are 0)")
        return cls(cores=dl.workers_per_gpu, batch=batch, prefetch_depth=dl.prefetch_batches,
                   seconds_per_sample=software.sample_s(host), sample_bytes=sample_bytes,
                   main_threads=dl.main_threads)


@dataclass(frozen=True)
class DataParallel:
    """Data-parallel training over ``gpus`` GPUs of a System, with a ring all-reduce of gradients.

    Every GPU runs the whole graph (its own batch). Gradients are all-reduced in buckets, as in
    PyTorch DDP (Li et al., "PyTorch Distributed", VLDB 2020): parameters are bucketed in the order
    their gradients become ready (last layer first) up to ``bucket_bytes``; a bucket's all-reduce
    starts when every GPU has produced its gradients, buckets go one at a time over the GPU link,
    and an update op waits for the bucket holding its parameters. ``bucket_bytes=None`` is one
    bucket after the whole backward pass (no overlap of communication with backward compute).
    """

    gpus: int
    bucket_bytes: float | None = DDP_BUCKET_BYTES

    def __post_init__(self) -> None:
        _positive_int("DataParallel", "gpus", self.gpus)
        b = self.bucket_bytes
        if b is not None and (isinstance(b, bool) or not isinstance(b, int | float) or not b > 0):
            raise EngineError(f"DataParallel.bucket_bytes must be > 0 (bytes) or None, got {b!r}")


@dataclass(frozen=True)
class PIMOffload:
    """Which ops run on the System's PIM device instead of the compute device, and how the host waits.

    An op is offloaded when its kind is in ``kinds`` or its label is in ``names``. Its parameters
    stay resident in the PIM memory (placed once, before the run); its other inputs and its outputs
    cross the PIM device's host link on every call (host -> PIM, kernel, PIM -> host).

    Attributes:
        kinds: op kinds to offload (``("gemv",)``).
        names: op labels to offload.
        host_waits: ``True``: the issuing host thread blocks (one core held) until the PIM op
            returns, so nothing else on its stream runs meanwhile; ``False``: offloaded ops queue on
            the PIM and the host goes on with every op that does not depend on them (overlap).
    """

    kinds: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    host_waits: bool = True

    def __post_init__(self) -> None:
        for field in ("kinds", "names"):
            value = getattr(self, field)
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise EngineError(f"PIMOffload.{field} must be a tuple of strings, got {value!r}")
            value = tuple(value)
            if not all(isinstance(v, str) and v for v in value):
                raise EngineError(f"PIMOffload.{field} must hold non-empty strings, got {value!r}")
            object.__setattr__(self, field, value)
        if not self.kinds and not self.names:
            raise EngineError("PIMOffload: give at least one op kind (kinds=) or op label (names=) to offload")
        if not isinstance(self.host_waits, bool):
            raise EngineError(f"PIMOffload.host_waits must be True or False, got {self.host_waits!r}")

    def selects(self, op: Any) -> bool:
        """True when ``op`` is offloaded."""
        return op.kind in self.kinds or op.label in self.names
