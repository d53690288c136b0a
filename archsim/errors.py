"""The exception hierarchy of archsim.

Every error a user can cause (a bad preset, a malformed workload, an impossible engine
option) is an :class:`ArchsimError`, so callers can catch one type. Messages name the field,
the value and what was allowed.
"""

from __future__ import annotations


class ArchsimError(Exception):
    """Base class of every error raised by archsim for bad input."""


class UnitError(ArchsimError, ValueError):
    """A dimensioned value without a unit, with an unknown unit, or of the wrong dimension."""


class SchemaError(ArchsimError, ValueError):
    """A hardware description that does not validate (unknown field, bad value, inconsistency)."""


class PresetError(ArchsimError, LookupError):
    """An unknown preset id, or a preset file that cannot be read."""


class WorkloadError(ArchsimError, ValueError):
    """An operator or graph that is malformed (negative size, shape mismatch, cycle, bad ONNX)."""


class EngineError(ArchsimError, ValueError):
    """An engine asked to do something it cannot (unknown engine, unsupported op on a device)."""


class SweepError(ArchsimError, ValueError):
    """A sweep specification that names a missing axis or gives values it cannot apply."""
