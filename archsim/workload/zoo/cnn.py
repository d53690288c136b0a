"""Convolutional and dense image models, as defined by their reference implementations.

Each function returns the inference graph, or the training step (:func:`training_step`) when
``training=True``; ``optimizer`` picks the update. Images are NCHW; the Keras examples (channels-last
in Keras) have the same counts.
"""

from __future__ import annotations

from archsim.workload.dtypes import DType
from archsim.workload.graph import OpGraph, Value
from archsim.workload.zoo._net import Net, finish

__all__ = ["mlp", "mnist_cnn", "cifar10_cnn", "lenet5", "alexnet", "vgg16", "resnet18", "resnet50", "mobilenet_v2"]


def mlp(batch: int = 128, dtype: DType | str = "fp32", training: bool = False, optimizer: str = "adam") -> OpGraph:
    """The Keras MNIST MLP (keras-team/keras ``examples/mnist_mlp.py``): 784-512-512-10, ReLU, dropout 0.2,
    softmax. 669,706 parameters (the example's ``model.summary()``)."""
    net = Net("mlp", batch, dtype, training)
    x = net.b.input((batch, 784))
    for i in (1, 2):
        x = net.act(net.linear(x, 512, name=f"dense{i}"), name=f"relu{i}")
        x = net.dropout(x, name=f"dropout{i}")
    x = net.linear(x, 10, name="dense3")
    net.softmax(x, 10)
    return finish(net, training, optimizer)


def mnist_cnn(batch: int = 128, dtype: DType | str = "fp32", training: bool = False,
              optimizer: str = "adam") -> OpGraph:
    """The Keras MNIST CNN (``examples/mnist_cnn.py``): conv32 3x3, conv64 3x3, maxpool 2, dropout 0.25,
    dense128, dropout 0.5, dense10 softmax; 28x28x1 input. 1,199,882 parameters."""
    net = Net("mnist_cnn", batch, dtype, training)
    x = net.b.input((batch, 1, 28, 28))
    x = net.act(net.conv(x, 32, 3, bias=True, name="conv1"), name="relu1")
    x = net.act(net.conv(x, 64, 3, bias=True, name="conv2"), name="relu2")
    x = net.dropout(net.pool(x, 2, name="pool"), name="dropout1")
    x = net.act(net.linear(x, 128, name="dense1"), name="relu3")
    x = net.linear(net.dropout(x, name="dropout2"), 10, name="dense2")
    net.softmax(x, 10)
    return finish(net, training, optimizer)


def cifar10_cnn(batch: int = 32, dtype: DType | str = "fp32", training: bool = False,
                optimizer: str = "adam") -> OpGraph:
    """The Keras CIFAR-10 CNN (``examples/cifar10_cnn.py``): conv32 same, conv32, maxpool, dropout,
    conv64 same, conv64, maxpool, dropout, dense512, dropout, dense10 softmax; 32x32x3 input.
    1,250,858 parameters."""
    net = Net("cifar10_cnn", batch, dtype, training)
    x = net.b.input((batch, 3, 32, 32))
    for stage, ch in ((1, 32), (2, 64)):
        x = net.act(net.conv(x, ch, 3, padding=1, bias=True, name=f"conv{stage}a"), name=f"relu{stage}a")
        x = net.act(net.conv(x, ch, 3, bias=True, name=f"conv{stage}b"), name=f"relu{stage}b")
        x = net.dropout(net.pool(x, 2, name=f"pool{stage}"), name=f"dropout{stage}")
    x = net.act(net.linear(x, 512, name="dense1"), name="relu3")
    x = net.linear(net.dropout(x, name="dropout3"), 10, name="dense2")
    net.softmax(x, 10)
    return finish(net, training, optimizer)


