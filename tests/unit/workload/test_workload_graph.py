"""OpGraph construction, validation, totals and the training-step transformation."""

import pytest

from archsim.errors import WorkloadError
from archsim.ops import Conv2d, Elementwise, Gemm, OptimizerStep, Pool
from archsim.workload import Edge, GraphBuilder, OpGraph, TensorSpec, training_step


def _mlp():
    b = GraphBuilder("tiny", batch=4)
    x = b.input((4, 8))
    h = b.add(Gemm(4, 16, 8, weight=True, bias=True, name="fc1"), x)
    h = b.add(Elementwise((4, 16), "relu", name="relu"), h)
    y = b.add(Gemm(4, 2, 16, weight=True, bias=True, name="fc2"), h)
    return b.build(), y


def test_builder_wires_edges_and_totals():
    g, y = _mlp()
    assert [op.name for op in g.ops] == ["fc1", "relu", "fc2"]
    assert g.predecessors(2) == (1,) and g.successors(0) == (1,)
    # params: 8*16 + 16 + 16*2 + 2 = 178
    assert g.param_count() == 178
    # FLOP: fc1 2*4*16*8 + 4*16 bias = 1088; relu 64; fc2 2*4*2*16 + 8 = 264
    assert g.total_flop() == 1088 + 64 + 264
    # activations: outputs 4*16 + 4*16 + 4*2 fp32
    assert g.activation_bytes() == (64 + 64 + 8) * 4
    assert y.shape == (4, 2)


def test_builder_rejects_shape_mismatch():
    b = GraphBuilder("bad")
    x = b.input((4, 9))
    with pytest.raises(WorkloadError, match="matches none of its inputs"):
        b.add(Gemm(4, 16, 8, weight=True), x)


def test_graph_validation_order_cycles_and_tensors():
    a, c = Elementwise(4, "relu", name="a"), Elementwise(4, "relu", name="c")
    with pytest.raises(WorkloadError, match="topological"):
        OpGraph("g", (a, c), (Edge(1, 0),))
    with pytest.raises(WorkloadError, match="cycle"):
        OpGraph.from_edges("g", [a, c], [Edge(0, 1), Edge(1, 0)])
    g = OpGraph.from_edges("g", [a, c], [Edge(1, 0)])
    assert [op.name for op in g.ops] == ["c", "a"]
    with pytest.raises(WorkloadError, match="does not match any input"):
        OpGraph("g", (a, Elementwise(5, "relu")), (Edge(0, 1, TensorSpec((4,))),))


def test_training_step_structure_and_three_x_rule():
    g, _ = _mlp()
    t = training_step(g, "sgd")
    assert t.training and len(t.phase_indices("update")) == 2
    bwd = [t.ops[i] for i in t.phase_indices("backward")]
    # reverse order: fc2's grads first, then relu, then fc1; fc1 reads the graph input, so its data
    # gradient (fc1.dX) is skipped, as frameworks do
    assert [o.name for o in bwd] == ["fc2.dX", "fc2.dW", "fc2.db", "relu.d0", "fc1.dW", "fc1.db"]
    assert t.param_count() == g.param_count()
    # matmul FLOP: backward is 2x forward, less the skipped fc1.dX (one product of fc1's size)
    fwd_mm = sum(o.flop_breakdown()["matmul"] for o in g.ops)
    fc1_mm = g.ops[0].flop_breakdown()["matmul"]
    assert sum(o.flop_breakdown()["matmul"] for o in bwd) == 2 * fwd_mm - fc1_mm
    # relu.d0 depends on fc2's dX and dW GEMMs and on relu's forward
    relu_bwd = t.phase_indices("backward")[3]
    assert set(t.predecessors(relu_bwd)) >= {1, 3, 4}
    with pytest.raises(WorkloadError, match="already"):
        training_step(t)


def test_training_step_accumulates_branch_gradients_and_fused_optimizer():
    b = GraphBuilder("res")
    x = b.input((1, 8, 8, 8))
    h = b.add(Conv2d(1, 8, 8, 8, 8, kernel=3, padding=1, name="c1"), x)
    r = b.add(Conv2d(1, 8, 8, 8, 8, kernel=3, padding=1, name="c2"), h)
    s = b.add(Elementwise((1, 8, 8, 8), "residual_add", name="add"), r, h)
    b.add(Pool(1, 8, 8, 8, kernel=8, mode="avg", name="gap"), s)
    g = b.build()
    t = training_step(g, "adam", fused_optimizer=True)
    names = [o.name for o in t.ops]
    assert "c1.grad_acc0" in names  # c1's output feeds c2 and the residual add
    steps = [o for o in t.ops if isinstance(o, OptimizerStep)]
    assert len(steps) == 1 and steps[0].params == 2 * 8 * 8 * 9
