"""What a report is made of: one or more run directories read back, summarised, scored and compared.

A report needs only the run directory: the items travel in results.jsonl, the configuration in
manifest.json, the cost in ledger.json. Only the current lines count (those of the manifest's methods with
its configuration hash). `report_markdown` renders the same content as text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragfacts.bench.metrics import ClassificationMetrics, error_type_name
from ragfacts.bench.recall_metrics import RecallMetrics
from ragfacts.bench.scoring import bench_tables, item_language, score
from ragfacts.bench.tables import TableData, markdown_code, markdown_text, to_markdown
from ragfacts.bench.tradeoff import TradeOff, cascade_tradeoff, tradeoff_table
from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.reader import DatasetError, check_readable
from ragfacts.items import Item
from ragfacts.methods.base import Kind, Outcome
from ragfacts.report.display import nothing_judged, score_text, upper_text
from ragfacts.report.views import result_view
from ragfacts.runs.manifest import Manifest
from ragfacts.runs.rundir import RunDir, RunError
from ragfacts.runs.summary import RULE, MethodSummary, summarise_method


@dataclass
class RunData:
    """One run directory, read back for a report."""

    name: str
    path: Path
    manifest: Manifest
    ledger: dict[str, Any]
    methods: list[dict[str, Any]]  # key, name, kind, options
    items: dict[str, Item] = field(default_factory=dict)  # by id, in file order
    lines: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # item id -> method -> line
    summaries: list[MethodSummary] = field(default_factory=list)
    precision: list[ClassificationMetrics] = field(default_factory=list)
    recall: list[RecallMetrics] = field(default_factory=list)
    tradeoffs: list[TradeOff] = field(default_factory=list)  # cascades run with bench --escalate-to

    def kinds(self) -> dict[str, Kind]:
        return {m["key"]: m["kind"] for m in self.methods}

    def judged(self) -> Iterator[tuple[Item, dict[str, dict[str, Any]]]]:
        for item_id, item in self.items.items():
            yield item, self.lines.get(item_id, {})


def load_run(path: str | Path) -> RunData:
    """Read a run directory (or OUT.jsonl with its files); raises RunError if it holds no ragfacts run."""
    run_dir = RunDir(path)
    manifest = run_dir.load_manifest()
    if manifest is None:
        raise RunError(f"{path}: no manifest ({run_dir.manifest.name}); give a run directory made by ragfacts")
    methods = [m.model_dump(mode="json", exclude_unset=True) for m in manifest.methods]
    configs = manifest.configs()
    run = RunData(Path(path).name, Path(path), manifest, run_dir.load_ledger(), methods)
    for line in run_dir.lines():
        if configs.get(line["method"]) != line["config_hash"]:
            continue  # a result of another configuration: not part of this run
        item = run.items.setdefault(line["id"], Item.model_validate(line["item"]))
        run.lines.setdefault(item.id or line["id"], {})[line["method"]] = line
    run.items = _in_input_order(run.items, manifest, run.lines)
    outcomes: dict[str, list[Outcome]] = {m["key"]: [] for m in methods}
    for by_method in run.lines.values():
        for method, line in by_method.items():
            outcomes[method].append(Outcome.model_validate(line["outcome"]))
    run.summaries = [
        summarise_method(m["key"], m["kind"], len(outcomes[m["key"]]), outcomes[m["key"]]) for m in methods
    ]
    run.precision, run.recall = score(run.kinds(), run.judged())
    for method in run.kinds():
        lines = [(item, by[method]) for item, by in run.judged() if method in by]
        if lines and "first_outcome" in (lines[0][1].get("result") or {}):
            found = cascade_tradeoff(method, lines)
            if found is not None:
                run.tradeoffs.append(found)
    return run


def _in_input_order(
    items: dict[str, Item], manifest: Manifest, lines: dict[str, dict[str, dict[str, Any]]]
) -> dict[str, Item]:
    """The items in the order of the dataset's rows (results.jsonl holds them in the order they were judged): read
    from the dataset where it is still there unchanged, else from the row each line records (rows given in memory;
    lines written by versions without it keep their order). Items the file no longer yields come last."""
    dataset = manifest.dataset
    path, sha256 = Path(dataset.path or ""), dataset.sha256
    if not sha256 or not path.is_file():
        return _by_recorded_row(items, lines)
    try:
        if check_readable(path) != sha256:
            return _by_recorded_row(items, lines)
        order = [item.id for item in Dataset.open(path, dataset.columns or None).items()]
    except DatasetError:
        return _by_recorded_row(items, lines)
    ordered = {item_id: items[item_id] for item_id in order if item_id in items}
    return ordered | {item_id: item for item_id, item in items.items() if item_id not in ordered}


def _by_recorded_row(items: dict[str, Item], lines: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Item]:
    rows: dict[str, int] = {}
    for item_id in items:
        recorded = [line.get("row") for line in lines.get(item_id, {}).values()]
        known = [row for row in recorded if isinstance(row, int)]
        if not known or len(known) < len(recorded):
            return items  # lines from a version that did not record it: as they are
        rows[item_id] = min(known)
    return dict(sorted(items.items(), key=lambda entry: rows[entry[0]]))


def load_runs(paths: Sequence[str | Path]) -> list[RunData]:
    """Read several runs for one report; runs whose folders share a name are told apart by their parents."""
    runs = [load_run(path) for path in paths]
    names = [run.name for run in runs]
    for run in runs:
        if names.count(run.name) > 1:
            parts = run.path.resolve().parts
            run.name = "/".join(parts[-2:]) if len(parts) > 1 else run.name
    seen: dict[str, int] = {}
    for run in runs:  # the same folder twice, or parents that still collide: number them
        seen[run.name] = seen.get(run.name, 0) + 1
        if seen[run.name] > 1:
            run.name = f"{run.name} ({seen[run.name]})"
    return runs


def report_payload(runs: Sequence[RunData]) -> dict[str, Any]:
    """The per-answer data the HTML report embeds: items with their results in every run, and filter flags."""
    references: dict[str, int] = {}
    items: dict[str, dict[str, Any]] = {}
    for index, run in enumerate(runs):
        for item, lines in run.judged():
            entry = items.get(item.id or "")
            if entry is None:
                reference = item.reference or ""
                entry = items[item.id or ""] = {
                    "id": item.id,
                    "lang": item_language(item),
                    "question": item.question or "",
                    "answer": item.answer,
                    "ref": references.setdefault(reference, len(references)) if reference else -1,
                    "gold": item.label,
                    "error_type": error_type_name(item.error_type) if item.error_type else None,
                    "answer_type": item.answer_type,
                    "results": [],
                }
            for method, line in lines.items():
                entry["results"].append([index, method, result_view(method, line["result"], line["outcome"])])
    order = [{m["key"]: n for n, m in enumerate(run.methods)} for run in runs]
    for entry in items.values():
        entry["results"].sort(key=lambda result: (result[0], order[result[0]].get(result[1], 0)))
        entry["flags"], entry["types"] = _flags(entry), _types(entry)
    return {
        "runs": [{"name": run.name, "methods": run.methods} for run in runs],
        "references": list(references),
        "items": list(items.values()),  # input order: the first run's dataset order, then any other run's own
    }


def differing_labels(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Answers whose label differs between runs, per method key the runs share."""
    found = []
    first = runs[0]
    for item_id in first.items:
        for method in first.kinds():
            labels = [run.lines.get(item_id, {}).get(method, {}).get("outcome", {}).get("label") for run in runs]
            present = [label for label in labels if label is not None]
            if len(present) == len(runs) and len(set(present)) > 1:
                found.append(
                    {"id": item_id, "method": method, "labels": dict(zip((r.name for r in runs), labels, strict=True))}
                )
    return found


