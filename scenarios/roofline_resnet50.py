"""Hierarchical roofline of every ResNet-50 layer (training, fp16) on an H200: which level binds each?

Question: on a GPU whose fp16 Tensor Core peak (989 TFLOP/s dense) is 206x its HBM3E bandwidth
(4.8 TB/s), which of ResNet-50's training kernels (forward, backward and the SGD update) are limited by
the Tensor Cores, which by L1/shared memory, L2 or HBM, and which by launch overhead; and what share of
the step's time and FLOP falls in each class?

Presets: ``gpu/h200-sxm-141gb``. Work: ``zoo.resnet50(batch=256, dtype="fp16", training=True)``
(batch 32 in ``--smoke``), roofline engine, serial kernel stream, every op a separate kernel (no
fusion of batch norm and ReLU into the convolutions).

Figures: ``roofline`` (the hierarchical roofline: L1, L2 and HBM ceilings and the compute ceilings,
every kernel placed at its intensity for each level, marker area by its share of the step time) and
``breakdown`` (time of the slowest kernels split by bound, and energy by component). Tables:
``layers`` (one row per kernel: bound, FLOP, bytes and time per level) and ``by_bound``.

Published figures: the NVIDIA H200 Tensor Core GPU datasheet (2024): 989.4 TFLOP/s dense FP16 Tensor
Core (half the 1,979 "with sparsity" figure) and 4.8 TB/s HBM3E, hence a DRAM ridge point of 206
FLOP/B; and the claim of Jung et al., "Restructuring Batch Normalization to Accelerate CNN Training"
(SysML 2019, arXiv:1807.01702, abstract) that non-convolutional layers such as batch normalization
"have relatively lower computational intensity ... and hence are often constrained by main-memory
bandwidth" (Yang, Kurth & Williams, "Hierarchical Roofline Analysis for GPUs", CUG 2020, is the method).
"""

from __future__ import annotations

if __name__ == "__main__":  # `python scenarios/x.py` puts scenarios/, not the repo root, on sys.path
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


import archsim
from scenarios.harness import Comparison, ScenarioOutput, main

NAME = "roofline_resnet50"
PRESET = "gpu/h200-sxm-141gb"
DATASHEET_FP16_DENSE_FLOP_PER_S = 989.4e12  # H200 datasheet: 1,979 TFLOPS FP16 with sparsity, halved
DATASHEET_HBM_BYTES_PER_S = 4.8e12
NON_CONV_KINDS = ("batchnorm", "elementwise")


def run(smoke: bool) -> ScenarioOutput:
    """Per-layer bounds of ResNet-50 fp16 training on an H200, on the hierarchical roofline."""
    batch = 32 if smoke else 256
    hw = archsim.load_preset(PRESET)
    graph = archsim.zoo.resnet50(batch=batch, dtype="fp16", training=True)
    res = archsim.estimate(graph, hw)
    layers = res.to_frame()

    total_t = res.latency_s
    total_f = res.flop
    by_bound = (layers.groupby("bound").agg(kernels=("name", "size"), latency_s=("latency_s", "sum"),
                                            flop=("flop", "sum")).reset_index())
    by_bound["time_fraction"] = by_bound["latency_s"] / total_t
    by_bound["flop_fraction"] = by_bound["flop"] / total_f
    by_kind = (layers.groupby(["kind", "bound"]).agg(kernels=("name", "size"), latency_s=("latency_s", "sum"))
               .reset_index())

    ridge = hw.peak_flop_per_s("fp16", "tensor") / hw.dram.bandwidth_bytes_per_s
    non_conv = layers[layers["kind"].isin(NON_CONV_KINDS)]
    non_conv_memory = float((non_conv["bound"].str.startswith("memory:")).mean()) if len(non_conv) else 0.0
    conv = layers[layers["kind"].isin(("conv2d", "gemm"))]

    comparisons = [
        Comparison("H200 DRAM ridge point (fp16 Tensor Core)", ridge,
                   DATASHEET_FP16_DENSE_FLOP_PER_S / DATASHEET_HBM_BYTES_PER_S, "FLOP/B",
                   "NVIDIA H200 Tensor Core GPU datasheet (2024): 1,979 TFLOPS FP16 with sparsity (989.4 dense), "
                   "4.8 TB/s HBM3E"),
        Comparison("share of batch-norm and elementwise kernels bound by memory", non_conv_memory, None, "fraction",
                   "Jung et al., Restructuring Batch Normalization to Accelerate CNN Training, SysML 2019 "
                   "(arXiv:1807.01702), abstract",
                   claim="non-convolutional layers (BN, ReLU, residual adds) are constrained by memory bandwidth",
                   holds=non_conv_memory >= 0.95),
    ]

    def share(prefix: str, column: str) -> float:
        return float(by_bound[by_bound["bound"].str.startswith(prefix)][column].sum())

    summary: dict[str, float | int | str] = {
        "batch": batch,
        "step_latency_s": total_t,
        "images_per_s": batch / total_t,
        "achieved_tflop_per_s": total_f / total_t / 1e12,
        "kernels": len(layers),
        "dram_ridge_flop_per_byte": ridge,
        "time_fraction_compute": share("compute", "time_fraction"),
        "time_fraction_memory_dram": share("memory:dram", "time_fraction"),
        "time_fraction_memory_l2": share("memory:l2", "time_fraction"),
        "time_fraction_memory_l1": share("memory:l1", "time_fraction"),
        "time_fraction_overhead": share("overhead", "time_fraction"),
        "flop_fraction_memory_bound": share("memory", "flop_fraction"),
        "conv_gemm_flop_fraction": float(conv["flop"].sum() / total_f),
        "conv_gemm_time_fraction": float(conv["latency_s"].sum() / total_t),
        "non_conv_memory_bound_fraction": non_conv_memory,
        "data_movement_energy_fraction": res.data_movement_fraction,
    }
    for bound, count in sorted(res.bound_counts.items()):
        summary[f"kernels_bound_{bound.replace(':', '_')}"] = count

    figures = {
        "roofline": archsim.plot.roofline(res, hw, title=f"ResNet-50 training, fp16, batch {batch}, H200"),
        "breakdown": archsim.plot.breakdown(res, by="op", top=12),
    }
    notes = [
        f"conv/GEMM kernels carry {summary['conv_gemm_flop_fraction']:.1%} of the FLOP but "
        f"{summary['conv_gemm_time_fraction']:.1%} of the time; memory-bound kernels take "
        f"{share('memory', 'time_fraction'):.1%} of the step with {summary['flop_fraction_memory_bound']:.1%} "
        "of its FLOP",
        "no fusion is modelled: cuDNN/XLA fuse BN+ReLU(+add) into fewer passes, so a real framework's memory-bound "
        "share is lower than archsim's unfused estimate",
    ]
    return ScenarioOutput(summary=summary, tables={"layers": layers, "by_bound": by_bound, "by_kind": by_kind},
                          figures=figures, comparisons=comparisons, notes=notes)


if __name__ == "__main__":
    raise SystemExit(main(run, NAME))
