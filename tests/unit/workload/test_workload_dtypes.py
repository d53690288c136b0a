import pytest

from archsim.errors import WorkloadError
from archsim.workload import DType, TensorSpec


def test_bytes_and_precision_keys():
    assert DType.fp64.bytes == 8
    assert DType.tf32.bytes == 4  # stored in a 32-bit container
    assert DType.bf16.bytes == 2
    assert DType.fp8_e4m3.bytes == 1 and DType.fp8_e5m2.precision == "fp8"
    assert DType.int4.bytes == 0.5 and DType.int4.bits == 4
    assert {d.precision for d in DType} == {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"}


def test_parse_accepts_names_aliases_and_members():
    assert DType.parse("fp16") is DType.fp16
    assert DType.parse("BFloat16") is DType.bf16
    assert DType.parse(DType.int8) is DType.int8
    assert DType("fp32") == "fp32"  # a str enum


def test_parse_rejects_unknown_and_lists_allowed():
    with pytest.raises(WorkloadError, match=r"dtype.*fp8_e4m3"):
        DType.parse("fp12")


def test_tensor_spec():
    t = TensorSpec((2, 3, 4), "fp16")
    assert t.numel == 24 and t.bytes == 48 and t.dtype is DType.fp16
    assert TensorSpec((3,), "int4").bytes == 1.5  # 3 elements * 4 bits = 12 bits
    with pytest.raises(WorkloadError, match="shape"):
        TensorSpec((2, 0), "fp32")