def summary_table(run: RunData) -> TableData:
    table = TableData(
        "Summary",
        [
            "method",
            "judged",
            "consistent %",
            "faithfulness / recall",
            "if failed = 1",
            "rows with failures",
            "failed calls",
        ],
        note=RULE,
    )
    for s in run.summaries:
        share = s.consistent_share
        table.rows.append(
            [
                s.method,
                str(s.judged),
                _estimate(share.value, share.low, share.high, 100) if share and not nothing_judged(s) else "-",
                score_text(s),
                upper_text(s),
                str(s.incomplete),
                str(s.failed_calls),
            ]
        )
    return table


LEDGER_COLUMNS = ("completions", "calls", "prompt_tokens", "completion_tokens", "cache_hits", "reasks", "retries")


def ledger_table(run: RunData) -> TableData:
    columns = ["stage", "done", "calls", "prompt tok", "compl. tok", "cached", "re-asks", "retries", "failed"]
    table = TableData("Usage ledger (all invocations)", [*columns, "model s"])
    stages = {**run.ledger.get("stages", {}), "total": run.ledger.get("total", {})}
    for name, usage in stages.items():
        if usage:
            counts = [str(usage.get(key, 0)) for key in (*LEDGER_COLUMNS, "failures")]
            table.rows.append([name, *counts, f"{usage.get('model_s', 0):.1f}"])
    return table


