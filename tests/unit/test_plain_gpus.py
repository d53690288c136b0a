"""``dispatch.plain_gpus`` is true exactly where ``resolve_device`` gives each point itself as its GPU."""

from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.cost import CostOptions
from archsim.cost.dispatch import plain_gpus, resolve_device
from archsim.engines.roofline import _Coster
from archsim.errors import EngineError
from archsim.hardware import GPUDevice

_GPU = archsim.load_preset("gpu/h100-sxm5-80gb")
_POINTS = {
    "gpu": _GPU,
    "gpu2": _GPU.model_copy(update={"sm_count": 100}),
    "cpu": archsim.load_preset("cpu/epyc-milan-7763"),
    "system": archsim.load_preset("system/h100-node"),
}


class _SubGPU(GPUDevice):
    pass


_POINTS["subclass"] = _SubGPU(**_GPU.model_dump())


def _each(hardware, kind, options):
    try:
        return [resolve_device(h, kind, options) for h in hardware]
    except EngineError:
        return None


@settings(max_examples=60)
@given(st.lists(st.sampled_from(sorted(_POINTS)), min_size=1, max_size=4),
       st.sampled_from([None, "gpu", "host"]), st.sampled_from(["gemm", "conv2d", "h2d"]))
def test_plain_gpus_agrees_with_resolve_device(names, device, kind):
    hardware = [_POINTS[n] for n in names]
    options = CostOptions(device=device)
    each = _each(hardware, kind, options)
    if plain_gpus(hardware, options) and kind != "h2d":
        assert each == [("gpu", h) for h in hardware]
        assert all(target is h for (_, target), h in zip(each, hardware, strict=True))


@settings(max_examples=60)
@given(st.lists(st.sampled_from(sorted(_POINTS)), min_size=1, max_size=4), st.sampled_from([None, "gpu", "host"]))
def test_coster_resolves_as_the_walk_over_points(names, device):
    from archsim.workload.ops import Gemm

    hardware = [_POINTS[n] for n in names]
    options = CostOptions(device=device)
    op = Gemm(64, 64, 64, "fp16")
    each = _each(hardware, op.kind, options)
    try:
        role, targets = _Coster(hardware, options)._resolve(op)
    except EngineError:
        assert each is None or len({r for r, _ in each}) != 1
        return
    assert each is not None
    assert [(role, t) for t in targets] == each
    assert all(t is want for t, (_, want) in zip(targets, each, strict=True))