def lenet5(batch: int = 1, dtype: DType | str = "fp32", training: bool = False, optimizer: str = "sgd") -> OpGraph:
    """LeNet-5 (LeCun et al., "Gradient-based learning applied to document recognition", 1998) in its
    common modern form: full C3 connectivity, average pooling without coefficients, tanh, a dense
    output layer; 32x32x1 input. 61,706 parameters (the paper's version with sparse C3 and RBF output
    has 60,840)."""
    net = Net("lenet5", batch, dtype, training)
    x = net.b.input((batch, 1, 32, 32))
    x = net.pool(net.act(net.conv(x, 6, 5, bias=True, name="c1"), "tanh"), 2, mode="avg", name="s2")
    x = net.pool(net.act(net.conv(x, 16, 5, bias=True, name="c3"), "tanh"), 2, mode="avg", name="s4")
    x = net.act(net.conv(x, 120, 5, bias=True, name="c5"), "tanh")
    x = net.act(net.linear(x, 84, name="f6"), "tanh")
    x = net.linear(x, 10, name="output")
    net.softmax(x, 10)
    return finish(net, training, optimizer)


def alexnet(batch: int = 1, dtype: DType | str = "fp32", training: bool = False, optimizer: str = "sgd") -> OpGraph:
    """AlexNet as in torchvision (single-tower variant of Krizhevsky et al. 2012, "One weird trick",
    Krizhevsky 2014); 224x224 input. torchvision: 61,100,840 parameters, 0.71 GMAC."""
    net = Net("alexnet", batch, dtype, training)
    x = net.b.input((batch, 3, 224, 224))
    x = net.pool(net.act(net.conv(x, 64, 11, 4, 2, bias=True, name="conv1")), 3, 2, name="pool1")
    x = net.pool(net.act(net.conv(x, 192, 5, 1, 2, bias=True, name="conv2")), 3, 2, name="pool2")
    x = net.act(net.conv(x, 384, 3, 1, 1, bias=True, name="conv3"))
    x = net.act(net.conv(x, 256, 3, 1, 1, bias=True, name="conv4"))
    x = net.pool(net.act(net.conv(x, 256, 3, 1, 1, bias=True, name="conv5")), 3, 2, name="pool5")
    for i in (6, 7):
        x = net.act(net.linear(net.dropout(x), 4096, name=f"fc{i}"))
    net.linear(x, 1000, name="fc8")
    return finish(net, training, optimizer)


def vgg16(batch: int = 1, dtype: DType | str = "fp32", training: bool = False, optimizer: str = "sgd") -> OpGraph:
    """VGG-16 (Simonyan & Zisserman 2015, configuration D) as in torchvision, without batch norm;
    224x224 input. 138,357,544 parameters, 15.47 GMAC."""
    net = Net("vgg16", batch, dtype, training)
    x = net.b.input((batch, 3, 224, 224))
    cfg = [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]]
    for s, stage in enumerate(cfg, start=1):
        for j, ch in enumerate(stage, start=1):
            x = net.act(net.conv(x, ch, 3, 1, 1, bias=True, name=f"conv{s}_{j}"))
        x = net.pool(x, 2, name=f"pool{s}")
    for i in (1, 2):
        x = net.dropout(net.act(net.linear(x, 4096, name=f"fc{i}")))
    net.linear(x, 1000, name="fc3")
    return finish(net, training, optimizer)


def _basic_block(net: Net, x: Value, width: int, stride: int, name: str) -> Value:
    identity = x
    y = net.act(net.bn(net.conv(x, width, 3, stride, 1, name=f"{name}.conv1"), f"{name}.bn1"), name=f"{name}.relu1")
    y = net.bn(net.conv(y, width, 3, 1, 1, name=f"{name}.conv2"), f"{name}.bn2")
    if stride != 1 or x.shape[1] != width:
        identity = net.bn(net.conv(x, width, 1, stride, name=f"{name}.downsample"), f"{name}.downsample_bn")
    return net.act(net.add(y, identity, name=f"{name}.add"), name=f"{name}.relu")


