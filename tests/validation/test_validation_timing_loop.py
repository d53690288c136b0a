"""The GPU timing loop's ordering, with a recording stand-in for the device (no CUDA needed)."""

from __future__ import annotations

import pytest

from validation.timing import TimingConfig, time_gpu


class Recorder:
    """Events stamped with a logical clock: each ``run`` advances it by 5, everything else by 1."""

    def __init__(self):
        self.log, self.clock = [], 0

    def event(self):
        rec = self

        class Ev:
            t = None

            def record(self):
                rec.clock += 1
                self.t = rec.clock
                rec.log.append("event")

        return Ev()

    def elapsed_s(self, s, e):
        return float(e.t - s.t)

    def synchronize(self):
        self.log.append("sync")

    def duplicate(self, d):
        return {k: f"{v}'" for k, v in d.items()}


def test_events_bracket_runs_only_with_flush_and_spin_outside():
    rec = Recorder()
    used = []

    def run(inp):
        rec.clock += 5
        rec.log.append("run")
        used.append(inp["x"])

    cfg = TimingConfig(target_s=0.0, min_reps=5, max_reps=5, warmup=1, batch=2, max_sets=3)
    t = time_gpu(
        run,
        {"x": "buf"},
        rec,
        "cold",
        working_set_bytes=100,
        l2_bytes=1000,
        cfg=cfg,
        spin_seconds=lambda s: rec.log.append("spin"),
        flush=lambda: rec.log.append("flush"),
    )
    # 100 B vs 2 x 1000 B cache: 3 sets (capped) cannot cover it -> flush between runs
    assert t.sets == 3 and t.flushed
    # each timed run: event(+1), run(+5), event(+1) -> elapsed 6 logical units, never a flush inside
    assert t.times_s == [pytest.approx(6.0)] * 5
    timed = rec.log[rec.log.index("sync") + 1 :]
    assert timed.count("spin") == 3  # batches of 2, 2, 1
    flushes = [i for i, x in enumerate(timed) if x == "flush"]
    assert len(flushes) == 5
    for i in flushes:
        assert timed[i + 1 : i + 4] == ["event", "run", "event"]
    assert used[1:] == ["buf", "buf'", "buf'", "buf", "buf'"]  # warm-up, then rotation over 3 sets


def test_warm_policy_keeps_one_set_and_never_flushes():
    rec = Recorder()
    cfg = TimingConfig(target_s=0.0, min_reps=3, max_reps=3, warmup=0, batch=8)
    t = time_gpu(
        lambda inp: None,
        {"x": "buf"},
        rec,
        "warm",
        100,
        1000,
        cfg,
        lambda s: None,
        lambda: pytest.fail("flushed a warm case"),
    )
    assert t.sets == 1 and not t.flushed and len(t.times_s) == 3
