"""Budgets of the software-stack section: whole-model times under framework profiles.

DLE V100 ResNet-50 inference curve (18 points, pytorch-eager / pytorch-eager-amp) <= 15% MAPE;
each DGX-1 1 -> 8 GPU per-GPU training efficiency (DLE pytorch-19.10 and 21.03) <= 5%;
each Keras MNIST epoch (MLP and CNN on the 16-vCPU VM, K80, P100; tf1-keras) <= 25%. The CIFAR-10
rows are reported by ``python -m validation report``, not asserted (see validation.software).
"""

from __future__ import annotations

import pytest

from validation.software import DLE_BUDGET_PCT, KERAS_BUDGET_PCT, SCALING_EFF_BUDGET_PCT, dle_rows, keras_rows


def test_dle_v100_curve_within_budget():
    rows = dle_rows(gpus=("v100",))
    assert len(rows) == 18
    mape = 100 * sum(abs(r["predicted_s"] / r["measured_s"] - 1) for r in rows) / len(rows)
    assert mape <= DLE_BUDGET_PCT, f"DLE V100 MAPE {mape:.1f}% > {DLE_BUDGET_PCT}%"
    # batch 1 is host-bound under eager PyTorch: the host's framework work is most of the latency
    b1 = next(r for r in rows if r["batch"] == 1 and r["precision"] == "fp32")
    assert b1["host_s"] > 0.5 * b1["predicted_s"]


@pytest.fixture(scope="module")
def keras():
    return {(r["model"], r["machine"]): r for r in keras_rows(smoke=True)}


@pytest.mark.parametrize("model", ["mnist_mlp", "mnist_cnn"])
@pytest.mark.parametrize("machine", ["cpu16", "k80", "p100"])
def test_keras_epoch_within_budget(keras, model, machine):
    row = keras[(model, machine)]
    err = 100 * abs(row["predicted_s"] / row["measured_s"] - 1)
    assert err <= KERAS_BUDGET_PCT, f"{row}: {err:.1f}%"


def test_dgx1_scaling_rows_read_the_published_table_and_price_communication():
    from validation.software import scaling_rows

    rows = {r["precision"]: r for r in scaling_rows() if r["container"] == "19.10"}
    # published per-GPU efficiency: 6888.75 / (8 x 893.09) = 0.9642 (AMP), 2945.37 / (8 x 380.44) = 0.9678 (FP32)
    assert rows["amp"]["measured_eff"] == pytest.approx(0.9642, abs=1e-4)
    assert rows["fp32"]["measured_eff"] == pytest.approx(0.9678, abs=1e-4)
    for r in rows.values():
        # the all-reduce is not free (NCCL kernels share SMs and HBM with backward, the last bucket is
        # exposed) but ~100 MB over NVLink is ~1.5 ms of a ~180-330 ms step: what the model prices
        assert 0.99 < r["predicted_eff"] < 1.0


def test_dgx1_training_rows_run_each_release_in_its_own_tensor_layout():
    from validation.software import scaling_rows

    rows = {(r["container"], r["precision"]): r for r in scaling_rows()}
    # pytorch-19.10's AMP script passes no --memory-format (NCHW); 21.03's configs.yml sets nhwc for AMP only
    assert rows[("19.10", "amp")]["memory_format"] == "nchw"
    assert rows[("21.03", "amp")]["memory_format"] == "nhwc"
    assert {rows[(c, "fp32")]["memory_format"] for c in ("19.10", "21.03")} == {"nchw"}
    # same batch (256) and profile: the NCHW run pays cuDNN's layout transposes around its Tensor-Core
    # convolutions, so it is predicted slower than the NHWC one
    assert rows[("19.10", "amp")]["predicted_img_per_s"] < rows[("21.03", "amp")]["predicted_img_per_s"]
    # a regression guard, not an issue budget: with two-pass batch norm and the run's own layout these
    # three rows are within 10 % of the published tables (before: +16 %, +2.8 %, +5.8 %); the 19.10 AMP
    # row is not (see validation/software.py notes)
    for key in (("21.03", "amp"), ("19.10", "fp32"), ("21.03", "fp32")):
        r = rows[key]
        assert abs(r["predicted_img_per_s"] / r["measured_img_per_s"] - 1) < 0.10


def test_dgx1_per_gpu_efficiency_within_budget_and_the_21_03_amp_run_is_loader_bound():
    from validation.software import scaling_rows

    rows = {(r["container"], r["precision"]): r for r in scaling_rows()}
    for key, r in rows.items():
        err = 100 * abs(r["predicted_eff"] / r["measured_eff"] - 1)
        assert err <= SCALING_EFF_BUDGET_PCT, f"{key}: {err:.1f}%"
    # 8 GPUs x 1246 img/s need more than the 40 - 8 cores left by the main threads make at 3.80 ms per
    # image (32 / 3.80 ms = 8430 img/s): the loader sets the 21.03 AMP step, ~8430 / (8 x 1246) = 0.85
    amp = rows[("21.03", "amp")]
    assert amp["predicted_eff"] == pytest.approx(32 / 3.7965e-3 / (8 * amp["predicted_img_per_s"]), rel=2e-3)
    # the FP32 runs (8 x ~365 img/s) and 19.10's DALI-CPU decode (32 / 2.44 ms = 13,100 img/s) leave it idle
    for key in (("21.03", "fp32"), ("19.10", "fp32"), ("19.10", "amp")):
        assert rows[key]["predicted_eff"] > 0.99


def test_dgx_a100_rows_are_held_out_tf32_runs_on_tensor_cores():
    from validation.software import scaling_rows, software_section

    rows = {r["precision"]: r for r in scaling_rows("dgxa100")}
    # published per-GPU efficiency: 7248 / (8 x 938) = 0.9659 (TF32), 16621 / (8 x 2470) = 0.8411 (AMP)
    assert rows["tf32"]["measured_eff"] == pytest.approx(0.9659, abs=1e-4)
    assert rows["amp"]["measured_eff"] == pytest.approx(0.8411, abs=1e-4)
    # TF32 (allow_tf32) on the A100's Tensor Cores: well above the 19.5 TFLOP/s CUDA-core bound's
    # ~570 img/s, below the AMP run
    assert 700 < rows["tf32"]["predicted_img_per_s"] < rows["amp"]["predicted_img_per_s"]
    fams = [f for f in software_section().families if f.family.startswith("dle_dgxa100")]
    assert len(fams) == 4 and all(f.budget_pct is None for f in fams)