def _bottleneck(net: Net, x: Value, width: int, stride: int, name: str) -> Value:
    identity = x
    out = width * 4
    y = net.act(net.bn(net.conv(x, width, 1, name=f"{name}.conv1"), f"{name}.bn1"), name=f"{name}.relu1")
    # torchvision's ResNet v1.5: the stride sits on the 3x3 convolution.
    y = net.act(net.bn(net.conv(y, width, 3, stride, 1, name=f"{name}.conv2"), f"{name}.bn2"), name=f"{name}.relu2")
    y = net.bn(net.conv(y, out, 1, name=f"{name}.conv3"), f"{name}.bn3")
    if stride != 1 or x.shape[1] != out:
        identity = net.bn(net.conv(x, out, 1, stride, name=f"{name}.downsample"), f"{name}.downsample_bn")
    return net.act(net.add(y, identity, name=f"{name}.add"), name=f"{name}.relu")


def _resnet(name: str, blocks: list[int], bottleneck: bool, batch: int, dtype: DType | str, training: bool,
            optimizer: str, image_size: int) -> OpGraph:
    net = Net(name, batch, dtype, training)
    x = net.b.input((batch, 3, image_size, image_size))
    x = net.act(net.bn(net.conv(x, 64, 7, 2, 3, name="conv1"), "bn1"), name="relu")
    x = net.pool(x, 3, 2, 1, name="maxpool")
    block = _bottleneck if bottleneck else _basic_block
    for stage, (count, width) in enumerate(zip(blocks, (64, 128, 256, 512), strict=True), start=1):
        for i in range(count):
            stride = 2 if (i == 0 and stage > 1) else 1
            x = block(net, x, width, stride, f"layer{stage}.{i}")
    x = net.global_avg_pool(x, name="avgpool")
    net.linear(x, 1000, name="fc")
    return finish(net, training, optimizer)


def resnet18(batch: int = 1, dtype: DType | str = "fp32", training: bool = False, optimizer: str = "sgd",
             image_size: int = 224) -> OpGraph:
    """ResNet-18 (He et al. 2016) as in torchvision. 11,689,512 parameters, 1.81 GMAC at 224x224."""
    return _resnet("resnet18", [2, 2, 2, 2], False, batch, dtype, training, optimizer, image_size)


def resnet50(batch: int = 1, dtype: DType | str = "fp32", training: bool = False, optimizer: str = "sgd",
             image_size: int = 224) -> OpGraph:
    """ResNet-50 v1.5 (He et al. 2016; stride on the 3x3 conv) as in torchvision. 25,557,032 parameters
    ("25.6M"), 4.09 GMAC at 224x224 (torchvision model table)."""
    return _resnet("resnet50", [3, 4, 6, 3], True, batch, dtype, training, optimizer, image_size)


def mobilenet_v2(batch: int = 1, dtype: DType | str = "fp32", training: bool = False, optimizer: str = "sgd",
                 image_size: int = 224) -> OpGraph:
    """MobileNetV2 (Sandler et al. 2018, width 1.0) as in torchvision: inverted residuals with ReLU6
    (``clip``) and depthwise 3x3 convolutions. 3,504,872 parameters, 300 M multiply-adds at 224x224
    (paper Table 4: 3.4M, 300M)."""
    net = Net("mobilenet_v2", batch, dtype, training)
    x = net.b.input((batch, 3, image_size, image_size))
    x = net.act(net.bn(net.conv(x, 32, 3, 2, 1, name="features.0"), "features.0.bn"), "clip")
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                (6, 320, 1, 1)]
    idx = 1
    for t, c, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            name = f"features.{idx}"
            inp = x.shape[1]
            hidden = inp * t
            y = x
            if t != 1:
                y = net.act(net.bn(net.conv(y, hidden, 1, name=f"{name}.expand"), f"{name}.expand_bn"), "clip")
            y = net.act(net.bn(net.conv(y, hidden, 3, stride, 1, groups=hidden, name=f"{name}.dw"), f"{name}.dw_bn"),
                        "clip")
            y = net.bn(net.conv(y, c, 1, name=f"{name}.project"), f"{name}.project_bn")
            x = net.add(y, x, name=f"{name}.add") if (stride == 1 and inp == c) else y
            idx += 1
    x = net.act(net.bn(net.conv(x, 1280, 1, name=f"features.{idx}"), f"features.{idx}.bn"), "clip")
    x = net.global_avg_pool(x, name="avgpool")
    net.linear(net.dropout(x), 1000, name="classifier")
    return finish(net, training, optimizer)
