"""Zoo models against published parameter and multiply-accumulate counts.

Sources: torchvision model table (https://pytorch.org/vision/stable/models.html: "Params" and
"GFLOPS", where GFLOPS are multiply-accumulates of conv and linear layers at 224x224); He et al. 2016
(ResNet); Devlin et al. 2019 (BERT-base "110M"); Radford et al. 2019 / Hugging Face ``gpt2`` (124M);
Krizhevsky 2014 (AlexNet ~61M); Simonyan & Zisserman 2015 (VGG-16 138M); Sandler et al. 2018
(MobileNetV2 3.4M, 300M MAdds); the Keras examples' ``model.summary()``.
"""

import pytest

import archsim.zoo as zoo
from archsim.errors import WorkloadError
from archsim.ops import Attention, Gemm

# name -> (published params, tolerance, published forward GMAC per image or None)
PUBLISHED = {
    "resnet50": (25.6e6, 0.01, 4.09),
    "resnet18": (11.69e6, 0.01, 1.81),
    "alexnet": (61.1e6, 0.01, 0.71),
    "vgg16": (138.36e6, 0.01, 15.47),
    "mobilenet_v2": (3.50e6, 0.01, 0.30),
    "bert_base": (110e6, 0.01, None),
    "gpt2": (124e6, 0.01, None),
}


@pytest.fixture(scope="module")
def models():
    return {name: zoo.get(name, batch=1) for name in PUBLISHED}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_params_and_macs_match_published(models, name):
    params, tol, gmac = PUBLISHED[name]
    g = models[name]
    assert g.param_count() == pytest.approx(params, rel=tol)
    if gmac is not None:
        assert g.macs() / 1e9 == pytest.approx(gmac, rel=0.03)


def test_exact_reference_parameter_counts():
    # Keras: 784*512+512 + 512*512+512 + 512*10+10
    assert zoo.mlp().param_count() == 669_706
    # Keras: 320 + 18496 + 9216*128+128 + 1290
    assert zoo.mnist_cnn().param_count() == 1_199_882
    # Keras: 896 + 9248 + 18496 + 36928 + 2304*512+512 + 5130
    assert zoo.cifar10_cnn().param_count() == 1_250_858
    # 156 + 2416 + 48120 + 10164 + 850
    assert zoo.lenet5().param_count() == 61_706
    # torchvision / Hugging Face exact counts
    assert zoo.resnet50().param_count() == 25_557_032
    assert zoo.bert_base().param_count() == 109_482_240
    assert zoo.bert_large().param_count() == 335_141_888
    assert zoo.gpt2().param_count() == 124_439_808
    assert zoo.vgg16().param_count() == 138_357_544


def test_mnist_cnn_macs_by_hand():
    # conv1 26*26*32*9 = 194,688; conv2 24*24*64*32*9 = 10,616,832; dense 9216*128 + 128*10
    assert zoo.mnist_cnn(batch=1).macs() == 194_688 + 10_616_832 + 1_179_648 + 1_280


def test_resnet50_training_is_about_three_times_inference():
    infer = zoo.resnet50(batch=32)
    train = zoo.resnet50(batch=32, training=True)
    assert infer.macs() == 32 * zoo.resnet50(batch=1).macs()
    ratio = train.total_flop() / infer.total_flop()
    # backward = 2x forward for conv/GEMM (dX and dW); BN, ReLU and the optimizer add a little
    assert 2.9 < ratio < 3.2
    assert train.param_count() == infer.param_count()
    assert len(train.phase_indices("update")) > 0


def test_bert_macs_by_hand():
    g = zoo.bert_base(batch=2, seq_len=128)
    t, h = 256, 768
    # per layer: qkv 3h^2, out h^2, ffn 8h^2 per token; attention 2 * B*A*S*S*(h/A); pooler 2*h^2
    per_layer = t * 12 * h * h + 2 * (2 * 12 * 128 * 128 * 64)
    assert g.macs() == 12 * per_layer + 2 * h * h


