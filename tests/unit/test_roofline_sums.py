"""The roofline engine's graph sums and op lists equal their general walks to the bit."""

from bit_compare import same_bits
from hypothesis import given
from hypothesis import strategies as st

from archsim.engines.roofline import _summed, work_ops
from archsim.workload import zoo

_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)



_KEYS = st.sampled_from(["compute", "register", "l1", "l2", "dram", "static"])


@given(st.lists(st.dictionaries(_KEYS, _FLOATS, min_size=1), min_size=1, max_size=6), st.booleans())
def test_summed_breakdowns_equal_the_walk_over_ops(dicts, shared_layout):
    # The graph's energy breakdown: each key's values added in op order, keys by first appearance.
    if shared_layout:  # every op with the first op's keys in its order (the usual graph), some dicts shared
        dicts = [{k: d.get(k, 0.5) for k in dicts[0]} for d in dicts] + [dicts[0]]
    want: dict[str, float] = {}
    for d in dicts:
        for k, v in d.items():
            want[k] = want[k] + v if k in want else v
    got = _summed(dicts)
    assert list(got) == list(want)
    assert all(same_bits(got[k], want[k]) for k in want)


def test_work_ops_without_predecessors_gives_the_same_ops_and_name():
    g = zoo.resnet18(batch=2, dtype="fp16")
    ops, preds, name = work_ops(g)
    assert work_ops(g, predecessors=False) == (ops, [], name)
    assert len(preds) == len(ops) and preds[0] == ()


def test_estimate_many_names_the_kinds_of_mixed_hardware():
    # Points of two kinds are refused, each named by its kind (or, without one, its class name).
    import pytest

    import archsim
    from archsim.cost import CostOptions
    from archsim.engines.roofline import estimate_many
    from archsim.errors import EngineError
    from archsim.workload.ops import Gemm

    class Bare:  # a point without a kind
        pass

    gpu, cpu = archsim.load_preset("gpu/v100-sxm2-16gb"), archsim.load_preset("cpu/epyc-milan-7763")
    with pytest.raises(EngineError, match=r"one kind, got \['cpu', 'gpu'\]"):
        estimate_many(Gemm(64, 64, 64, "fp32"), [gpu, cpu], CostOptions())
    with pytest.raises(EngineError, match=r"one kind, got \['Bare', 'gpu'\]"):
        estimate_many(Gemm(64, 64, 64, "fp32"), [gpu, Bare()], CostOptions())
