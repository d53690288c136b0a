"""GPU generations: AlexNet and ResNet-50 training time from the GTX 580 to the H200.

Question: AlexNet took "five to six days on two GTX 580 3GB GPUs" for "roughly 90 cycles through the
training set of 1.2 million images" (Krizhevsky, Sutskever & Hinton, NeurIPS 2012, sections 1 and 5).
How long do AlexNet and ResNet-50 (90 epochs of ImageNet-1k, 1,281,167 images) take on each
generation since (GTX 580, K80, P100, V100, A100, H100, H200), and did compute or memory bandwidth
grow faster from one generation to the next?

Presets: ``gpu/gtx-580``, ``gpu/k80`` (one GK210 die of the two on a K80 board), ``gpu/p100-16gb``,
``gpu/v100-sxm2-16gb``, ``gpu/a100-sxm4-80gb``, ``gpu/h100-sxm5-80gb``, ``gpu/h200-sxm-141gb``. Work:
``zoo.alexnet(batch=128, fp32, training)`` (Krizhevsky's batch of 128) and ``zoo.resnet50(batch=256,
training)`` in fp32, tf32 (A100 onwards) and fp16 (P100 onwards); roofline engine, one GPU, serial
kernel stream, no input pipeline (see the ``input_pipeline`` scenario for that).

Figures: ``time_to_train`` (90-epoch training time per GPU, by model and precision, log scale) and
``growth`` (FP32 peak, best dense peak and DRAM bandwidth relative to the GTX 580, log scale).

Published figures: Krizhevsky et al. 2012 (5-6 days, 2x GTX 580; taken as 5.5 days); NVIDIA
DeepLearningExamples, PyTorch/Classification/ConvNets/resnet50v1.5/README.md (commit 291f0d02),
"Training performance" tables, 1 GPU, pytorch-21.03 container: DGX-1 16GB 1x V100 16GB 367 img/s FP32
and 1200 img/s mixed precision; DGX A100 1x A100 80GB 938 img/s TF32 and 2470 img/s mixed precision.
"""

from __future__ import annotations

if __name__ == "__main__":  # `python scenarios/x.py` puts scenarios/, not the repo root, on sys.path
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

import archsim
from scenarios.harness import Comparison, ScenarioOutput, main

NAME = "gpu_generations"

IMAGENET_TRAIN_IMAGES = 1_281_167  # ILSVRC-2012 training set (Russakovsky et al., IJCV 2015, Table 2)
KRIZHEVSKY_IMAGES = 1.2e6  # "1.2 million images", Krizhevsky et al. 2012, section 5
EPOCHS = 90
ALEXNET_DAYS = 5.5  # "five to six days", Krizhevsky et al. 2012, section 1
ALEXNET_GPUS = 2

# (preset, label, launch year)
GPUS: tuple[tuple[str, str, int], ...] = (
    ("gpu/gtx-580", "GTX 580", 2010),
    ("gpu/k80", "K80 (1 die)", 2014),
    ("gpu/p100-16gb", "P100", 2016),
    ("gpu/v100-sxm2-16gb", "V100", 2017),
    ("gpu/a100-sxm4-80gb", "A100", 2020),
    ("gpu/h100-sxm5-80gb", "H100", 2022),
    ("gpu/h200-sxm-141gb", "H200", 2024),
)
# Precisions run per generation: tf32 needs Ampere Tensor Cores, fp16 at least Pascal's 2x fp16 lanes.
PRECISION_FROM_YEAR = {"fp32": 0, "fp16": 2016, "tf32": 2020}

DLE = ("NVIDIA DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md (commit 291f0d02), "
       "training performance, 1 GPU, batch 256")
PUBLISHED_RESNET50 = {  # (preset, precision) -> (img/s, source)
    ("gpu/v100-sxm2-16gb", "fp32"): (367.0, DLE + ", DGX-1 16GB, FP32"),
    ("gpu/v100-sxm2-16gb", "fp16"): (1200.0, DLE + ", DGX-1 16GB, mixed precision"),
    ("gpu/a100-sxm4-80gb", "tf32"): (938.0, DLE + ", DGX A100 80GB, TF32"),
    ("gpu/a100-sxm4-80gb", "fp16"): (2470.0, DLE + ", DGX A100 80GB, mixed precision"),
}


def _throughputs(graph: archsim.OpGraph, batch: int, hardware: list) -> list[float]:
    frame = archsim.estimate_many(graph, hardware)
    return [batch / float(t) for t in frame["latency_s"]]