def test_gpt2_decode_uses_kv_cache():
    prefill = zoo.gpt2(batch=1, seq_len=256)
    decode = zoo.gpt2(batch=4, seq_len=256, mode="decode")
    att = [op for op in decode.ops if isinstance(op, Attention)]
    assert len(att) == 12 and all(a.seq_q == 1 and a.seq_kv == 256 for a in att)
    # decode: every GEMM has one row per sequence
    assert all(op.m == 4 for op in decode.ops if isinstance(op, Gemm))
    assert decode.param_count() == prefill.param_count() == 124_439_808
    # KV cache read: 12 layers * K and V * 4 seqs * 256 * 768 fp32 bytes, included in min_bytes
    assert decode.min_bytes() > 12 * 2 * 4 * 256 * 768 * 4
    with pytest.raises(WorkloadError, match="decode"):
        zoo.gpt2(mode="decode", training=True)
    with pytest.raises(WorkloadError, match="seq_len"):
        zoo.gpt2(seq_len=2048)


def test_llama_like_gqa_defaults_and_small_config():
    assert zoo.llama_like().param_count() == 8_030_261_248  # Llama-3-8B
    small = zoo.llama_like(hidden=256, layers=2, heads=8, kv_heads=2, ffn=512, vocab=1000, seq_len=64)
    att = [op for op in small.ops if isinstance(op, Attention)]
    assert all(a.kv_heads == 2 and a.causal and a.fused for a in att)
    # embed 1000*256, per layer q,o 256^2, k,v 256*64, mlp 3*256*512, 2 norms; final norm; head
    per_layer = 2 * 65_536 + 2 * 16_384 + 3 * 131_072 + 2 * 256
    assert small.param_count() == 2 * 256_000 + 2 * per_layer + 256
    t = zoo.llama_like(hidden=256, layers=2, heads=8, kv_heads=2, ffn=512, vocab=1000, seq_len=64, training=True)
    assert 3.0 < t.total_flop() / small.total_flop() < 3.6  # fused attention backward is 2.5x its forward
    with pytest.raises(WorkloadError, match="kv_heads"):
        zoo.llama_like(kv_heads=5)


def test_registry():
    assert "resnet50" in zoo.list_models() and len(zoo.list_models()) == 13
    with pytest.raises(WorkloadError, match="resnet50"):
        zoo.get("resnet05")
    with pytest.raises(WorkloadError, match="zoo.mlp"):
        zoo.get("mlp", seq_len=3)
    with pytest.raises(WorkloadError, match="batch"):
        zoo.mlp(batch=0)
    g = zoo.get("mnist_cnn", batch=8, dtype="fp16", training=True, optimizer="sgd")
    assert g.training and g.dtype == "fp16"


@pytest.mark.parametrize("name", zoo.list_models())
def test_every_model_trains_at_about_three_times_its_forward(name):
    kw = {"seq_len": 64} if name in ("bert_base", "bert_large", "gpt2", "llama_like") else {}
    infer = zoo.get(name, batch=2, **kw)
    train = zoo.get(name, batch=2, training=True, **kw)
    assert infer.total_flop() > 0 and infer.activation_bytes() > 0
    # the ~3x rule is about forward + backward; the update is per parameter, not per sample (at batch 2
    # Adam's 15 FLOP per parameter outweighs the MLP's 4 forward FLOP per parameter)
    step = train.total_flop("forward") + train.total_flop("backward")
    # below 3x by the first layer's skipped data gradient: the MLP's dense1 (784 x 512) is ~60% of its
    # forward FLOP, so its step is ~3 - 0.6 = 2.4x (measured 6,431,970 / 2,678,922 = 2.401); LeNet-5's
    # c1 ~28%: 2.72x (4,631,152 / 1,704,858 = 2.716)
    assert 2.3 < step / infer.total_flop() < 3.6
    assert train.total_flop("update") >= 2 * train.param_count()
    for i in range(len(train)):  # topological order
        assert all(p < i for p in train.predecessors(i))
