"""A system: a host CPU, optionally N identical GPUs and a PIM device, and the links between them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from archsim.hardware.base import HardwareModel, Source, reads
from archsim.hardware.cpu import CPUDevice
from archsim.hardware.gpu import GPUDevice
from archsim.hardware.memory import Link
from archsim.hardware.pim import PIMDevice


class System(HardwareModel):
    """Host + accelerators. ``host_link`` joins the host to each GPU (e.g. PCIe 4.0 x16 per GPU);
    ``gpu_link`` joins GPUs (NVLink, per-GPU bandwidth) for collectives."""

    kind: Literal["system"] = "system"
    name: str = Field(min_length=1)
    host: CPUDevice
    gpu: GPUDevice | None = None
    gpu_count: int = Field(0, ge=0)
    pim: PIMDevice | None = None
    host_link: Link | None = None
    gpu_link: Link | None = None
    sources: list[Source] = Field(default_factory=list)

    @model_validator(mode="after")
    @reads("gpu", "gpu_count", "host_link", "gpu_link")
    def _wiring(self) -> System:
        if self.gpu is None and self.gpu_count:
            raise ValueError(f"gpu_count is {self.gpu_count} but no [gpu] is given")
        if self.gpu is not None:
            if self.gpu_count < 1:
                raise ValueError("a [gpu] is given: gpu_count must be >= 1")
            if self.host_link is None:
                raise ValueError("a system with a GPU needs a host_link (e.g. PCIe)")
            if self.gpu_count > 1 and self.gpu_link is None:
                raise ValueError("gpu_count > 1 needs a gpu_link for collectives (NVLink or PCIe)")
        return self


Device = Annotated[CPUDevice | GPUDevice | PIMDevice, Field(discriminator="kind")]
"""Any single device, discriminated by ``kind``."""

Hardware = Annotated[CPUDevice | GPUDevice | PIMDevice | System, Field(discriminator="kind")]
"""A device or a system: what :func:`archsim.estimate` accepts."""
