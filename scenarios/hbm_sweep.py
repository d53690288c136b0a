"""HBM sweep: how do HBM bandwidth, SM count and L2 size trade latency against energy for BERT-large?

Question: for a BERT-large training step (batch 8, sequence 512, fp16 with Adam), which of the three
knobs a GPU architect turns (HBM bandwidth, SM count, L2 capacity) moves latency and energy most, and
what does the latency/energy Pareto front across the design space look like?

Presets: ``gpu/h200-sxm-141gb`` as the base; a Latin-hypercube sample (``archsim.Sweep``, sampler
``lhs``) over ``gpu.dram.bandwidth`` 1.2-4.8 TB/s (5 log-spaced levels; the H200's 96 HBM3E channels
at 6.25 GT/s carry at most 4.8 TB/s), ``gpu.sm_count`` 66/99/132 and ``gpu.l2.size`` 12.5-100 MiB;
roofline engine. ``gpu/v100-sxm2-16gb`` for the published comparison. Work: ``zoo.bert_large(batch=8,
seq_len=512, dtype="fp16", training=True)`` (batch 2, sequence 128 and 32 points in ``--smoke``).

Figures: ``pareto`` (every design point's latency and energy, coloured by SM count, with the Pareto
front), ``bandwidth`` (latency against HBM bandwidth, one line per SM count at the base L2) and
``sensitivity`` table (first-order Sobol' indices S1 by RBD-FAST, ``archsim.sweep.analysis``).

Published figures: Ivanov, Dryden, Ben-Nun, Li & Hoefler, "Data Movement Is All You Need: A Case
Study on Optimizing Transformers", MLSys 2021, Table 1 (BERT-large encoder layer, B=8, L=512, PyTorch on
a V100): tensor contractions 99.80% of FLOP and 61.0% of runtime, statistical normalizations 0.17% and
25.5%, element-wise operators 0.03% and 13.5%. The runtime shares are as recalled from that table; the
stored copies of the paper available here showed its abstract ("training has now become memory-bound")
but not the table, so they are only partly verified.
"""

from __future__ import annotations

if __name__ == "__main__":  # `python scenarios/x.py` puts scenarios/, not the repo root, on sys.path
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

import archsim
from archsim.sweep.analysis import pareto_front, sensitivity, to_wide
from scenarios.harness import Comparison, ScenarioOutput, main

NAME = "hbm_sweep"
BASE = "gpu/h200-sxm-141gb"
AXES = {
    "gpu.dram.bandwidth": {"from": "1.2 TB/s", "to": "4.8 TB/s", "num": 5, "scale": "log"},
    "gpu.sm_count": [66, 99, 132],
    "gpu.l2.size": ["12.5 MiB", "25 MiB", "50 MiB", "100 MiB"],
}
BW, SM, L2 = "gpu.dram.bandwidth_bytes_per_s", "gpu.sm_count", "gpu.l2.size_bytes"

IVANOV = ("Ivanov et al., Data Movement Is All You Need, MLSys 2021, Table 1 (BERT-large encoder layer, B=8, "
          "L=512, PyTorch, V100; recalled, partly verified)")
# Operator classes of Ivanov et al. sec. 2: tensor contractions (matmuls), statistical normalizations
# (softmax, layer norm) and element-wise operators (biases, dropout, activations, residuals; a bias's
# gradient is its column sum, our "reduce"). Embedding and optimizer ops are outside an encoder layer.
CLASS_OF_KIND = {"gemm": "tensor contraction", "attention": "tensor contraction", "layernorm": "normalization",
                 "softmax": "normalization", "elementwise": "element-wise", "reduce": "element-wise"}
PUBLISHED_RUNTIME_SHARE = {"tensor contraction": 0.610, "normalization": 0.255, "element-wise": 0.135}


def _class_shares(result: archsim.RunResult) -> dict[str, float]:
    frame = result.to_frame()
    frame = frame[frame["kind"].isin(CLASS_OF_KIND)]
    by_class = frame.groupby(frame["kind"].map(CLASS_OF_KIND))["latency_s"].sum()
    return {c: float(by_class.get(c, 0.0) / by_class.sum()) for c in PUBLISHED_RUNTIME_SHARE}


