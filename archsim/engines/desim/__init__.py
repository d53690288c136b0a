"""Machinery of the discrete-event engine (:mod:`archsim.engines.des`): configuration, the fluid
bandwidth share, tasks and waves, the SimPy machine, collectives."""

from archsim.engines.desim.collective import ring_allreduce_bytes_per_rank, ring_allreduce_s
from archsim.engines.desim.config import DDP_BUCKET_BYTES, DataParallel, InputPipeline, PIMOffload
from archsim.engines.desim.fluid import FluidShare

__all__ = ["InputPipeline", "DataParallel", "PIMOffload", "DDP_BUCKET_BYTES", "FluidShare",
           "ring_allreduce_s", "ring_allreduce_bytes_per_rank"]
