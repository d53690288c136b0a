"""What one op costs on one device: the cost model both engines share.

``op_cost(op, device, options) -> OpCost`` (one point) and ``op_cost_arrays`` (many hardware
points) in :mod:`archsim.cost.dispatch`; the values between the steps in :mod:`archsim.cost.types`.
The steps, each a module:

* :mod:`~archsim.cost.traffic`: bytes per memory level (tiling and reuse under each capacity);
* :mod:`~archsim.cost.kernels`: kernel efficiency (tile catalogue, occupancy, waves, latency hiding);
* :mod:`~archsim.cost.gemm_search`: the compiled GEMM tile and split-K search;
* :mod:`~archsim.cost.params`: hardware points packed as parameter arrays;
* :mod:`~archsim.cost.gpu`, ``cpu``, ``pim``, ``link``: the per-device cost functions;
* :mod:`~archsim.cost.gpu_batch`: a graph's GPU ops of one kernel class stacked into one pass;
* :mod:`~archsim.cost.common`: op facts and kernel-sequence sums shared by the per-device modules.

This package imports the hardware and workload models, the energy ledger and the errors; it never
imports the engines that schedule its costs.
"""

from __future__ import annotations

from archsim._lazy import lazy_names

_LAZY: dict[str, str] = {
    **dict.fromkeys(("op_cost", "op_cost_arrays", "resolve_device", "host_dispatch_s", "host_launch_s", "role_params",
                     "is_link", "software_efficiency"), "archsim.cost.dispatch"),
    **dict.fromkeys(("OpCost", "Actions", "CostOptions", "CostArrays", "DEVICE_ROLES", "LINK_KINDS"),
                    "archsim.cost.types"),
}
"""Public names -> the module defining them, imported when a name is first used: importing one step
(``from archsim.cost import traffic``, or the compiled search alone) does not load every device's
cost model."""

__all__ = ["op_cost", "op_cost_arrays", "resolve_device", "host_dispatch_s", "host_launch_s",  # noqa: F822
           "role_params", "is_link", "software_efficiency",
           "OpCost", "Actions", "CostOptions", "CostArrays", "DEVICE_ROLES", "LINK_KINDS"]


__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY)