def run(smoke: bool) -> ScenarioOutput:
    """90-epoch AlexNet and ResNet-50 training time per GPU generation, and compute vs bandwidth growth."""
    # Smoke: smaller batches (per-image rates change by the launch overhead only) and no fp32 ResNet-50 sweep.
    alex_batch, rn_batch = (32, 32) if smoke else (128, 256)
    gpus = {p: archsim.load_preset(p) for p, _, _ in GPUS}
    rows = []
    alexnet = archsim.zoo.alexnet(batch=alex_batch, dtype="fp32", training=True)
    alex = _throughputs(alexnet, alex_batch, list(gpus.values()))
    for (preset, label, year), ips in zip(GPUS, alex, strict=True):
        rows.append({"gpu": label, "preset": preset, "year": year, "model": "alexnet", "precision": "fp32",
                     "images_per_second": ips})
    precisions = ("fp16", "tf32") if smoke else ("fp32", "fp16", "tf32")
    for prec in precisions:
        chosen = [(p, label, year) for p, label, year in GPUS if year >= PRECISION_FROM_YEAR[prec]]
        graph = archsim.zoo.resnet50(batch=rn_batch, dtype=prec, training=True)
        for (preset, label, year), ips in zip(chosen, _throughputs(graph, rn_batch, [gpus[p] for p, _, _ in chosen]),
                                              strict=True):
            rows.append({"gpu": label, "preset": preset, "year": year, "model": "resnet50", "precision": prec,
                         "images_per_second": ips})
    table = pd.DataFrame(rows)
    images = {"alexnet": EPOCHS * KRIZHEVSKY_IMAGES, "resnet50": EPOCHS * IMAGENET_TRAIN_IMAGES}
    table["time_to_train_s"] = [images[m] / ips for m, ips in zip(table["model"], table["images_per_second"],
                                                                   strict=True)]
    table["series"] = table["model"] + " " + table["precision"]

    base = gpus["gpu/gtx-580"]
    growth_rows = []
    for preset, label, year in GPUS:
        g = gpus[preset]
        dense = max(g.best_peak_flop_per_s(p) for p in ("fp32", "fp16", "tf32"))
        for quantity, value, ref in (("FP32 peak", g.peak_flop_per_s("fp32"), base.peak_flop_per_s("fp32")),
                                     ("best dense peak", dense, base.peak_flop_per_s("fp32")),
                                     ("DRAM bandwidth", g.dram_bandwidth_bytes_per_s, base.dram_bandwidth_bytes_per_s)):
            growth_rows.append({"gpu": label, "year": year, "quantity": quantity, "value": value,
                                "growth_vs_gtx580": value / ref})
    growth = pd.DataFrame(growth_rows)

    comparisons = []
    alex580 = table[(table["model"] == "alexnet") & (table["preset"] == "gpu/gtx-580")].iloc[0]
    # Two GPUs, each running half of the model (Krizhevsky's two towers), counted as twice one GPU's rate:
    # an upper bound that ignores the towers' exchanges at conv3 and the fully connected layers.
    alex_days = images["alexnet"] / (ALEXNET_GPUS * alex580["images_per_second"]) / 86400
    comparisons.append(Comparison("AlexNet 90 epochs on 2x GTX 580", alex_days, ALEXNET_DAYS, "days",
                                  "Krizhevsky, Sutskever & Hinton, ImageNet Classification with Deep Convolutional "
                                  "Neural Networks, NeurIPS 2012, sec. 1: 'five to six days on two GTX 580 3GB GPUs'"))
    for (preset, prec), (published, source) in PUBLISHED_RESNET50.items():
        sel = table[(table["model"] == "resnet50") & (table["preset"] == preset) & (table["precision"] == prec)]
        if len(sel):
            comparisons.append(Comparison(f"ResNet-50 training {sel.iloc[0]['gpu']} {prec}",
                                          float(sel.iloc[0]["images_per_second"]), published, "img/s", source))

    summary: dict[str, float | str] = {"alexnet_2x_gtx580_days": alex_days}
    for _, r in table.iterrows():
        key = f"{r['preset'].split('/')[1].replace('-', '_')}_{r['model']}_{r['precision']}_img_per_s"
        summary[key] = float(r["images_per_second"])
    last = growth[growth["gpu"] == "H200"].set_index("quantity")["growth_vs_gtx580"]
    summary["h200_fp32_peak_growth"] = float(last["FP32 peak"])
    summary["h200_dense_peak_growth"] = float(last["best dense peak"])
    summary["h200_dram_bandwidth_growth"] = float(last["DRAM bandwidth"])

    plot_table = table[["year", "series", "time_to_train_s"]]
    figures = {
        "time_to_train": archsim.plot.sweep_lines(plot_table, x="year", y="time_to_train_s", hue="series", logy=True),
        "growth": archsim.plot.sweep_lines(growth[["year", "quantity", "growth_vs_gtx580"]], x="year",
                                           y="growth_vs_gtx580", hue="quantity", logy=True),
    }
    notes = [
        f"from GTX 580 to H200 the best dense peak grew {last['best dense peak']:.0f}x and DRAM bandwidth "
        f"{last['DRAM bandwidth']:.0f}x: each generation's ridge point moves right, so more layers become "
        "memory-bound (see roofline_resnet50)",
        "AlexNet on 2x GTX 580 is an upper bound on speed (two towers as twice one GPU); cuda-convnet (2012) ran "
        "far from the GTX 580's peak, which archsim's calibrated efficiencies (fit to cuDNN/cuBLAS-era kernels) "
        "do not model: expect archsim to be faster than the paper",
        "the K80 row is one GK210 die (half a K80 board)",
    ]
    return ScenarioOutput(summary=summary, tables={"training": table, "growth": growth}, figures=figures,
                          comparisons=comparisons, notes=notes)


if __name__ == "__main__":
    raise SystemExit(main(run, NAME))
