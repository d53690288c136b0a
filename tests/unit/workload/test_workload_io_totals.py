"""Op facts kept on the op objects (io_totals)."""


def test_io_totals_are_kept_without_changing_the_op() -> None:
    # The sums are computed once per op object and kept outside the fields.
    import dataclasses

    from archsim.workload import zoo

    for op in zoo.resnet50(batch=2, dtype="fp16", training=True).ops[:40]:
        twin = dataclasses.replace(op)
        read, written = op.io_totals()
        assert (read, written) == (sum(t.bytes for t in op.inputs()), sum(t.bytes for t in op.outputs()))
        assert op.io_totals() is op.io_totals()
        assert op == twin and hash(op) == hash(twin) and repr(op) == repr(twin)
        assert op.min_bytes() == twin.min_bytes()
