"""The model zoo: ``archsim.zoo.resnet50(batch=32, training=True)``. A thin re-export of
:mod:`archsim.workload.zoo`, name by name on first use (the transformer models stay unimported until
one is asked for)."""

from __future__ import annotations

from archsim._lazy import lazy_names
from archsim.workload.zoo import __all__

__getattr__, __dir__ = lazy_names(__name__, globals(), dict.fromkeys(__all__, "archsim.workload.zoo"))
