"""The software profile's input pipeline (``data_loading``) in the discrete-event engine: each GPU's
loader workers priced on the host CPU model, sharing the host's cores with the training processes'
main threads; and the derivation of the PyTorch profiles' per-sample cost (``loader_cost``)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.engines import estimate
from archsim.engines.des import DataParallel, InputPipeline
from archsim.errors import ArchsimError, EngineError
from archsim.software import load_software, loader_cost, with_updates
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
    # 8 workers x prefetch_factor 2; the training process's own thread holds one core
    assert (loader.cores, loader.batch, loader.prefetch_depth, loader.main_threads) == (8, 32, 16, 1)
    assert loader.seconds_per_sample == pytest.approx(5.0e-3) and loader.sample_bytes == 150528


def test_hand_computed_pipeline_bound_of_eight_gpus_sharing_the_host():
    # 8 GPUs x 8 workers = 64 workers on the DGX-1's 40 cores less the 8 training processes' main
    # threads: each GPU gets a batch no faster than batch x sample_s x gpus / min(64, 40 - 8)
    # = 32 x 5 ms x 8 / 32 = 40 ms; one GPU alone (8 workers on 40 - 1 cores) every 32 x 5 ms / 8
    # = 20 ms. The MLP's device step (microseconds) is far below both.
    sw = _profile()
    g = _mlp_train()
    loader = InputPipeline.from_software(sw, _DGX1.host, 32)
    one = estimate(g, _DGX1, engine="des", software=sw, loader=loader, steps=3)
    eight = estimate(g, _DGX1, engine="des", software=sw, loader=loader, steps=3, data_parallel=DataParallel(gpus=8))
    assert one._meta["des"]["loader_period_s"] == pytest.approx(0.020)
    assert eight._meta["des"]["loader_period_s"] == pytest.approx(0.040)
    assert one._meta["des"]["step_time_s"] == pytest.approx(0.020)
    assert eight._meta["des"]["step_time_s"] == pytest.approx(0.040)
    # the workers really share one core pool: 64 of them never hold more than the 32 cores left
    busy = eight.utilisation["host.cores"]
    assert 0 < busy <= 1.0
    assert max(sum(1 for e in eight.timeline if e.resource.startswith("host.loader") and e.start_s <= t < e.end_s)
               for t in (e.start_s for e in eight.timeline if e.resource.startswith("host.loader"))) <= 32


def test_main_threads_hold_cores_for_the_whole_run():
    g = _mlp_train()
    loader = InputPipeline(cores=1, batch=32, seconds_per_sample=1e-4, main_threads=1)
    busy = {}
    for m in (0, 1):
        run = estimate(g, _DGX1, engine="des", loader=InputPipeline(cores=1, batch=32, seconds_per_sample=1e-4,
                                                                    main_threads=m), steps=3)
        busy[m] = run.utilisation["host.cores"] * 40 * run.latency_s  # core-seconds
    # the main thread adds one core for the whole run (makespan)
    assert busy[1] - busy[0] == pytest.approx(run.latency_s, rel=1e-6)
    # 8 GPUs x 5 main threads = every one of the 40 cores: no core is left for the workers
    with pytest.raises(EngineError, match="none is left"):
        estimate(g, _DGX1, engine="des", loader=InputPipeline(cores=1, batch=32, seconds_per_sample=1e-4,
                                                              main_threads=5), data_parallel=DataParallel(gpus=8))
    with pytest.raises(EngineError, match="main_threads"):
        InputPipeline(cores=1, batch=32, seconds_per_sample=1e-4, main_threads=-1)
    with pytest.raises(ArchsimError, match="main_threads"):
        with_updates(load_software("none"), {"data_loading.main_threads": 1})
    assert loader.main_threads == 1


def test_hand_computed_pillow_resize_cost():
    # pillow-perf, c4.large (2.90 GHz), Pillow 4.3.0, 2560x1600 bilinear:
    #   -> 320x200:   taps 1600*320*2*8 + 320*200*2*8 = 8,192,000 + 1,024,000 = 9,216,000; outputs 512,000 + 64,000
    #   -> 2048x1280: taps 1600*2048*2*1.25 + 2048*1280*2*1.25 = 8,192,000 + 6,553,600 = 14,745,600;
    #                 outputs 3,276,800 + 2,621,440 = 5,898,240
    # 9,216,000 a + 576,000 b = 0.0167059898 s x 2.9 GHz = 48,447,371 cycles
    # 14,745,600 a + 5,898,240 b = 0.0445370674 s x 2.9 GHz = 129,157,496 cycles
    # -> a = 4.6083 cycles per tap, b = 10.3768 per output pixel
    assert loader_cost.PILLOW_CYCLES_PER_TAP == pytest.approx(4.6083, rel=1e-4)
    assert loader_cost.PILLOW_CYCLES_PER_OUTPUT == pytest.approx(10.3768, rel=1e-4)
    # 448x448 -> 224x224 (a 2x downscale): taps 448*224*2*2 + 224*224*2*2 = 401,408 + 200,704 = 602,112;
    # outputs 448*224 + 224*224 = 100,352 + 50,176 = 150,528
    # cycles = 4.6083 x 602,112 + 10.3768 x 150,528 = 2,774,715 + 1,561,996 = 4,336,711 (1.97 ms at 2.2 GHz)
    assert loader_cost.resize_taps_outputs((448, 448), (224, 224)) == (602112, 150528)
    assert loader_cost.resize_cycles((448, 448), (224, 224)) == pytest.approx(4_336_711, rel=1e-4)
    # an upscale reads 2 taps per output pixel; an unchanged side skips its pass
    assert loader_cost.resize_taps_outputs((112, 224), (224, 224)) == (224 * 224 * 2, 224 * 224)
    assert loader_cost.resize_taps_outputs((224, 224), (224, 224)) == (0, 0)


def test_random_resized_crop_expectation():
    # a crop never exceeds the image: the expected cost lies between the 8 % and the whole-image crops
    w, h = loader_cost.IMAGENET_MEAN_SIZE
    rrc = loader_cost.random_resized_crop_cycles(w, h)
    copy = loader_cost.PILLOW_COPY_CYCLES_PER_PIXEL
    whole = loader_cost.resize_cycles((w, h), (224, 224)) + copy * w * h
    side = (0.08 * w * h) ** 0.5
    small = loader_cost.resize_cycles((side, side), (224, 224)) + copy * side * side
    assert small < rrc < whole
    # doubling the grid moves the quadrature by under 0.5 %
    assert loader_cost.random_resized_crop_cycles(w, h, grid=400) == pytest.approx(rrc, rel=5e-3)
    # a larger image costs more to crop and resize
    assert loader_cost.random_resized_crop_cycles(2 * w, 2 * h) > rrc


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
        assert {"data_loading.workers_per_gpu", "data_loading.sample_instructions",
                "data_loading.main_threads"} <= covered
        # the profile's count is loader_cost's derivation: decode 1 / 577 s x 3.1 GHz = 5.37 M, the
        # random resized crop of a 469x387 image 2.72 M, flip and copies 0.26 M: 8.35 M instructions,
        # 3.80 ms on the DGX-1's 2.2 GHz host
        parts = loader_cost.training_sample_instructions()
        assert p.data_loading.sample_instructions == pytest.approx(parts["total"], rel=1e-4)
        assert parts["decode"] == pytest.approx(3.1e9 / 577)
        assert p.sample_s(_DGX1.host) == pytest.approx(3.80e-3, rel=1e-3)
        assert p.data_loading.main_threads == 1
    assert not load_software("none").data_loading.enabled and load_software("none").is_none


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 48), st.integers(1, 16), st.integers(1, 8), st.sampled_from([1, 2, 4, 8]))
def test_more_host_cores_never_slower(free, extra, workers, gpus):
    # The loader workers and main threads of every GPU share the host's cores: more cores never
    # lengthen the step (the host has at least one core beside the gpus main threads).
    cores = gpus + free
    sw = _profile(workers=workers, instructions=2.2e6)  # 1 ms per sample on the 2.2 GHz host
    g = _mlp_train(batch=16)
    loader = InputPipeline.from_software(sw, _DGX1.host, 16)
    dp = DataParallel(gpus=gpus) if gpus > 1 else None

    def step(n):
        return estimate(g, _with_cores(_DGX1, n), engine="des", software=sw, loader=loader, steps=3,
                        data_parallel=dp)._meta["des"]["step_time_s"]

    assert step(cores + extra) <= step(cores) * (1 + 1e-9)
