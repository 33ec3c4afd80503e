"""The service's work: one answer judged as `ragfacts check/recall` judges it, rows as `evaluate` runs them, gates.

Every request shares one model, so nothing here reads the model's ledger for a request's cost: a request's
usage is the sum of its own results' usage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.methods.base import (
    Kind,
    Method,
    MethodResult,
    Outcome,
    file_options,
    method_class,
    method_of_kind,
    parse_method_spec,
)
from ragfacts.models import ChatModel
from ragfacts.runs.evaluation import Evaluation, RunResult, RunSettings
from ragfacts.runs.evaluation import judge_item as judge_one
from ragfacts.runs.gates import check_gates
from ragfacts.runs.summary import Estimate, MethodSummary
from ragfacts.service.schemas import Gate, GateCheck
from ragfacts.usage import Usage


@dataclass
class EvaluatedRows:
    """Rows judged: the `evaluate --json` document (without a run directory), the summaries, each result's outcome."""

    document: dict[str, Any]
    summaries: list[MethodSummary]
    outcomes: list[tuple[str, Outcome]]  # (method name, outcome) per result
    usage: Usage


class RequestError(ValueError):
    """A request that cannot be judged as asked (unknown method, wrong kind, unusable rows): answered 422."""


def method_for(kind: Kind, asked: str | None, default: str, options: dict[str, Any] | None = None) -> Method:
    """The `kind` method a request asks for: its spec `asked`, else the server's `default`, with the request's
    `options`; raises RequestError naming what is possible.

    A request never names a file on the server: an option that names one (a head file) is refused in what the
    request gave, before anything is read; the server's own default spec may set it (`serve --precision
    'lface4rag:head=FILE'`), and a request that names no method and no such option judges with it.
    """
    try:
        if asked:
            _refuse_file_options(*parse_method_spec(asked))
        if options:
            _refuse_file_options(parse_method_spec(asked or default)[0], options)
        return method_of_kind(kind, asked or default, options)
    except ValueError as error:  # MethodError, or a spec that does not parse
        raise RequestError(str(error)) from error


def _refuse_file_options(name: str, options: dict[str, Any]) -> None:
    named = sorted(set(options) & file_options(method_class(name)))
    if named:
        raise RequestError(
            f"{name}: the option {', '.join(named)} names a file on the server, which a request may not do; the "
            f"server's operator chooses it (e.g. ragfacts serve --precision '{name}:{named[0]}=FILE')"
        )


async def judge_item(model: ChatModel, judge: Method, item: Item) -> MethodResult:
    """`judge`'s result for `item`, resolved for `model` first (as `ragfacts check -a ... -r ...` does)."""
    reason = judge.accepts(item)
    if reason is not None:
        raise RequestError(f"{judge.spec} cannot judge this answer: {reason}")
    return await judge_one(model, judge, item)


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
) -> EvaluatedRows:
    """Run the runner over `rows` in a scratch run directory, as `ragfacts evaluate` runs a file.

    The run never stops early: the endpoint's health is shared by every request, so one request's failures
    must not cut another's rows short. Failed calls are counted in each row instead.
    """
    try:
        evaluation = Evaluation(
            Dataset.from_rows(rows, mapping),
            methods,
            RunSettings(stop_after=0),
            in_flight=in_flight,
            strict=False,
            every_judge=False,  # a request's judges may each judge some rows
        )
    except ValueError as error:  # DatasetError
        raise RequestError(str(error).removeprefix("rows: ")) from error
    result = await evaluation.run(model, model_spec=model_spec)  # in a scratch directory, gone with the request
    document = result.document()
    names = {m.spec: m.name for m in methods}
    outcomes = [(names[spec], Outcome.model_validate(line["outcome"])) for spec, line in _by_method(result)]
    usage = usage_of([outcome for _, outcome in outcomes])
    del document["run"], document["results_file"]
    report = document["report"]
    report["seconds"], report["usage"] = round(result.report.seconds, 3), usage.model_dump()
    return EvaluatedRows(document, result.summaries, outcomes, usage)


def _by_method(result: RunResult) -> list[tuple[str, dict[str, Any]]]:
    return [(spec, line) for _, lines in result.judged for spec, line in lines.items()]


def gate(summaries: list[MethodSummary], thresholds: dict[str, float | None]) -> Gate:
    """Each given threshold checked against the summary of each method of its kind, as the CLI's gates are."""
    checks = [
        GateCheck(
            name=result.name,
            threshold=result.threshold,
            method=result.method,
            value=result.value,
            passed=result.passed,
            message=None if result.passed else result.message(),
        )
        for result in check_gates(summaries, thresholds)
    ]
    return Gate(passed=all(c.passed for c in checks) if checks else None, checks=checks)


def usage_of(outcomes: list[Outcome]) -> Usage:
    """What a request's results cost, together."""
    return Usage.sum(o.usage for o in outcomes)
