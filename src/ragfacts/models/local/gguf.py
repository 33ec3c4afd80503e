"""What a GGUF file says about its model, read from its header without loading the weights.

Used for the model profile: a strategy is chosen by a model's size, not by its backend's name. The
parameter count is the sum of the tensors' element counts; `general.size_label` (e.g. "1.5B") and
`general.name` are read when present.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class GGUFInfo:
    """What the header tells: the parameter count and the name and size label the converter wrote."""

    parameters: int
    name: str | None = None
    size_label: str | None = None

    @property
    def billions(self) -> float:
        return self.parameters / 1e9


def read_gguf_info(path: Path) -> GGUFInfo:
    """Read a GGUF header; raises ValueError if the file is not GGUF."""
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        version = _unpack(handle, "<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version} is too old to read")
        tensors, pairs = _unpack(handle, "<Q"), _unpack(handle, "<Q")
        metadata: dict[str, Any] = {}
        for _ in range(pairs):
            key = _string(handle)
            value = _value(handle, _unpack(handle, "<I"), keep=key.startswith("general."))
            if key.startswith("general."):
                metadata[key] = value
        parameters = 0
        for _ in range(tensors):
            _string(handle)
            dims = [_unpack(handle, "<Q") for _ in range(_unpack(handle, "<I"))]
            handle.read(4 + 8)  # tensor type, data offset
            count = 1
            for dim in dims:
                count *= dim
            parameters += count
    name, label = metadata.get("general.name"), metadata.get("general.size_label")
    return GGUFInfo(parameters, name if isinstance(name, str) else None, label if isinstance(label, str) else None)


def _unpack(handle: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("the GGUF header ends early")
    return struct.unpack(fmt, data)[0]


def _string(handle: BinaryIO) -> str:
    return handle.read(_unpack(handle, "<Q")).decode("utf-8", errors="replace")


def _value(handle: BinaryIO, kind: int, keep: bool) -> Any:
    if kind in _SCALARS:
        return _unpack(handle, _SCALARS[kind])
    if kind == _STRING:
        return _string(handle)
    if kind == _ARRAY:
        item_kind, count = _unpack(handle, "<I"), _unpack(handle, "<Q")
        if item_kind in _SCALARS and not keep:
            handle.seek(struct.calcsize(_SCALARS[item_kind]) * count, 1)  # e.g. token scores: skip, not read
            return None
        return [_value(handle, item_kind, keep) for _ in range(count)]
    raise ValueError(f"unknown GGUF value type {kind}")
