"""The records every corpus builder writes: labels, fields, one JSON line a record, and the files of a build written
or, with ``--check``, compared byte for byte with the files already there."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

SEED = 20261123  # the quality corpus's seed; every generator of every build is seeded from it and a name

CONSISTENT = "consistent"
INCONSISTENT = "inconsistent"
LABELS = (CONSISTENT, INCONSISTENT)

FIELDS = (  # a record of the quality corpus
    "id",
    "lang",
    "question",
    "reference",
    "answer",
    "label",
    "error_type",
    "source",
    "licence",
    "source_id",
    "source_model",
    "task",
)
GROUPED_FIELDS = (*FIELDS, "group")  # a training record also names the group of its source document


def sha16(text: str) -> str:
    """The first 16 hex digits of the SHA-256 of ``text``: the key of a document in a group name."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def record(**fields: object) -> dict:
    """A record with every field of GROUPED_FIELDS, None where ``fields`` has no value."""
    return {key: fields.get(key) for key in GROUPED_FIELDS}


def dataset_of(item: dict) -> str:
    """The source dataset of a record: the first part of its id (``faithbench`` of ``faithbench-en-010012``)."""
    return item["id"].split("-", 1)[0]


def json_line(item: dict, fields: Sequence[str]) -> str:
    """The record's ``fields`` as one JSON line, on one physical line even for readers that split on U+2028,
    U+2029 or U+0085."""
    line = json.dumps({key: item[key] for key in fields}, ensure_ascii=False)
    return line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085") + "\n"


def dump_jsonl(items: Iterable[dict], fields: Sequence[str]) -> bytes:
    """The records in order, one JSON line each (``json_line``), as UTF-8."""
    return "".join(json_line(item, fields) for item in items).encode("utf-8")


def duplicate_problems(items: list[dict]) -> list[str]:
    """An id that two records have, or a (reference, answer) pair that two records have: one line each."""
    ids = Counter(item["id"] for item in items)
    pairs = Counter((item["reference"], item["answer"]) for item in items)
    return [f"duplicate id {i}" for i, n in ids.items() if n > 1] + [
        f"duplicate reference+answer pair: {pair[1][:60]!r}" for pair, n in pairs.items() if n > 1
    ]


def write_or_check(targets: Mapping[Path, bytes], check: bool) -> int:
    """Write each file (its folder made), or with ``check`` compare each with the file there.

    Returns the exit status: 1 when a file checked is missing or differs (each named on stderr), else 0.
    """
    if check:
        stale = [str(path) for path, data in targets.items() if not path.is_file() or path.read_bytes() != data]
        if stale:
            print(f"differs from the build: {', '.join(stale)}", file=sys.stderr)
            return 1
        folders = ", ".join(sorted({str(path.parent) for path in targets}))
        print(f"{len(targets)} file(s) in {folders} match the build")
        return 0
    for path, data in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return 0


def rebuild_rows(description: str, build: Callable[[], Mapping[str, list[dict]]], out: Path, prefix: str) -> int:
    """The command line of a builder of whole-row files (``--check``): ``build`` returns file name -> rows, written
    to ``<out>/<prefix>_<name>.jsonl`` one ``json.dumps`` line a row, or compared with the files there.

    Returns the exit status of ``write_or_check``.
    """
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the files written, write nothing")
    args = parser.parse_args()
    targets = {
        out / f"{prefix}_{name}.jsonl": "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
        for name, rows in build().items()
    }
    return write_or_check(targets, args.check)
