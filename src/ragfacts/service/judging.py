"""The service's work: one answer judged as `ragfacts check/recall` judges it, rows as `evaluate` runs them, gates.

Every request shares one model, so nothing here reads the model's ledger for a request's cost: a request's
usage is the sum of its own results' usage.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragfacts.bench.applicable import check_applicable
from ragfacts.bench.rundir import RunDir
from ragfacts.bench.runner import RunPlan, prepare, result_rows, run, summarise
from ragfacts.bench.summary import Estimate, MethodSummary, gate_failures
from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.methods.base import Kind, Method, MethodResult, Outcome, create_method
from ragfacts.models import ChatModel
from ragfacts.service.schemas import Gate, GateCheck
from ragfacts.usage import Usage

GATES: dict[Kind, tuple[str, ...]] = {"precision": ("min_consistent", "min_faithfulness"), "recall": ("min_recall",)}


@dataclass
class Evaluation:
    """Rows judged: the `evaluate --json` document (without a run directory), the summaries, each result's outcome."""

    document: dict[str, Any]
    summaries: list[MethodSummary]
    outcomes: list[tuple[str, Outcome]]  # (method name, outcome) per result
    usage: Usage


class RequestError(ValueError):
    """A request that cannot be judged as asked (unknown method, wrong kind, unusable rows): answered 422."""


def method_for(kind: Kind, spec: str, options: dict[str, Any] | None = None) -> Method:
    """The `kind` method named by `spec` with `options`; raises RequestError naming what is possible."""
    try:
        judge = create_method(spec, **(options or {}))
    except ValueError as error:  # MethodError, or a spec that does not parse
        raise RequestError(str(error)) from error
    if judge.kind != kind:
        raise RequestError(f"{judge.name} is a {judge.kind} method; this endpoint takes a {kind} method")
    return judge


async def judge_item(model: ChatModel, judge: Method, item: Item) -> MethodResult:
    """`judge`'s result for `item`, resolved for `model` first (as `ragfacts check -a ... -r ...` does)."""
    reason = judge.accepts(item)
    if reason is not None:
        raise RequestError(f"{judge.spec} cannot judge this answer: {reason}")
    (prepared,) = await prepare(model, [judge])
    return await prepared.evaluate(item, model)


def item_gate(judge: Method, outcome: Outcome, thresholds: dict[str, float | None]) -> Gate:
    """The thresholds of a one-answer request checked against its outcome, by the rule of dataset summaries
    (unscored and uncertain are not consistent, a missing score counts 0) without their bootstrap: one answer has
    no interval."""
    score = Estimate(value=outcome.score if outcome.score is not None else 0.0, n=1)
    summary = MethodSummary(method=judge.spec, kind=judge.kind, applicable=1, judged=1, score=score)
    if judge.kind == "precision":
        summary.consistent_share = Estimate(value=float(outcome.label == "consistent"), n=1)
        summary.unscored, summary.uncertain = int(outcome.label == "unscored"), int(outcome.label == "uncertain")
    return gate([summary], thresholds)


async def evaluate_rows(
    model: ChatModel,
    methods: list[Method],
    rows: list[dict[str, Any]],
    mapping: dict[str, str] | None,
    *,
    model_spec: str,
    in_flight: int,
) -> Evaluation:
    """Run the runner over `rows` in a scratch run directory, as `ragfacts evaluate` runs a file.

    The run never stops early: the endpoint's health is shared by every request, so one request's failures
    must not cut another's rows short. Failed calls are counted in each row instead.
    """
    try:
        dataset = Dataset.from_rows(rows, mapping)
        plan = RunPlan(
            dataset=dataset,
            methods=methods,
            model_spec=model_spec,
            stop_after_failures=0,
            in_flight=in_flight,
        )
        check_applicable(plan, strict=False, every_judge=False)  # a request's judges may each judge some rows
    except ValueError as error:  # DatasetError
        raise RequestError(str(error).removeprefix("rows: ")) from error
    with tempfile.TemporaryDirectory(prefix="ragfacts-serve-") as scratch:
        run_dir = RunDir(Path(scratch) / "run")
        report = await run(run_dir, plan, model)
        judged = list(result_rows(run_dir, plan, model))
        summaries = summarise(run_dir, plan, model)
    names = {m.spec: m.name for m in methods}
    outcomes = [
        (names[spec], Outcome.model_validate(line["outcome"])) for _, lines in judged for spec, line in lines.items()
    ]
    usage = usage_of([outcome for _, outcome in outcomes])
    described = {key: value for key, value in vars(report).items() if key != "usage"}
    document = {
        "report": {**described, "seconds": round(report.seconds, 3), "usage": usage.model_dump()},
        "summary": [s.model_dump() for s in summaries],
        "rows": [{**row, "results": {m: line["result"] for m, line in lines.items()}} for row, lines in judged],
    }
    return Evaluation(document, summaries, outcomes, usage)


def gate(summaries: list[MethodSummary], thresholds: dict[str, float | None]) -> Gate:
    """Each given threshold checked against the summary of each method of its kind, as the CLI's gates are."""
    checks = []
    for summary in summaries:
        for name in GATES[summary.kind]:
            threshold = thresholds.get(name)
            if threshold is None:
                continue
            failed = gate_failures([summary], **{name: threshold})
            checks.append(
                GateCheck(
                    name=name,
                    threshold=threshold,
                    method=summary.method,
                    value=_measured(summary, name),
                    passed=not failed,
                    message=failed[0].replace(f"--{name.replace('_', '-')}", name) if failed else None,
                )
            )
    return Gate(passed=all(c.passed for c in checks) if checks else None, checks=checks)


def usage_of(outcomes: list[Outcome]) -> Usage:
    """What a request's results cost, together."""
    return Usage.sum(o.usage for o in outcomes)


def _measured(summary: MethodSummary, name: str) -> float | None:
    if name == "min_consistent":
        return summary.consistent_share.value if summary.consistent_share else None
    return summary.score.value
