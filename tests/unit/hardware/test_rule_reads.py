"""The fields each cross-field rule declares it reads (archsim.hardware.base.reads) against its code:
the rule reads its model only as ``self.<field>`` of exactly those fields and returns ``self``."""

from __future__ import annotations

import dis
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import archsim  # noqa: F401 - imports every hardware model
from archsim.hardware.base import HardwareModel, reads, rule_reads


def _models(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _models(sub)


_RULES = sorted({(cls.__name__, name, d.func) for cls in _models(HardwareModel)
                 for name, d in cls.__pydantic_decorators__.model_validators.items()
                 if cls.__module__.startswith("archsim.")}, key=lambda r: (r[0], r[1]))


def _self_reads(rule: Any) -> set[str]:
    """The attributes the rule's code reads of its one argument; AssertionError where it uses the
    argument any other way (passes it on, calls a method on it, captures or replaces it) or returns
    anything else."""
    code = rule.__code__
    assert code.co_argcount == 1 and not code.co_kwonlyargcount, "a rule of one argument"
    this = code.co_varnames[0]
    assert this not in code.co_cellvars, "the model captured by a nested function"
    ins = list(dis.get_instructions(code))
    found: set[str] = set()
    for k, i in enumerate(ins):
        if i.opname.startswith("RETURN"):
            assert i.opname == "RETURN_VALUE" and not i.is_jump_target, f"return at {i.offset}"
            assert ins[k - 1].opname == "LOAD_FAST" and ins[k - 1].argval == this, f"return at {i.offset}"
        if "FAST" in i.opname and (i.argval == this or (isinstance(i.argval, tuple) and this in i.argval)):
            assert i.opname == "LOAD_FAST", f"{i.opname} of the model at {i.offset}"
            after = ins[k + 1]
            if after.opname == "LOAD_ATTR":
                # from Python 3.12 a method's load is a LOAD_ATTR with the low bit of its argument set
                assert not (sys.version_info >= (3, 12) and after.arg & 1), f"a method of the model at {after.offset}"
                found.add(after.argval)
            else:
                assert after.opname == "RETURN_VALUE", f"the model used by {after.opname} at {after.offset}"
    return found


def test_every_rule_of_the_hardware_models_declares_its_reads() -> None:
    assert len(_RULES) >= 9
    undeclared = [(c, n) for c, n, f in _RULES if rule_reads(f) is None]
    assert not undeclared


@pytest.mark.parametrize(("cls_name", "name", "rule"), _RULES, ids=[f"{c}.{n}" for c, n, _ in _RULES])
def test_declared_reads_are_what_the_rule_reads(cls_name: str, name: str, rule: Any) -> None:
    cls = next(c for c in _models(HardwareModel) if c.__name__ == cls_name)
    declared = rule_reads(rule)
    assert declared is not None
    assert declared <= set(cls.model_fields)
    assert _self_reads(rule) == declared


def test_the_checker_refuses_other_uses_of_the_model() -> None:
    def passes_it_on(self: Any) -> Any:
        print(self)
        return self

    def calls_a_method(self: Any) -> Any:
        self.model_dump()
        return self

    def returns_another(self: Any) -> Any:
        return self.l2

    def captures_it(self: Any) -> Any:
        return (lambda: self.l2)() and self

    for bad in (passes_it_on, calls_a_method, returns_another, captures_it):
        with pytest.raises(AssertionError):
            _self_reads(bad)

    def fine(self: Any) -> Any:
        if self.l2.size_bytes <= self.sm.l1.size_bytes:
            raise ValueError("no")
        return self

    assert _self_reads(fine) == {"l2", "sm"}


def test_reads_marks_the_function_and_undeclared_rules_have_none() -> None:
    def rule(self: Any) -> Any:
        return self

    assert rule_reads(rule) is None
    assert reads("a", "b")(rule) is rule
    assert rule_reads(rule) == frozenset({"a", "b"})
