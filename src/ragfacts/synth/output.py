"""A synthesis run's files, and the labelled dataset written from its log.

`-o OUT.jsonl` is the dataset that `ragfacts bench` reads as is: one row per kept answer, with `label`
(consistent / inconsistent), `error_type` (the typology's code), `source_model`, `lang`, and under `synth` its
provenance: the row it came from, its kind, the edited span, the model and prompt that made it and the
verifier's reply. Beside it, like every run: `OUT.jsonl.log.jsonl` (the runner's results, one line per
source row with every candidate, kept or not: append-only, what resume reads), `OUT.jsonl.manifest.json`
(with the per-type counts under "synth") and `OUT.jsonl.ledger.json`. The dataset is rewritten from the log,
whole and atomically, at the end of every invocation: a killed run loses no model work, and the rerun
writes the dataset again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ragfacts.files import replacing
from ragfacts.items import Item
from ragfacts.runs.evaluation import RunResult
from ragfacts.runs.jsonl import RunError, json_line
from ragfacts.runs.rundir import RunDir
from ragfacts.synth.results import Candidate, SynthResult


class SynthOutput(RunDir):
    """The files of a synthesis run: the dataset at `-o`, the log, manifest, ledger and lock beside it."""

    def __init__(self, target: str | Path) -> None:
        super().__init__(target, results_suffix=".log.jsonl")
        self.dataset = self.target

    def check_target(self, inputs: list[Path]) -> None:
        """Refuse an output that is not a .jsonl name, is an input, or is a file synth did not write."""
        if self.target.suffix.lower() != ".jsonl" or self.target.is_dir():
            raise RunError(f"-o {self.target}: give a file name ending in .jsonl (the dataset is written there)")
        self.check_files()
        for path in inputs:
            if any(_same(path, mine) for mine in (self.dataset, self.results, self.manifest, self.ledger)):
                raise RunError(f"the output {self.target} is also an input ({path}); give another -o")
        manifest = self.load_manifest()
        if manifest is None and _has_content(self.dataset):
            raise RunError(f"{self.dataset} exists and was not written by ragfacts synth; give another -o")
        if manifest is not None and [m.name for m in manifest.methods] != ["synth"]:
            raise RunError(f"{self.manifest} belongs to another kind of ragfacts run; give another -o")
        if manifest is None and _has_content(self.results):
            self.log.refuse_unless_ours()


class Tally(BaseModel):
    """What became of the candidates of one kind or error type."""

    asked: int = 0
    kept: int = 0
    rejected: int = 0  # the verifier said the edit did not take, or the rewording is not faithful
    not_applied: int = 0  # no usable edit or rewording came back
    failed: int = 0  # a call failed: retried by the next run

    def add(self, candidate: Candidate) -> None:
        self.asked += 1
        setattr(self, candidate.status, getattr(self, candidate.status) + 1)


class SynthSummary(BaseModel):
    """A synthesis run's counts, per error type and per kind of positive: what the manifest keeps under "synth"."""

    dataset: str
    rows: int = 0  # source rows
    done: int = 0  # rows with a current result
    without_base: int = 0  # rows whose written answer was not kept: nothing was made from them
    incomplete: int = 0  # rows with a failed call
    items: int = 0  # answers written to the dataset
    by_type: dict[str, Tally] = Field(default_factory=dict)
    positives: dict[str, Tally] = Field(default_factory=dict)


def write_dataset(output: SynthOutput, run: RunResult) -> SynthSummary:
    """Write the dataset from the run's current log lines (whole, atomically), count it into the manifest, return it.

    Call it holding the output's lock.
    """
    plan = run.plan
    (synthesiser,) = plan.methods
    summary = SynthSummary(dataset=str(output.dataset), rows=plan.dataset.count)
    summary.by_type = {t.value: Tally() for t in synthesiser.options.types}
    summary.positives = {kind: Tally() for kind in ("original", "written", "paraphrase")}
    with replacing(output.dataset) as handle:
        for item, lines in run.judged:
            line = lines.get(synthesiser.spec)
            if line is None:
                continue
            result = SynthResult.model_validate(line["result"])
            _count(summary, result)
            for row in dataset_rows(item, result):
                handle.write(json_line(row) + "\n")
                summary.items += 1
    manifest = output.load_manifest()
    if manifest is not None:  # written by the run that made the results
        manifest.synth = summary.model_dump(mode="json")
        output.save_manifest(manifest)
    return summary


def dataset_rows(item: Item, result: SynthResult) -> list[dict[str, Any]]:
    """The kept candidates of one source row as dataset rows, in the result's order."""
    rows = []
    for candidate in result.candidates:
        if candidate.status != "kept" or candidate.answer is None:
            continue
        source_model = item.source_model if candidate.kind == "original" else result.model
        provenance = {
            "source_id": item.id,
            "kind": candidate.kind,
            "span": candidate.span.model_dump() if candidate.span is not None else None,
            "made_by": _call(result.model, candidate.made_by),
            "verified_by": _call(result.model, candidate.checked_by, candidate.check),
        }
        row = {
            "id": f"{item.id}/{candidate.slug}",
            "question": item.question,
            "reference": item.reference,
            "answer": candidate.answer,
            "label": candidate.label,
            "error_type": candidate.error_type.value if candidate.error_type is not None else None,
            "source_model": source_model,
            "lang": result.lang,
            "synth": provenance,
        }
        rows.append({key: value for key, value in row.items() if value is not None})
    return rows


def _call(model: str, call: Any, reply: dict[str, Any] | None = None) -> dict[str, Any] | None:
    if call is None:
        return None
    return {"model": model, "prompt": call.prompt_version, **({"reply": reply} if reply is not None else {})}


def _count(summary: SynthSummary, result: SynthResult) -> None:
    summary.done += 1
    summary.incomplete += result.failures > 0
    for candidate in result.candidates:
        if candidate.kind == "injection" and candidate.error_type is not None:
            summary.by_type.setdefault(candidate.error_type.value, Tally()).add(candidate)
        elif candidate.kind != "injection":
            summary.positives[candidate.kind].add(candidate)
    written = [c for c in result.candidates if c.kind == "written"]
    # A written answer the check did not support (a failed call is counted as incomplete, not here).
    summary.without_base += bool(written) and written[0].status in ("rejected", "not_applied")


def _has_content(path: Path) -> bool:
    return path.exists() and path.stat().st_size > 0


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