def run(smoke: bool) -> ScenarioOutput:
    """Latency/energy Pareto front and sensitivity of BERT-large training over HBM bandwidth, SMs and L2."""
    batch, seq, n = (2, 128, 32) if smoke else (8, 512, 128)
    graph = archsim.zoo.bert_large(batch=batch, seq_len=seq, dtype="fp16", training=True)
    base = archsim.load_preset(BASE)
    sweep = archsim.Sweep(base, axes=AXES, sampler="lhs", n=n, seed=0)
    table = to_wide(sweep.run(graph, executor="serial"))
    ok = table[table["status"] == "ok"]
    front = pareto_front(ok, {"latency_s": "min", "energy_j": "min"})
    # Designs that differ only in L2 size can tie exactly; count distinct (latency, energy) outcomes.
    distinct_front = len(front[["latency_s", "energy_j"]].round(12).drop_duplicates())
    sens_lat = sensitivity(ok, "latency_s", inputs=[BW, SM, L2], seed=0)
    sens_en = sensitivity(ok, "energy_j", inputs=[BW, SM, L2], seed=0)
    sens = pd.concat([sens_lat.assign(output="latency_s"), sens_en.assign(output="energy_j")], ignore_index=True)

    # Latency against bandwidth at every SM count: a grid at the base L2 (50 MiB), for the line plot.
    lines = to_wide(archsim.Sweep(base, axes={k: v for k, v in AXES.items() if k != "gpu.l2.size"}).run(
        graph, executor="serial"))

    v100 = archsim.estimate(archsim.zoo.bert_large(batch=8, seq_len=512, dtype="fp16", training=True),
                            archsim.load_preset("gpu/v100-sxm2-16gb"))
    shares = _class_shares(v100)
    comparisons = [Comparison(f"V100 BERT-large runtime share: {c}", shares[c], PUBLISHED_RUNTIME_SHARE[c],
                              "fraction", IVANOV) for c in PUBLISHED_RUNTIME_SHARE]
    s1 = dict(zip(sens_lat["input"], sens_lat["S1"], strict=True))
    comparisons.append(Comparison(
        "S1 of HBM bandwidth for latency", s1[BW], None, "S1", IVANOV + ": 'training has now become memory-bound'",
        claim="HBM bandwidth is the knob latency is most sensitive to", holds=bool(s1[BW] == max(s1.values()))))

    fastest = ok.loc[ok["latency_s"].idxmin()]
    slowest = ok.loc[ok["latency_s"].idxmax()]
    l2_effect = ok.groupby([BW, SM])["latency_s"].agg(lambda s: s.max() / s.min() - 1).max()
    summary: dict[str, float | int | str] = {
        "points": int(len(table)), "points_ok": int(len(ok)), "pareto_points": int(len(front)),
        "pareto_distinct_outcomes": int(distinct_front),
        "fastest_latency_s": float(fastest["latency_s"]), "fastest_energy_j": float(fastest["energy_j"]),
        "fastest_bandwidth_bytes_per_s": float(fastest[BW]), "fastest_sm_count": int(fastest[SM]),
        "slowest_latency_s": float(slowest["latency_s"]), "slowest_energy_j": float(slowest["energy_j"]),
        "latency_range_x": float(slowest["latency_s"] / fastest["latency_s"]),
        "max_latency_change_from_l2": float(l2_effect),
        "s1_latency_bandwidth": float(s1[BW]), "s1_latency_sm_count": float(s1[SM]),
        "s1_latency_l2_size": float(s1[L2]),
        "v100_latency_s": v100.latency_s,
    }
    summary.update({f"v100_share_{c.replace(' ', '_').replace('-', '_')}": v for c, v in shares.items()})

    figures = {
        "pareto": archsim.plot.pareto(ok[["latency_s", "energy_j", SM]], x="latency_s", y="energy_j", hue=SM),
        "bandwidth": archsim.plot.sweep_lines(lines, x=BW, y="latency_s", hue=SM, logx=True),
    }
    notes = [
        f"the Pareto front has {len(front)} point(s) with {distinct_front} distinct outcome(s): static power "
        "scales with the chip (leakage and clock network per SM, memory PHY power per unit of HBM bandwidth), "
        "so more SMs and more bandwidth buy latency with power; before the power model (issue 14) static power "
        "was a fixed device figure and the front collapsed to the single fastest design",
        f"L2 capacity changes latency by at most {l2_effect:.1%} at a fixed bandwidth and SM count: the traffic "
        "model finds BERT-large's GEMM tiles fit even the 12.5 MiB L2, and streaming ops gain nothing from L2",
        "archsim puts less time in normalizations than PyTorch did in 2020; a likely cause is that PyTorch's "
        "unfused softmax/layer-norm kernels ran below the bandwidth roof (Ivanov et al. fuse them and cut data "
        "movement by up to 22.91%), while archsim streams every such op at STREAM efficiency",
    ]
    return ScenarioOutput(summary=summary, tables={"sweep": table, "pareto_front": front, "sensitivity": sens,
                                                   "bandwidth_lines": lines},
                          figures=figures, comparisons=comparisons, notes=notes)


if __name__ == "__main__":
    raise SystemExit(main(run, NAME))
