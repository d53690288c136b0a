"""The model zoo: reference networks as :class:`~archsim.workload.graph.OpGraph` values.

Every model is a function ``(batch=..., dtype="fp32", training=False, optimizer=..., **model args)``;
``training=True`` returns the training step (forward, backward, update; ~3x the forward FLOP, see
:mod:`archsim.workload.graph`). Parameter counts equal the reference implementations' (Keras
examples, torchvision, Hugging Face), cited in each docstring. The transformer models are imported
when first used (``zoo.gpt2``, ``zoo.get("gpt2")``), so building a CNN does not load them.
"""

from __future__ import annotations

import difflib
import functools
import importlib
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

_LAZY = ("bert_base", "bert_large", "gpt2", "llama_like", "GPT2_SIZES")
"""Names of :mod:`archsim.workload.zoo.transformers`, loaded on first use."""

__all__ = [  # noqa: F822 - the lazy names resolve through __getattr__
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

_MODELS: frozenset[str] = frozenset(("mlp", "mnist_cnn", "cifar10_cnn", "lenet5", "alexnet", "vgg16", "resnet18",
                                     "resnet50", "mobilenet_v2", "bert_base", "bert_large", "gpt2", "llama_like"))
"""Names of the zoo's models."""


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("archsim.workload.zoo.transformers"), name)
    if callable(value):
        value = _checked(value)
    globals()[name] = value  # later lookups bypass __getattr__ (and see this one wrapper)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def list_models() -> list[str]:
    """Names of the zoo's models, sorted."""
    return sorted(_MODELS)


def get(name: str, **kwargs: object) -> OpGraph:
    """Build the model ``name`` with ``kwargs``; an unknown name raises WorkloadError with close matches."""
    try:
        if name not in _MODELS:
            raise KeyError(name)
        fn: Callable[..., OpGraph] = globals()[name] if name in globals() else __getattr__(name)
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(name), list_models(), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise WorkloadError(f"zoo: unknown model {name!r}{hint} (models: {', '.join(list_models())})") from None
    return fn(**kwargs)
