"""The model zoo: reference networks as :class:`~archsim.workload.graph.OpGraph` values.

Every model is a function ``(batch=..., dtype="fp32", training=False, optimizer=..., **model args)``;
``training=True`` returns the training step (forward, backward, update; ~3x the forward FLOP, see
:mod:`archsim.workload.graph`). Parameter counts equal the reference implementations' (Keras
examples, torchvision, Hugging Face), cited in each docstring.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable
from typing import Any

from archsim.errors import WorkloadError
from archsim.workload.dtypes import as_int
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

def _checked(fn: Callable[..., OpGraph]) -> Callable[..., OpGraph]:
    """``fn`` with its arguments checked against its signature first: an unknown keyword, a float or
    string for an int (``image_size=224.5`` is not 224), a non-bool flag are WorkloadErrors naming it."""
    sig = inspect.signature(fn)
    name = fn.__name__

    @functools.wraps(fn)
    def model(*args: Any, **kwargs: Any) -> OpGraph:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise WorkloadError(f"zoo.{name}: {exc}; parameters: {', '.join(sig.parameters)}") from None
        for param, value in bound.arguments.items():
            annotation = sig.parameters[param].annotation
            where = f"zoo.{name}({param}=...)"
            if annotation == "int":
                as_int(value, where, minimum=1)
            elif annotation == "bool" and not isinstance(value, bool):
                raise WorkloadError(f"{where}: expected true or false, got {value!r}")
            elif annotation == "str" and not isinstance(value, str):
                raise WorkloadError(f"{where}: expected a string, got {value!r}")
        return fn(*args, **kwargs)

    # Pickled by reference (sweep workers) as archsim.workload.zoo.<name>, which is this wrapper.
    model.__module__ = __name__
    model.__qualname__ = name
    return model


mlp, mnist_cnn, cifar10_cnn, lenet5, alexnet, vgg16, resnet18, resnet50, mobilenet_v2 = (
    _checked(f) for f in (mlp, mnist_cnn, cifar10_cnn, lenet5, alexnet, vgg16, resnet18, resnet50, mobilenet_v2))
bert_base, bert_large, gpt2, llama_like = (_checked(f) for f in (bert_base, bert_large, gpt2, llama_like))

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
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(name), list(_MODELS), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise WorkloadError(f"zoo: unknown model {name!r}{hint} (models: {', '.join(list_models())})") from None
    return fn(**kwargs)
