"""One reader for every dataset file: JSONL, JSON and CSV become rows (column -> value) with their place.

- JSONL is split on "\\n" only: U+2028, U+0085 and lone "\\r" inside a line are text, not line breaks.
- JSON is an array of objects, an object holding one such array, or an object of equal-length columns.
- CSV is read strictly: an unterminated quote is an error naming the line it started on, never merged rows.
- The text must be UTF-8 (a byte-order mark is allowed); anything else is an error naming where it breaks.
Column names are kept as written; matching them is the layouts' job.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUFFIXES = (".jsonl", ".json", ".csv")
Row = tuple[str, dict[str, Any]]  # (where, e.g. "line 3"; the row)


class DatasetError(ValueError):
    """Input data that cannot be used; the message names the file, the row and, where it can, the fix."""


def check_readable(path: Path) -> str:
    """Return the file's SHA-256 after checking it is a readable, UTF-8 dataset file of a known type."""
    if path.suffix.lower() not in SUFFIXES:
        raise DatasetError(f"{path}: unsupported file type {path.suffix or '(none)'}; use .jsonl, .json or .csv")
    if not path.is_file():
        raise DatasetError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as error:
                    where = offset + error.start
                    line += chunk[: error.start].count(b"\n")
                    raise DatasetError(
                        f"{path}: not UTF-8 text (byte 0x{chunk[error.start]:02x} at offset {where}, line {line}); "
                        "save the file as UTF-8"
                    ) from error
                line += chunk.count(b"\n")
                offset += len(chunk)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        raise DatasetError(f"{path}: not UTF-8 text (the file ends inside a character); save it as UTF-8") from error
    except OSError as error:
        raise DatasetError(f"{path}: cannot read: {error}") from error
    return digest.hexdigest()


def read_rows(path: Path) -> Iterator[Row]:
    """Yield (where, row) for every row of a .jsonl, .json or .csv file; raises DatasetError."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _jsonl_rows(path)
    if suffix == ".json":
        return _json_rows(path)
    if suffix == ".csv":
        return _csv_rows(path)
    raise DatasetError(f"{path}: unsupported file type {suffix or '(none)'}; use .jsonl, .json or .csv")


def _jsonl_rows(path: Path) -> Iterator[Row]:
    # newline="\n": only "\n" ends a line; "\r\n" leaves a "\r" that JSON reads as whitespace.
    with path.open(encoding="utf-8-sig", newline="\n") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise DatasetError(f"{path}: line {number}: not JSON ({error.msg}, column {error.colno})") from error
            if not isinstance(row, dict):
                raise DatasetError(f"{path}: line {number}: expected a JSON object, got {type(row).__name__}")
            yield f"line {number}", row


def _json_rows(path: Path) -> Iterator[Row]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}: not JSON ({error.msg}, line {error.lineno}, column {error.colno})") from error
    rows = _json_records(data, path)
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise DatasetError(f"{path}: record {number}: expected a JSON object, got {type(row).__name__}")
        yield f"record {number}", row


def _json_records(data: Any, path: Path) -> list[Any]:
    """The records of a JSON document: an array, an object holding one array, or columns of equal length."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        arrays = [value for value in data.values() if isinstance(value, list)]
        if len(data) == 1 and arrays and all(isinstance(r, dict) for r in arrays[0]):
            return arrays[0]  # {"data": [{...}, ...]}
        if data and len(arrays) == len(data) and len({len(a) for a in arrays}) == 1:
            columns = list(data)
            return [dict(zip(columns, values, strict=True)) for values in zip(*arrays, strict=True)]
    raise DatasetError(f"{path}: expected an array of objects (or an object of equal-length columns)")


def _csv_rows(path: Path) -> Iterator[Row]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # references can exceed the 128 KiB default
    # utf-8-sig: spreadsheet exports of Chinese data start with a byte-order mark
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, strict=True)
        header = _csv_record(reader, path, start=1)
        if header is None or not any(name.strip() for name in header):
            raise DatasetError(f"{path}: the file is empty; expected a header row")
        while True:
            start = reader.line_num + 1
            values = _csv_record(reader, path, start)
            if values is None:
                return
            if not any(value.strip() for value in values):
                continue
            if len(values) != len(header):
                raise DatasetError(
                    f"{path}: line {start} has {len(values)} fields, the header {len(header)} "
                    "(an unquoted comma or line break in a value?)"
                )
            yield f"line {start}", dict(zip(header, values, strict=True))


def _csv_record(reader: Any, path: Path, start: int) -> list[str] | None:
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as error:
        hint = " (a quote opened here is never closed)" if "end of data" in str(error) else ""
        raise DatasetError(f"{path}: line {start}: malformed CSV: {error}{hint}") from error
