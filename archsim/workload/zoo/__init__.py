"""The model zoo: reference networks as :class:`~archsim.workload.graph.OpGraph` values.

Every model is a function ``(batch=..., dtype="fp32", training=False, optimizer=..., **model args)``;
``training=True`` returns the training step (forward, backward, update; ~3x the forward FLOP, see
:mod:`archsim.workload.graph`). Parameter counts equal the reference implementations' (Keras
examples, torchvision, Hugging Face), cited in each docstring.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable

from archsim.errors import WorkloadError
from archsim.workload.graph import OpGraph
from archsim.workload.zoo.cnn import (
    alexnet,
    cifar10_cnn,
    lenet5,
    mlp,
    mnist_cnn,
    mobilenet_v2,
    resnet18,
    resnet50,
    vgg16,
)
from archsim.workload.zoo.transformers import GPT2_SIZES, bert_base, bert_large, gpt2, llama_like

__all__ = [
    "mlp",
    "mnist_cnn",
    "cifar10_cnn",
    "lenet5",
    "alexnet",
    "vgg16",
    "resnet18",
    "resnet50",
    "mobilenet_v2",
    "bert_base",
    "bert_large",
    "gpt2",
    "llama_like",
    "GPT2_SIZES",
    "list_models",
    "get",
]

_MODELS: dict[str, Callable[..., OpGraph]] = {
    f.__name__: f
    for f in (mlp, mnist_cnn, cifar10_cnn, lenet5, alexnet, vgg16, resnet18, resnet50, mobilenet_v2, bert_base,
              bert_large, gpt2, llama_like)
}


def list_models() -> list[str]:
    """Names of the zoo's models, sorted."""
    return sorted(_MODELS)


def get(name: str, **kwargs: object) -> OpGraph:
    """Build the model ``name`` with ``kwargs``; an unknown name raises WorkloadError with close matches."""
    try:
        fn = _MODELS[name]
    except KeyError:
        close = difflib.get_close_matches(str(name), list(_MODELS), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise WorkloadError(f"zoo: unknown model {name!r}{hint} (models: {', '.join(list_models())})") from None
    try:
        inspect.signature(fn).bind(**kwargs)
    except TypeError as exc:  # an argument the model does not take
        raise WorkloadError(f"zoo.{name}: {exc}") from None
    return fn(**kwargs)
