"""The model zoo: ``archsim.zoo.resnet50(batch=32, training=True)``. A thin re-export of
:mod:`archsim.workload.zoo`."""

from archsim.workload.zoo import *  # noqa: F403
from archsim.workload.zoo import __all__  # noqa: F401
