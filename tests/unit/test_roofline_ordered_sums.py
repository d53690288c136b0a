"""The compiled running sums of the roofline engine equal numpy's adds in op order, to the bit."""

import functools

import numpy as np
import pytest
from bit_compare import assert_same, same_bits
from hypothesis import given
from hypothesis import strategies as st

import archsim
from archsim.cost import CostOptions
from archsim.engines import roofline
from archsim.engines.ordered_sums import SLOTS, chained_sums, gathered_sums

_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64) | st.sampled_from([0.0, -0.0, 5e-324, -5e-324])


def _rows(draw, count: int, n: int) -> list[np.ndarray]:
    values = draw(st.lists(_FLOATS, min_size=count * n, max_size=count * n))
    return list(np.array(values, dtype=np.float64).reshape(count, n))


@st.composite
def _tables(draw):
    """(candidate rows per output, summand order, zero_start): up to three outputs sharing an order
    over up to 2.5 x SLOTS distinct rows (several compiled runs), a few points."""
    n = draw(st.integers(1, 5))
    count = draw(st.sampled_from([1, 3, SLOTS - 1, SLOTS, SLOTS + 1, 2 * SLOTS + 30]))
    outputs = draw(st.integers(1, 3))
    rows = [_rows(draw, count, n) for _ in range(outputs)]
    order = draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=3 * count + 5))
    return rows, order, draw(st.booleans())


@given(_tables())
def test_gathered_sums_equal_numpy_adds_in_order(table):
    rows, order, zero_start = table
    got = gathered_sums(rows, order, zero_start=zero_start)
    assert got is not None and len(got) == len(rows)
    assert all(a.base is None and a.shape == rows[0][0].shape for a in got)  # arrays of their own
    for k, candidates in enumerate(rows):
        summands = [candidates[i] for i in order]
        start = [np.zeros(len(summands[0]))] if zero_start else []
        with np.errstate(all="ignore"):
            want = functools.reduce(np.add, start + summands) if len(start + summands) > 1 else summands[0].copy()
        assert same_bits(got[k], want)


@given(st.sampled_from([1, 4, 3000, 9000]), st.lists(st.integers(0, 4), min_size=0, max_size=2 * SLOTS + 3),
       st.data())
def test_chained_sums_equal_numpy_adds_from_zero(n, counts, data):
    # Points enough for one sum a block too (9,000 points: 72 kB a sum).
    with np.errstate(all="ignore"):
        rows = [list(np.array(data.draw(st.lists(_FLOATS, min_size=c, max_size=c)), dtype=np.float64)[:, None]
                     * np.linspace(-2.0, 3.0, n)) for c in counts]
    got = chained_sums(rows, n)
    assert got is not None and len(got) == len(rows) and all(a.shape == (n,) for a in got)
    for k, group in enumerate(rows):
        with np.errstate(all="ignore"):
            assert same_bits(got[k], functools.reduce(np.add, group, np.zeros(n)))


