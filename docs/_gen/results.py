"""Tables of the measured results, generated from `benchmarks/results/*.json`.

A page asks for a table with a marker line, `<!-- results: TABLE_ID -->`; `fill_tables` replaces it with the
table rendered from the JSON file that table reads. A JSON file that no table reads is shown by
`render_unlisted` as its plain values, so every result file reaches the documentation.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _gen.markdown import cell, code, table

MARKER = re.compile(r"^<!-- results: ([\w.-]+) -->$", re.MULTILINE)
ANSWER_TYPES = ("answer", "ungrounded_answer", "poor_answer")


@dataclass(frozen=True)
class ResultsTable:
    """One generated table: the JSON file it reads and the function that renders it."""

    file: str
    render: Callable[[Any], str]


TABLES: dict[str, ResultsTable] = {}


def results_table(table_id: str, file: str) -> Callable[[Callable[[Any], str]], Callable[[Any], str]]:
    """Register a renderer of `file`'s JSON as the table `table_id`."""

    def register(render: Callable[[Any], str]) -> Callable[[Any], str]:
        TABLES[table_id] = ResultsTable(file, render)
        return render

    return register


def markers(markdown: str) -> list[str]:
    """The table ids a page asks for."""
    return MARKER.findall(markdown)


def load_tables() -> dict[str, ResultsTable]:
    """Every registered table (importing the modules that register them)."""
    importlib.import_module("_gen.tables_accuracy")
    importlib.import_module("_gen.tables_speed")
    importlib.import_module("_gen.tables_rag_en")
    return TABLES


def render_table(table_id: str, results_dir: Path) -> str:
    """The Markdown of one table, with the file it comes from; KeyError for an unknown id."""
    entry = load_tables()[table_id]
    data = json.loads((results_dir / entry.file).read_text(encoding="utf-8"))
    return entry.render(data) + f"\n<small>Source: `benchmarks/results/{entry.file}`</small>\n"


def fill_tables(markdown: str, results_dir: Path) -> str:
    """`markdown` with every results marker replaced by its table."""
    return MARKER.sub(lambda match: render_table(match.group(1), results_dir), markdown)


def unlisted_files(results_dir: Path) -> list[Path]:
    """The result files that no registered table reads."""
    read = {entry.file for entry in load_tables().values()}
    return [path for path in sorted(results_dir.glob("*.json")) if path.name not in read]


def render_unlisted(results_dir: Path) -> str:
    """Every result file without a table of its own, as its top-level values (its provenance is in the index)."""
    parts = []
    for path in unlisted_files(results_dir):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            data = {key: value for key, value in data.items() if key != "provenance"}
        rows = [[code(key), cell(_short(value))] for key, value in _flatten(data)]
        parts.append(f"### `{path.name}`\n\n" + table(["value", ""], rows[:60]))
    return "\n".join(parts) or "Every result file has a table of its own.\n"


def provenance_of(data: Any) -> dict[str, Any] | None:
    """What made a results file: its "provenance" block (a head file's is in its training manifest), or the same
    fields at the top level, where a script writes them there (`command`, `commit`, `data` or `sources`, `machine`);
    None where the file records neither."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("provenance"), dict):
        return data["provenance"]
    if isinstance(data.get("training"), dict) and isinstance(data["training"].get("provenance"), dict):
        return data["training"]["provenance"]
    if "command" in data and ("commit" in data or "machine" in data):
        return {
            "command": data["command"],
            "commit": data.get("commit"),
            "data": data.get("data", data.get("sources")),
            "machine": data.get("machine"),
        }
    return None


def made_by(data: Any) -> str:
    """The command and the commit of a results file, in a few words for a table."""
    found = provenance_of(data)
    if not found:
        return "not recorded"
    commit = found.get("commit") or found.get("committed_in") or ""
    revision, plus, changes = commit.partition("+")
    short = revision[:7] + plus + changes
    when = f"commit {short}" if found.get("commit") else f"committed in {short}" if commit else ""
    return ", ".join(part for part in (code(found["command"]), cell(when)) if part)


def _flatten(data: Any, prefix: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(data, dict) and prefix.count(".") < 2:
        for key, value in data.items():
            yield from _flatten(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix or "(value)", data


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
    return text if len(text) <= 120 else text[:117] + "..."


# Number formats: shares as percentages, intervals as "value [low, high]".


def pct(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}"


def interval(stat: dict[str, float] | None, scale: float = 100, digits: int = 1) -> str:
    """'76.1 [71.9, 80.2]' from {"value", "low", "high"}."""
    if not stat:
        return "-"
    values = [stat["value"] * scale, stat["low"] * scale, stat["high"] * scale]
    return f"{values[0]:.{digits}f} [{values[1]:.{digits}f}, {values[2]:.{digits}f}]"


def count(value: float) -> str:
    return f"{value:,.0f}"
