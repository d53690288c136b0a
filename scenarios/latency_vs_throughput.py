"""Latency vs throughput: why CPUs and GPUs are built differently, shown on three loops.

Question: a CPU core spends its transistors on caches, branch prediction and out-of-order control to
finish one instruction stream fast (latency); a GPU spends them on thousands of simple ALUs and
hides latency with parallelism (throughput). Which wins, and why, on (1) a dependent scalar chain
(``s += x[i]`` without reassociation: every add waits for the previous one), (2) a branchy,
control-heavy loop (``if x[i] > 0: out[k++] = x[i]``, on sorted and on random data, with the core's
TAGE-like predictor and the simpler bimodal/gshare/perceptron ones), and (3) an embarrassingly
parallel elementwise kernel (STREAM triad ``a = b + s*c``), each from 4 Ki to 1 Mi elements (fp64)?

Presets: cpu/epyc-genoa-9654 (one Zen 4 core, simulated by archsim.microarch: the set-associative
cache hierarchy and branch-predictor simulators driven by the loops' traces, and the interval core
model; the whole 96-core socket by the roofline engine for the triad) and gpu/h100-sxm5-80gb (the
roofline engine on explicit kernel descriptions: the chain is one thread, the branchy loop a SIMT
compaction in which each warp executes both sides of the branch, the triad one thread per element).

Published figures: the FP add latency of Zen 4 (3 cycles; AMD Software Optimization Guide for
Family 19h, the value archsim's core model uses), which bounds the chain at 3 cycles per element;
chance level (50%) as the best any predictor can do on unbiased random branch outcomes; and the
DRAM bandwidth ratio H100 : EPYC 9654 (3.35 TB/s, NVIDIA H100 SXM datasheet; 12 x DDR5-4800 =
460.8 GB/s, AMD EPYC 9004 specifications) that bounds a streaming kernel's GPU speedup.

Figures: ``winner`` (main): time per kernel on one CPU core, the CPU socket (triad) and the GPU at
1 Mi elements (log scale); ``scaling``: time against the number of elements per kernel and device;
``predictors``: branch mispredictions per element of the branchy loop for each predictor.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

if __name__ == "__main__":  # run as `python scenarios/latency_vs_throughput.py`: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pandas as pd

import archsim
from archsim import ops
from archsim.microarch import core, traces
from scenarios.harness import Comparison, ScenarioOutput, main

NAME = "latency_vs_throughput"
CPU = "cpu/epyc-genoa-9654"
GPU = "gpu/h100-sxm5-80gb"
ZEN4_FADD_CYCLES = 3.0  # AMD Software Optimization Guide for AMD Family 19h processors (Zen 4): FADD latency
H100_DRAM_BYTES_PER_S = 3.35e12  # NVIDIA H100 Tensor Core GPU datasheet (SXM5)
GENOA_DRAM_BYTES_PER_S = 12 * 4800e6 * 8  # AMD EPYC 9004: 12 channels of DDR5-4800, 8 bytes per transfer
E = 8  # fp64 bytes
PREDICTORS = ("bimodal", "gshare", "perceptron", "tage")


def gpu_kernels(n: int, taken: int) -> dict[str, object]:
    """The three loops as GPU kernel descriptions (what each thread does, and the bytes it moves)."""
    blocks = max(1, -(-n // 256))
    return {
        # One dependent chain cannot be split across threads without reassociating the sum.
        "dependent chain": ops.Kernel(name="chain", dtype="fp64", flop_vector=n, dram_read_bytes=E * n,
                                      grid=1, block=1, working_set_bytes=E * n),
        # Compaction: compare, then a warp runs both sides of the divergent branch; a flag per element
        # is scanned (written and read, 4 B each) to find each kept element's slot.
        "branchy loop": ops.Kernel(name="compaction", dtype="fp64", flop_vector=3 * n,
                                   dram_read_bytes=E * n + 4 * n, dram_write_bytes=E * taken + 4 * n,
                                   grid=blocks, block=256, working_set_bytes=E * (n + taken) + 8 * n),
        "elementwise triad": ops.Kernel(name="triad", dtype="fp64", flop_vector=2 * n, dram_read_bytes=2 * E * n,
                                        dram_write_bytes=E * n, grid=blocks, block=256, working_set_bytes=3 * E * n),
    }


def run(smoke: bool) -> ScenarioOutput:
    """A dependent chain, a branchy loop and a triad on one CPU core and on a GPU."""
    cpu = archsim.load_preset(CPU)
    gpu = archsim.load_preset(GPU)
    model = core.CoreModel.from_device(cpu)
    sizes = (4096, 1 << 16) if smoke else (4096, 1 << 16, 1 << 20)
    rows = []
    for n in sizes:
        x = traces.branchy_data(n, False, 0)
        taken = int(np.count_nonzero(x > 0.0))
        cpu_kernels = {"dependent chain": traces.reduction(n), "branchy loop": traces.branchy(n, False, "store"),
                       "elementwise triad": traces.triad(n)}
        for name, kern in cpu_kernels.items():
            p = core.predict(kern, model)
            rows.append({"kernel": name, "n": n, "device": "1 CPU core (Zen 4)", "latency_s": p.time_s,
                         "bound": p.bound, "cycles_per_element": p.cycles / n,
                         "mispredicts_per_element": p.mispredictions / n})
        sorted_p = core.predict(traces.branchy(n, True, "store"), model)
        rows.append({"kernel": "branchy loop, sorted", "n": n, "device": "1 CPU core (Zen 4)",
                     "latency_s": sorted_p.time_s, "bound": sorted_p.bound,
                     "cycles_per_element": sorted_p.cycles / n,
                     "mispredicts_per_element": sorted_p.mispredictions / n})
        for name, kern in gpu_kernels(n, taken).items():
            r = archsim.estimate(kern, gpu)
            rows.append({"kernel": name, "n": n, "device": "H100", "latency_s": r.latency_s,
                         "bound": r.ops[0].bound, "cycles_per_element": np.nan, "mispredicts_per_element": np.nan})
        socket = archsim.estimate(gpu_kernels(n, taken)["elementwise triad"], cpu)
        rows.append({"kernel": "elementwise triad", "n": n, "device": "CPU socket (96 cores)",
                     "latency_s": socket.latency_s, "bound": socket.ops[0].bound, "cycles_per_element": np.nan,
                     "mispredicts_per_element": np.nan})
    table = pd.DataFrame(rows)

    n_pred = sizes[-1] if smoke else 1 << 16
    pred_rows = []
    for kind in PREDICTORS:
        m = dataclasses.replace(model, predictor=dataclasses.replace(model.predictor, kind=kind))
        for sorted_ in (True, False):
            p = core.predict(traces.branchy(n_pred, sorted_, "store"), m)
            pred_rows.append({"predictor": kind, "data": "sorted" if sorted_ else "random",
                              "mispredicts_per_element": p.mispredictions / n_pred, "latency_s": p.time_s})
    predictors = pd.DataFrame(pred_rows)

    big = table[table["n"] == max(sizes)].set_index(["kernel", "device"])
    winners = {}
    for kernel in ("dependent chain", "branchy loop", "elementwise triad"):
        sub = table[(table["kernel"] == kernel)]
        for n in sizes:
            at = sub[sub["n"] == n]
            winners[(kernel, n)] = at.loc[at["latency_s"].idxmin(), "device"]

    summary: dict[str, float | str] = {}
    for (kernel, device), r in big.iterrows():
        summary[f"latency_s[{kernel} | {device} | n={max(sizes)}]"] = float(r["latency_s"])
    for (kernel, n), device in winners.items():
        summary[f"winner[{kernel} | n={n}]"] = device
    for r in pred_rows:
        summary[f"mispredicts_per_element[{r['predictor']} | {r['data']}]"] = r["mispredicts_per_element"]

    chain_cpe = float(big.at[("dependent chain", "1 CPU core (Zen 4)"), "cycles_per_element"])
    tage_random = float(predictors.query("predictor == 'tage' and data == 'random'")["mispredicts_per_element"].iloc[0])
    triad_speedup = float(big.at[("elementwise triad", "CPU socket (96 cores)"), "latency_s"]
                          / big.at[("elementwise triad", "H100"), "latency_s"])
    bw_ratio = H100_DRAM_BYTES_PER_S / GENOA_DRAM_BYTES_PER_S
    comparisons = [
        Comparison("dependent chain on one Zen 4 core, cycles per element", chain_cpe, ZEN4_FADD_CYCLES, "cycles",
                   "AMD Software Optimization Guide for Family 19h (Zen 4): FADD latency 3 cycles"),
        Comparison("TAGE mispredictions per element on random data", tage_random, 0.5, "per element",
                   "chance level: an unbiased random branch outcome cannot be predicted better than 50%"),
        Comparison(f"triad H100 / 96-core EPYC 9654 speedup at n={max(sizes)}", triad_speedup, bw_ratio, "x",
                   "DRAM bandwidth ratio: NVIDIA H100 SXM datasheet 3.35 TB/s; AMD EPYC 9004, 12 x DDR5-4800"),
    ]
    def first_gpu_win(kernel: str) -> str:
        won = [n for n in sizes if winners[(kernel, n)] == "H100"]
        return f"from n = {won[0]}" if won else "at none of the sizes"

    ghz = model.core.clock_hz / 1e9
    sorted_ratio = float(big.at[("branchy loop", "1 CPU core (Zen 4)"), "latency_s"]
                         / big.at[("branchy loop, sorted", "1 CPU core (Zen 4)"), "latency_s"])
    notes = [
        f"Dependent chain: the GPU wins {first_gpu_win('dependent chain')}. The core retires one add per "
        f"~{chain_cpe:.1f} cycles at {ghz:.1f} GHz with the independent loads prefetched and overlapped out of "
        "order; one GPU thread has one load in flight and waits a memory latency for each (the engine's "
        "Little's-law bound), the ALUs it brings are idle.",
        f"Branchy loop: on random data about every other branch mispredicts (13-cycle refill plus the "
        f"compare's resolution), so the core is {sorted_ratio:.1f}x slower than on sorted data; the GPU does "
        f"not predict at all (a warp runs both sides) and wins {first_gpu_win('branchy loop')} because the "
        "loop is a parallel compaction once its carried counter becomes a prefix scan.",
        f"Triad: no reuse and no control; the GPU wins {first_gpu_win('elementwise triad')} (below that its "
        "~3.5 us launch costs more than one core's pass) and its speedup over the whole 96-core socket is the "
        "DRAM bandwidth ratio. The kernel description fixes its DRAM bytes, so the socket is priced at DRAM "
        "bandwidth even where the arrays would fit its 384 MiB of L3.",
    ]
    if smoke:
        notes.append("smoke run: 4 Ki and 64 Ki elements")

    from archsim import plot

    order = {"dependent chain": 0, "branchy loop, sorted": 1, "branchy loop": 2, "elementwise triad": 3}
    main_rows = table[(table["n"] == max(sizes))].sort_values("kernel", key=lambda k: k.map(order), kind="stable")
    fig_win = plot.bars(main_rows, "kernel", "latency_s", "device", logy=True, width="text",
                        title=f"n = {max(sizes)} fp64 elements")
    scaling = table.assign(series=table["kernel"] + " / " + table["device"])
    fig_scale = plot.sweep_lines(scaling, "n", "latency_s", hue="series", logx=True, logy=True)
    ax = fig_scale.axes[0]
    handles, labels = ax.get_legend_handles_labels()
    with plot.style():
        ax.legend(handles, [t.replace("series = ", "") for t in labels], fontsize=5, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    fig_pred = plot.bars(predictors, "predictor", "mispredicts_per_element", "data", reference=0.5,
                         ylabel="mispredictions per element")
    return ScenarioOutput(summary=summary, tables={"kernels": table, "predictors": predictors},
                          figures={"winner": fig_win, "scaling": fig_scale, "predictors": fig_pred},
                          comparisons=comparisons, notes=notes)


if __name__ == "__main__":
    raise SystemExit(main(run, NAME))