def test_rows_the_compiled_pass_cannot_read_are_refused():
    good = [np.arange(4.0), np.arange(4.0) + 1]
    readonly = np.arange(4.0)
    readonly.flags.writeable = False
    for bad in (readonly, np.arange(4, dtype=np.float32), np.arange(3.0), np.arange(8.0)[::2]):
        assert gathered_sums([[good[0], bad]], [0, 1]) is None
        assert chained_sums([[good[0], bad]], 4) is None
    assert gathered_sums([[np.float64(1.0), good[0]]], [0, 1]) is None
    with pytest.raises(ValueError):
        gathered_sums([good], [])


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("model", ["resnet50_train", "mlp_system"])
def test_compiled_run_equals_the_numpy_run(model, overlap):
    # More distinct costs than slots (a training graph), and components some ops lack (Tensor-Core
    # operand energy on a System): the same latency and energy sums either way.
    if model == "resnet50_train":
        graph = archsim.zoo.resnet50(batch=2, dtype="fp32", training=True)
        gpu = archsim.load_preset("gpu/v100-sxm2-16gb")
        hardware = [gpu.model_copy(update={"sm_count": s}) for s in (40, 60, 80)]
    else:
        graph = archsim.zoo.get("mlp", batch=8)
        hardware = [archsim.load_preset("system/dgx-a100")] * 3
    plain = roofline._run(graph, hardware, CostOptions(), overlap)
    compiled = roofline._run(graph, hardware, CostOptions(), overlap, compiled=True)
    distinct, order = compiled[5]
    assert roofline._ordered_totals(compiled[1], distinct, order) is not None
    assert roofline._ordered_flop(distinct, order, len(hardware)) is not None
    assert len(distinct) > SLOTS or any(len(c.energy_breakdown_j) != len(distinct[0].energy_breakdown_j)
                                        for c in distinct)
    assert_same(list(plain[2]), list(compiled[2]))
    assert list(plain[3]) == list(compiled[3])
    for k in plain[3]:
        assert_same(plain[3][k], compiled[3][k], k)


def test_many_columns_flop_equals_the_numpy_sum():
    graph = archsim.zoo.resnet50(batch=2, dtype="fp16")
    gpu = archsim.load_preset("gpu/v100-sxm2-16gb")
    hardware = [gpu.model_copy(update={"sm_count": s}) for s in (40, 80)]
    _, costs, _, _, _, distinct = roofline._run(graph, hardware, CostOptions(), False, compiled=True)
    flops = {id(c): c.flop_executed() if c.flop_by_unit else np.full(len(hardware), c.flop) for c in costs}
    want = functools.reduce(np.add, [flops[id(c)] for c in costs], np.zeros(len(hardware)))
    assert_same(roofline._ordered_flop(*distinct, len(hardware)), want)
    assert_same(roofline.many_columns(graph, hardware, CostOptions())["flop"], want)


def test_an_ops_kept_cost_key_is_its_fresh_key_and_leaves_the_op_alone():
    import dataclasses
    import pickle

    op = archsim.zoo.resnet18(batch=2, dtype="fp16").ops[0]
    twin = dataclasses.replace(op, name="twin")
    key = roofline._op_key(op)
    assert roofline._op_key(op) is key  # kept on the op
    assert key == roofline._op_key(twin) == (type(op), roofline._cost_fields(type(op))(op))
    assert op == dataclasses.replace(op) and repr(op) == repr(dataclasses.replace(op))
    assert hash(op) == hash(dataclasses.replace(op))
    assert roofline._op_key(pickle.loads(pickle.dumps(op))) == key


def test_many_columns_with_the_compiled_sums_equal_numpys(monkeypatch):
    # The first call of a process sums with numpy (the module loads after it), later ones compiled.
    graph = archsim.zoo.bert_base(batch=2, dtype="fp16")
    gpu = archsim.load_preset("gpu/v100-sxm2-16gb")
    hardware = [gpu.model_copy(update={"sm_count": s}) for s in (40, 64, 80)]
    compiled = roofline.many_columns(graph, hardware, CostOptions())
    monkeypatch.setattr(roofline, "_ordered_totals", lambda *args: None)
    monkeypatch.setattr(roofline, "_ordered_flop", lambda *args: None)
    assert_same(roofline.many_columns(graph, hardware, CostOptions()), compiled)


def test_a_single_estimate_leaves_the_compiled_sums_unloaded():
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, archsim\n"
            "gpu = archsim.load_preset('gpu/v100-sxm2-16gb')\n"
            "archsim.estimate(archsim.zoo.resnet18(batch=2, dtype='fp16'), gpu)\n"
            "archsim.estimate(archsim.zoo.resnet18(batch=2, dtype='fp16'), gpu, overlap=True)\n"
            "print('archsim.engines.ordered_sums' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(archsim.__file__).parents[1])}).stdout
    assert out.strip() == "False"