def manifest_rows(run: RunData) -> list[tuple[str, str]]:
    """The run's configuration as label/value pairs, for the report's first table."""
    m = run.manifest
    dataset = m.dataset
    methods = [(f"{x.key} ({x.kind})", ", ".join(f"{k}={v}" for k, v in x.options.items()) or "-") for x in m.methods]
    size = f"{dataset.items} items from {dataset.rows} rows, {dataset.layout} layout"
    return [
        ("model", m.model.spec),
        *methods,
        ("dataset", f"{dataset.path} — {size}"),
        ("dataset SHA-256", str(dataset.sha256)),
        ("selection", _selection(dataset.selection)),
        ("created / updated", f"{m.created} / {m.updated}"),
        ("ragfacts", f"{m.ragfacts} (commit {m.commit or 'unknown'}), Python {m.python}"),
        ("invocations", str(len(m.invocations))),
    ]


def _selection(selection: dict[str, Any] | None) -> str:
    """How the items were chosen, in words: "a stratified sample of 24 (seed 0): consistent / - / en 8, ..."."""
    if not selection:
        return "all items"
    strata = selection.get("strata") or {}
    listed = "; ".join(f"{name} {count}" for name, count in strata.items() if count)
    head = f"a stratified sample of {selection.get('sample')} (seed {selection.get('seed')})"
    return f"{head}: {listed}" if listed else head


def report_markdown(runs: Sequence[RunData]) -> str:
    """The report as Markdown: configuration, summary, metric tables, ledger, and differing labels. Every text from
    data or a model is escaped for Markdown (`markdown_text`, ids as code spans): it shows as text, never as HTML."""
    parts = []
    for run in runs:
        rows = "\n".join(f"- **{markdown_text(k)}**: {markdown_text(v)}" for k, v in manifest_rows(run))
        parts.append(f"## Run {markdown_text(run.name)}\n\n{rows}")
        tables = [
            summary_table(run),
            *bench_tables(run.precision, run.recall),
            *map(tradeoff_table, run.tradeoffs),
            ledger_table(run),
        ]
        parts.append(to_markdown(tables))
    if len(runs) > 1:
        differing = differing_labels(runs)
        lines = [
            f"- {markdown_code(str(d['id']))} {markdown_text(d['method'])}: "
            + ", ".join(markdown_text(f"{run} {label}") for run, label in d["labels"].items())
            for d in differing
        ]
        parts.append(f"## Labels that differ between runs ({len(differing)})\n\n" + ("\n".join(lines) or "none"))
    return "# ragfacts report\n\n" + "\n\n".join(parts) + "\n"


def _flags(entry: dict[str, Any]) -> dict[str, bool]:
    labels: dict[str, set[str]] = {}
    disagree = failures = False
    for _, method, view in entry["results"]:
        failures = failures or bool(view.get("failures")) or not view.get("complete", True)
        label = view.get("label")
        if label:
            labels.setdefault(method, set()).add(label)
            disagree = disagree or (entry["gold"] is not None and label != entry["gold"])
    return {"disagree": disagree, "failures": failures, "differs": any(len(found) > 1 for found in labels.values())}


def _types(entry: dict[str, Any]) -> list[str]:
    found = {entry["error_type"]} if entry["error_type"] else set()
    for _, _, view in entry["results"]:
        found.update(view.get("error_types", []))
    return sorted(found)


def _estimate(value: float | None, low: float | None, high: float | None, scale: int) -> str:
    if value is None:
        return "-"
    digits = 1 if scale == 100 else 3
    text = f"{scale * value:.{digits}f}"
    return text + (
        f" [{scale * low:.{digits}f}, {scale * high:.{digits}f}]" if low is not None and high is not None else ""
    )
