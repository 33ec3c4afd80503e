"""The Python API: `evaluate`, `check` and `recall` over rows, a file or one pair, from sync code or a notebook.

    import ragfacts
    results = ragfacts.evaluate("data.jsonl", model="openai:gpt-4o-mini")
    results                # in a notebook: the verdict of every row; in a shell, the counts and summaries
    results.summary, results.rows[0], results.to_pandas()
    ragfacts.check(reference="...", answer="...", model=my_chat_model)[0]["label"]

They run the same runner as the command line (content-keyed resume when `output` is a run directory) and
work inside a running event loop (Jupyter). `model` is a spec string ("openai:NAME", "local",
"local:/path.gguf") or a `ChatModel`; without it, the default of `ragfacts --model` is used.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.methods.base import Method, create_method, method_of_kind
from ragfacts.methods.view import typed_result
from ragfacts.models import ChatModel
from ragfacts.report.display import Summary, results_html, summary_line
from ragfacts.runs.applicable import skipped_line
from ragfacts.runs.evaluation import Evaluation, RunResult, RunSettings, rows_of
from ragfacts.runs.progress import NoProgress, RunProgress, progress_for
from ragfacts.runs.runner import RunReport
from ragfacts.runs.summary import MethodSummary
from ragfacts.runs.verdicts import VerdictCounts, VerdictRow, verdict_rows
from ragfacts.runtime import Runtime, Settings, run_sync
from ragfacts.usage import Usage

Data = str | Path | Sequence[dict[str, Any] | Item] | Any  # a path, rows, items, or a pandas DataFrame


class Results(Sequence[dict[str, Any]]):
    """One row per item in input order (id, label, faithfulness, recall, failures), the full results, the summary,
    the cost; in a notebook, a table of verdicts.

    `verdicts` holds each row's question, answer, verdict, P(faithful), reason, flagged segments and facts;
    `to_pandas()` has them as columns.
    """

    def __init__(
        self,
        rows: list[dict[str, Any]],
        details: list[dict[str, Any]],
        summary: list[MethodSummary],
        report: RunReport,
        run_dir: Path | None,
        verdicts: list[VerdictRow] | None = None,
    ) -> None:
        self.rows = rows
        self.details = details  # per item: method -> its result (CheckResult, RecallResult, ...)
        self.summary = Summary(summary)
        self.report = report
        self.run_dir = run_dir
        self.verdicts = verdicts or []

    @property
    def usage(self) -> Usage:
        """What this call cost (cached replies cost nothing)."""
        return self.report.usage

    @property
    def counts(self) -> VerdictCounts:
        """How many rows were flagged (not faithful, missing facts) and how many have a failed call."""
        return VerdictCounts.of(self.verdicts)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __repr__(self) -> str:
        lines = [f"<Results: {len(self.rows)} items; {self.counts.line()}"]
        lines += [f"  {summary_line(s)}" for s in self.summary]
        return "\n".join(lines) + ">"

    def _repr_html_(self) -> str:
        return results_html(self.summary, self.verdicts)

    def to_pandas(self) -> Any:
        """One row per item: question, answer, reference, ground truth, label, probability, faithfulness, recall,
        flagged, reason, error types, flagged segments and facts (lists), failures and usage (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as error:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from error
        return pd.DataFrame([row.record() for row in self.verdicts])


class _Default(str):
    """A method spec the caller did not give (the default): a judge that can judge none of the rows is left out,
    with a warning, where one the caller named is refused."""


def evaluate(
    data: Data,
    model: str | ChatModel | None = None,
    *,
    precision: str | None = _Default("lface4rag"),
    recall: str | None = _Default("faaf"),
    output: str | Path | None = None,
    mapping: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
) -> Results:
    """Precision (against each row's reference) and recall (against its ground truth or facts) of every row.

    `precision`/`recall` are method specs ("lface4rag:strategy=paper", "faaf:mode=tf") or None to skip; a default
    one that can judge no row (recall of rows without a ground truth) is left out with a warning.
    `settings` (also of `check` and `recall`): the model's (`runtime.Settings`: base_url, concurrency, cache (bool),
    cache_dir, model_options, a dict of ModelOptions such as {"mode": "tool"}), the run's (`RunSettings`: limit,
    force, keep_failed, repair, stop_after) and progress (bool; default: on for a model run in-process, which takes
    seconds an answer, with a line saying where the results go).
    """
    specs = [spec for spec in (precision, recall) if spec]
    methods = [create_method(spec) for spec in specs]
    defaults = {m.spec for m, spec in zip(methods, specs, strict=True) if isinstance(spec, _Default)}
    return _run(_dataset(data, mapping), methods, model, output, strict=False, defaults=defaults, **(settings or {}))


def check(
    data: Data | None = None,
    *,
    reference: str | None = None,
    answer: str | None = None,
    question: str | None = None,
    model: str | ChatModel | None = None,
    method: str = "lface4rag",
    output: str | Path | None = None,
    mapping: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    **options: Any,
) -> Results:
    """Precision of one answer (`reference=`, `answer=`) or of every row of `data`; `options` are the method's."""
    judge = method_of_kind("precision", method, options)
    if data is None:
        data = [Item(question=question, reference=reference or "", answer=answer or "")]
    return _run(_dataset(data, mapping), [judge], model, output, strict=True, **(settings or {}))


def recall(
    data: Data | None = None,
    *,
    answer: str | None = None,
    ground_truth: str | None = None,
    facts: Sequence[str] | None = None,
    question: str | None = None,
    model: str | ChatModel | None = None,
    method: str = "faaf",
    output: str | Path | None = None,
    mapping: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    **options: Any,
) -> Results:
    """Recall of one answer (`answer=` with `facts=` or `ground_truth=`) or of every row of `data`."""
    judge = method_of_kind("recall", method, options)
    if data is None:
        given = list(facts) if facts is not None else None
        data = [Item(question=question, ground_truth=ground_truth, facts=given, answer=answer or "")]
    return _run(_dataset(data, mapping), [judge], model, output, strict=True, **(settings or {}))


def read_run(path: str | Path) -> Results:
    """A run directory (or OUT.jsonl) read back, with no model: its rows in the dataset's order, their verdicts and
    full results, the summary; `results.usage` is what the run's calls cost in all. Raises RunError for a directory
    that holds no ragfacts run."""
    from ragfacts.report.report import load_run

    run = load_run(path)
    kinds = run.kinds()
    judged = list(run.judged())
    counted = sum(len(lines) for _, lines in judged)
    usage = Usage.model_validate((run.ledger or {}).get("total", {}))
    report = RunReport(results=counted, reused=counted, usage=usage)
    verdicts = list(verdict_rows(judged, kinds))
    return Results(rows_of(judged, kinds), _details(judged), run.summaries, report, Path(path), verdicts)


def _dataset(data: Data, mapping: dict[str, str] | None) -> Dataset:
    if isinstance(data, (str, Path)):
        return Dataset.open(data, mapping)
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # a pandas DataFrame
        data = data.to_dict(orient="records")
    if isinstance(data, (dict, Item)):
        data = [data]
    return Dataset.from_rows(list(data), mapping)


# The `settings` of `evaluate`, `check` and `recall`: the fields of `runtime.Settings` (the model's but `model=`, two
# under the names the API has always given them) and of `RunSettings` (how the run treats its output), and `progress`.
_API_NAMES = {"use_cache": "cache", "options": "model_options"}
_MODEL_SETTINGS = {field: _API_NAMES.get(field, field) for field in Settings.model_fields if field != "model"}
_RUN_SETTINGS = [name for name in RunSettings.model_fields if name != "max_failed"]  # no exit code to gate


def settings_names() -> list[str]:
    """The keys the Python API's `settings` takes."""
    return [*_MODEL_SETTINGS.values(), *_RUN_SETTINGS, "progress"]


def _settings(given: Mapping[str, Any]) -> tuple[Settings, RunSettings, bool | None]:
    """The model's settings, the run's and whether to show progress, from the `settings` a caller gave; raises
    TypeError naming the keys it takes for one it does not."""
    unknown = sorted(set(given) - set(settings_names()))
    if unknown:
        raise TypeError(f"settings: unknown {', '.join(unknown)}; the settings are {', '.join(settings_names())}")
    model = {field: given[name] for field, name in _MODEL_SETTINGS.items() if name in given}
    run = {name: given[name] for name in _RUN_SETTINGS if name in given}
    return Settings(**model), RunSettings(**run), given.get("progress")


def _run(
    dataset: Dataset,
    methods: list[Method],
    model: str | ChatModel | None,
    output: str | Path | None,
    *,
    strict: bool,
    defaults: Collection[str] = (),
    **given: Any,
) -> Results:
    settings, run_settings, progress = _settings(given)
    evaluation = Evaluation(
        dataset,
        methods,
        run_settings,
        output=output,
        in_flight=2 * settings.concurrency,
        defaults=defaults,
        strict=strict,
    )
    for method in evaluation.dropped:
        warnings.warn(skipped_line(dataset, method, python=True), stacklevel=3)

    async def job() -> Results:
        runtime = None
        chat = model
        spec = None
        if not isinstance(chat, ChatModel):
            runtime = Runtime(settings.model_copy(update={"model": chat}))
            chat = runtime.model()
            spec = str(runtime.spec)
        try:
            evaluation.check_target([dataset.path] if dataset.path else [])
            meter: RunProgress = NoProgress()
            if progress if progress is not None else chat.serves_one_at_a_time:
                console = _stderr_console()
                where = str(output) if output is not None else "a temporary directory (output=DIR keeps them)"
                console.print(f"ragfacts: judging {dataset.count} items with {chat.model_id}; results in {where}")
                meter = progress_for(console)
            return _results(await evaluation.run(chat, meter, model_spec=spec), output)
        finally:
            if runtime is not None:
                await runtime.aclose()
            else:
                await chat.close_connections()  # the caller's model outlives this call's event loop

    return run_sync(job)


def _results(result: RunResult, output: str | Path | None) -> Results:
    """The run's results held in memory (a Python caller keeps them; the run directory may be a scratch one)."""
    run_dir = Path(output) if output is not None else None
    judged = [(item, {spec: dict(line) for spec, line in lines.items()}) for item, lines in result.judged]
    verdicts = list(verdict_rows(judged, result.kinds))
    return Results(result.rows(), _details(judged), result.summaries, result.report, run_dir, verdicts)


def _details(judged: Iterable[tuple[Item, Mapping[str, Mapping[str, Any]]]]) -> list[dict[str, Any]]:
    """Per item, each method's full result as its type (CheckResult, RecallResult, ...)."""
    return [{method: _typed(method, line["result"]) for method, line in lines.items()} for _, lines in judged]


def _typed(spec: str, result: dict[str, Any]) -> Any:
    typed = typed_result(spec, result)
    return typed if typed is not None else result


def _stderr_console() -> Any:
    from ragfacts.console import err

    return err
