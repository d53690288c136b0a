"""``estimate_many``'s frame from one block, the graph's energy arrays read column by column, and a
convolution's transposes summed once for both of its candidates: each equal to the general path."""


import numpy as np
import pandas as pd
from bit_compare import assert_same, same_bits
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from archsim.cost.common import sum_costs
from archsim.cost.types import CostArrays
from archsim.engines.roofline import columns_frame

_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
_KEYS = ["compute", "register", "l2", "dram", "static", "leakage"]


def _cost(draw, h: int, keys: list[str], units: list[str], dispatch: bool = True) -> CostArrays:
    def arr():
        return draw(hnp.arrays(np.float64, h, elements=_FLOATS))

    def d(names):
        return {k: arr() for k in names}

    return CostArrays.from_fields(dict(
        kind="conv2d", device="gpu", flop=draw(_FLOATS), latency_s=arr(), time_by_unit_s=d(["compute", "overhead"]),
        bytes_by_level=d(["l2", "dram"]), flop_by_unit=d(units), read_bytes=d(["dram"]), write_bytes=d(["l2", "dram"]),
        dram_activations=arr(), link_bytes=arr(), overhead_s=arr(), launches=arr(), energy_breakdown_j=d(keys),
        static_power_w=arr(), extra=d(["blocks"]), dispatch_s=arr() if dispatch else None))


@given(st.integers(1, 6).flatmap(lambda h: st.lists(hnp.arrays(np.float64, h, elements=_FLOATS), min_size=1,
                                                    max_size=6)))
def test_frame_from_one_block_equals_pandas_frame_of_the_dict(arrays):
    columns = {f"c{i}": a for i, a in enumerate(arrays)}
    want = pd.DataFrame(columns)
    want.index.name = "point"
    got = columns_frame(columns)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.columns.dtype == want.columns.dtype and got.index.name == "point"
    assert all(same_bits(got[c].to_numpy(), want[c].to_numpy()) for c in columns)


def test_frame_of_columns_of_other_types_is_pandas_own():
    columns = {"a": np.array([1.0, 2.0]), "b": np.array([1, 2])}
    want = pd.DataFrame(columns)
    want.index.name = "point"
    pd.testing.assert_frame_equal(columns_frame(columns), want, check_exact=True)


@st.composite
def _kernels(draw):
    h = draw(st.integers(1, 4))
    parts = []
    for _ in range(draw(st.integers(2, 4))):
        keys = draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=4, unique=True))
        parts.append(_cost(draw, h, keys, draw(st.sampled_from([[], ["vector"], ["tensor:fp16", "vector"]])),
                           dispatch=draw(st.booleans())))
    return parts


@given(_kernels())
def test_transposes_summed_once_give_the_sum_of_every_kernel(parts):
    # gpu_batch's convolution with a Winograd candidate: (t1 + t2) + main, the transposes' sum shared.
    *transfers, main = parts
    with np.errstate(all="ignore"):
        want = sum_costs(parts, "conv2d", 5.0)
        got = sum_costs([sum_costs(transfers, "conv2d", 5.0), main], "conv2d", 5.0)
    assert_same(got, want)


@given(st.integers(1, 3).flatmap(lambda h: st.lists(st.builds(lambda keys, shared: (keys, shared),
                                                              st.permutations(_KEYS[:3]), st.booleans()),
                                                    min_size=1, max_size=6).map(lambda spec: (h, spec))))
def test_energy_columns_equal_the_walk_over_ops(case):
    # The graph's energy arrays key by key in op order: most ops share the first op's key order (and
    # equal ops one dict); an op with another order (or keys) takes the walk.
    from archsim.engines.roofline import _energy_columns

    h, spec = case
    first = {k: np.full(h, float(i)) for i, k in enumerate(spec[0][0])}
    costs = []
    for keys, shared in spec:
        energy = first if shared else {k: np.full(h, float(len(costs))) for k in keys}
        costs.append(CostArrays.from_fields({**_fixed_cost().__dict__, "energy_breakdown_j": energy}))
    want: dict[str, list[np.ndarray]] = {}
    for c in costs:
        for k, v in c.energy_breakdown_j.items():
            want.setdefault(k, []).append(v)
    got = _energy_columns(costs)
    assert list(got) == list(want)
    assert all(len(got[k]) == len(want[k]) and all(a is b for a, b in zip(got[k], want[k], strict=True))
               for k in want)


def _fixed_cost() -> CostArrays:
    one = np.array([1.0, -0.0, 2.5])
    return CostArrays.from_fields(dict(
        kind="gemm", device="gpu", flop=3.0, latency_s=one, time_by_unit_s={"overhead": one}, bytes_by_level={},
        flop_by_unit={}, read_bytes={}, write_bytes={}, dram_activations=one, link_bytes=one, overhead_s=one,
        launches=one, energy_breakdown_j={"static": one}, static_power_w=one, extra={}, dispatch_s=None))
