"""The software profile's input pipeline (``data_loading``) in the discrete-event engine: each GPU's
loader workers priced on the host CPU model, sharing the host's cores."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.engines import estimate
from archsim.engines.des import DataParallel, InputPipeline
from archsim.errors import ArchsimError, EngineError
from archsim.software import load_software, with_updates
from archsim.workload import Elementwise, Gemm, OpGraph, training_step

_DGX1 = archsim.load_preset("system/dgx-1-v100")


def _mlp_train(batch=32, width=256):
    ops = [Gemm(batch, width, width, "fp16", weight=True, name="fc0"),
           Elementwise((batch, width), "relu", "fp16", name="relu0")]
    return training_step(OpGraph.chain("mlp", ops), "sgd")


def _profile(workers=8, instructions=11e6):
    return with_updates(load_software("pytorch-eager"), {"data_loading.workers_per_gpu": workers,
                                                         "data_loading.sample_instructions": instructions})


def _with_cores(system, cores):
    return system.model_copy(update={"host": system.host.model_copy(update={"cores": cores})})


def test_sample_cost_is_host_instructions_priced_on_the_host():
    sw = _profile(instructions=11e6)
    # 11e6 instructions / (min(host_ipc 1.0, issue width) x 2.2 GHz) = 5.0 ms per sample
    assert sw.sample_s(_DGX1.host) == pytest.approx(5.0e-3)
    loader = InputPipeline.from_software(sw, _DGX1.host, 32, sample_bytes=150528)
    assert (loader.cores, loader.batch, loader.prefetch_depth) == (8, 32, 16)  # 8 workers x prefetch_factor 2
    assert loader.seconds_per_sample == pytest.approx(5.0e-3) and loader.sample_bytes == 150528


def test_hand_computed_pipeline_bound_of_eight_gpus_sharing_the_host():
    # 8 GPUs x 8 workers = 64 workers on the DGX-1's 40 cores: each GPU gets a batch no faster than
    # batch x sample_s x gpus / min(64, 40) = 32 x 5 ms x 8 / 40 = 32 ms; one GPU alone (8 workers on
    # 40 cores) every 32 x 5 ms / 8 = 20 ms. The MLP's device step (microseconds) is far below both.
    sw = _profile()
    g = _mlp_train()
    loader = InputPipeline.from_software(sw, _DGX1.host, 32)
    one = estimate(g, _DGX1, engine="des", software=sw, loader=loader, steps=3)
    eight = estimate(g, _DGX1, engine="des", software=sw, loader=loader, steps=3, data_parallel=DataParallel(gpus=8))
    assert one._meta["des"]["loader_period_s"] == pytest.approx(0.020)
    assert eight._meta["des"]["loader_period_s"] == pytest.approx(0.032)
    assert one._meta["des"]["step_time_s"] == pytest.approx(0.020)
    assert eight._meta["des"]["step_time_s"] == pytest.approx(0.032)
    # the workers really share one core pool: 64 of them never hold more than the 40 cores
    busy = eight.utilisation["host.cores"]
    assert 0 < busy <= 1.0


def test_profiles_without_data_loading_refuse_and_half_given_fields_are_errors():
    with pytest.raises(EngineError, match="no data_loading"):
        InputPipeline.from_software(load_software("none"), _DGX1.host, 32)
    with pytest.raises(ArchsimError, match="both"):
        with_updates(load_software("none"), {"data_loading.workers_per_gpu": 4})
    with pytest.raises(ArchsimError):
        with_updates(load_software("pytorch-eager"), {"data_loading.workers_per_gpu": -1})


def test_pytorch_profiles_carry_a_sourced_input_pipeline():
    for name in ("pytorch-eager", "pytorch-eager-amp"):
        p = load_software(name)
        covered = {f for s in p.sources for f in s.fields}
        assert p.data_loading.enabled
        assert {"data_loading.workers_per_gpu", "data_loading.sample_instructions"} <= covered
        # Pillow's decode alone: 1 / 577 s x 3.1 GHz = 5.37 M instructions, 2.44 ms on the DGX-1 host
        assert p.sample_s(_DGX1.host) == pytest.approx(3.1e9 / 577 / 2.2e9, rel=1e-3)
    assert not load_software("none").data_loading.enabled and load_software("none").is_none


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 48), st.integers(1, 16), st.integers(1, 8), st.sampled_from([1, 2, 4, 8]))
def test_more_host_cores_never_slower(cores, extra, workers, gpus):
    # The loader workers of every GPU share the host's cores: more cores never lengthen the step.
    sw = _profile(workers=workers, instructions=2.2e6)  # 1 ms per sample on the 2.2 GHz host
    g = _mlp_train(batch=16)
    loader = InputPipeline.from_software(sw, _DGX1.host, 16)
    dp = DataParallel(gpus=gpus) if gpus > 1 else None

    def step(n):
        return estimate(g, _with_cores(_DGX1, n), engine="des", software=sw, loader=loader, steps=3,
                        data_parallel=dp)._meta["des"]["step_time_s"]

    assert step(cores + extra) <= step(cores) * (1 + 1e-9)
