"""Shared vocabulary of the hardware models: the strict base class, precisions and sources.

Every hardware model is a frozen pydantic model that forbids unknown fields, so a typo in a preset
is an error rather than a silently ignored key. Dimensioned fields have a plain TOML name
(``bandwidth``) and an SI Python name that ends in the unit (``bandwidth_bytes_per_s``); the TOML
name is the alias used for input, dumps and sweep paths.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Precision = Literal["fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"]
"""Arithmetic precisions a compute unit can be rated for (fp8 covers e4m3 and e5m2)."""

PRECISIONS: tuple[str, ...] = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4")

PRECISION_BITS: dict[str, int] = {
    "fp64": 64, "fp32": 32, "tf32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4,
}


class HardwareModel(BaseModel):
    """Base of every hardware model: frozen, strict about unknown keys, dumps by TOML name."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        str_strip_whitespace=True,
    )

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON dump: identifies a hardware point in results and stores."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def si(alias: str, *, gt: float | None = None, description: str = "", default: Any = ...) -> Any:
    """A dimensioned field: TOML name ``alias``, optional strict lower bound ``gt``."""
    return Field(default, alias=alias, gt=gt, description=description or None)


class Source(HardwareModel):
    """Where the numbers of a preset come from: a URL or a document, and the fields it supports."""

    url: str | None = None
    document: str | None = None
    fields: list[str] = Field(min_length=1, description="dotted field names this source supports")
    note: str | None = None

    def model_post_init(self, _context: Any) -> None:
        if not self.url and not self.document:
            raise ValueError("a source needs a 'url' or a 'document'")
