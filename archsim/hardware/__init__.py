"""Typed hardware models: the vocabulary of machines (see models/README.md for the TOML schema)."""

from archsim.hardware.base import PRECISION_BITS, PRECISIONS, HardwareModel, Precision, Source
from archsim.hardware.cpu import BranchPredictor, CPUCore, CPUDevice, CPUEfficiency
from archsim.hardware.energy import EnergyTable, PowerModel
from archsim.hardware.gpu import GPUDevice, GPUEfficiency, StreamingMultiprocessor, TensorCore
from archsim.hardware.memory import DRAM, Cache, Link
from archsim.hardware.pim import PIMDevice, PIMEfficiency, PIMUnit
from archsim.hardware.system import Device, Hardware, System

__all__ = [
    "PRECISIONS", "PRECISION_BITS", "Precision", "HardwareModel", "Source",
    "BranchPredictor", "CPUCore", "CPUDevice", "CPUEfficiency",
    "EnergyTable", "PowerModel",
    "GPUDevice", "GPUEfficiency", "StreamingMultiprocessor", "TensorCore",
    "DRAM", "Cache", "Link",
    "PIMDevice", "PIMEfficiency", "PIMUnit",
    "Device", "Hardware", "System",
]
