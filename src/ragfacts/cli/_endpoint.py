"""`evaluate QUESTIONS --endpoint URL`: ask a live RAG service the questions, then judge its answers as usual.

The endpoint flags are derived from `EndpointOptions`, where they are declared once: an option with a `flag`
gets that flag, the others are set with `--endpoint-option key=value`. Everything is checked before the
service is asked (bad input exits 2 with nothing written). The answers go to the run directory as they
arrive; then the answered rows run through the one runner into the same directory. Questions the service
did not answer are failed rows: counted in the Endpoint table, listed with --json, asked again by the next
run (unless --keep-failed), and they make the command exit 3 (the run is incomplete).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Callable
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from ragfacts.cli._common import EXIT_STOPPED, AppState, fail, read_text_argument
from ragfacts.cli._dataset import DatasetRun, parse_mapping, run_dataset
from ragfacts.cli._method_flags import resolved_parameters, with_parameters
from ragfacts.console import err, print_json
from ragfacts.datasets.reader import DatasetError
from ragfacts.endpoints import Answer, EndpointError, EndpointOptions, EndpointRequest, public_url, resolve
from ragfacts.models import ConfigurationError
from ragfacts.models.spec import check_credentials, parse_spec
from ragfacts.runs.answers import AnswerStore
from ragfacts.runs.applicable import skipped_line
from ragfacts.runs.collect import Collection, Questions, collect, read_questions
from ragfacts.runs.evaluation import Evaluation
from ragfacts.runs.rundir import RunDir, RunError, check_own_files
from ragfacts.runtime import default_model_spec

_FLAGS: dict[str, str] = {
    name: str(field.json_schema_extra["flag"])
    for name, field in EndpointOptions.model_fields.items()
    if isinstance(field.json_schema_extra, dict) and "flag" in field.json_schema_extra
}
_OTHER = [name for name in EndpointOptions.model_fields if name not in _FLAGS]
_FAILURES_SHOWN = 5  # reasons under the Endpoint table, most frequent first


def with_endpoint_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the endpoint flags; it receives `endpoint`: the EndpointOptions, or None without --endpoint."""
    signature, kept = resolved_parameters(command, drop="endpoint")
    added = [_flag(name) for name in _FLAGS] + [
        inspect.Parameter(
            "endpoint_option",
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[
                list[str] | None,
                typer.Option(
                    "--endpoint-option",
                    help="with --endpoint: key=value (repeatable) for "
                    + "; ".join(f"{n} ({_describe(n)})" for n in _OTHER),
                    show_default=False,
                ),
            ],
        )
    ]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(f"endpoint_{name}") for name in _FLAGS}
        pairs = kwargs.pop("endpoint_option") or []
        return command(*args, endpoint=_endpoint_options(given, pairs), **kwargs)

    return with_parameters(wrapper, signature, [*kept, *added])


def run_with_endpoint(state: AppState, job: DatasetRun, options: EndpointOptions) -> None:
    """Ask the service the questions of `job.data`, then judge the answered rows into the same run directory."""
    request = _resolved(options)
    questions = _questions(state, job, request)
    run_dir = RunDir(job.output)
    _check_target(run_dir, job)
    distinct = len(questions.distinct_keys())
    err.print(
        f"{escape(str(job.data))}: {len(questions.rows)} questions ({distinct} distinct) for "
        f"{escape(public_url(options.url))}"
    )
    try:
        collection = asyncio.run(
            collect(
                run_dir,
                questions,
                options,
                request,
                limit=job.options.limit,
                force=job.options.force,
                retry_failed=not job.options.keep_failed,
                stop_after=job.options.stop_after,
                progress=_progress(),
            )
        )
    except RunError as error:
        fail(str(error))
    _show_collection(collection, AnswerStore(run_dir))
    stats = collection.stats()
    dataset = collection.dataset()
    if collection.report.stopped or dataset is None:
        err.print(endpoint_table(stats))
        if state.as_json:
            print_json({"run": str(run_dir.target), "endpoint": stats})
        why = collection.report.stopped or "no question has an answer yet"
        err.print(f"[red]{escape(why)}[/red]; nothing was judged: rerun to resume")
        raise typer.Exit(EXIT_STOPPED)

    def after(*_: Any) -> dict[str, Any]:
        err.print(endpoint_table(stats))
        return {"endpoint": stats}

    job.dataset = dataset
    if stats["failed"] and not job.options.keep_failed:
        job.incomplete = (
            f"{stats['failed']} of {stats['rows']} questions have no answer from the service (not in the summary; see "
            "the Endpoint table): rerun to ask them again, or add --keep-failed to accept them"
        )
    run_dataset(state, job, after=after)


def endpoint_table(stats: dict[str, Any]) -> Table:
    """The service's side of the run: rows answered, failed and not asked, latency, and the failures by reason."""
    table = Table(title="Endpoint", title_justify="left")
    for column in ("questions", "answered", "asked now", "failed", "not asked", "latency median / p95 / max"):
        table.add_column(column, justify="right")
    latency = stats["latency_s"]
    table.add_row(
        str(stats["rows"]),
        str(stats["answered"]),
        str(stats["asked_now"]),
        f"[red]{stats['failed']}[/red]" if stats["failed"] else "0",
        str(stats["not_asked"]),
        f"{latency['median']:.2f} / {latency['p95']:.2f} / {latency['max']:.2f} s" if latency else "-",
    )
    failures = list(stats["failures"].items())
    shown = [f"failed ×{count}: {escape(message)}" for message, count in failures[:_FAILURES_SHOWN]]
    if len(failures) > _FAILURES_SHOWN:
        shown.append(f"… and {len(failures) - _FAILURES_SHOWN} other reasons (--json lists every failed row)")
    table.caption, table.caption_justify = "\n".join(shown) or None, "left"
    return table


def _endpoint_options(given: dict[str, Any], pairs: list[str]) -> EndpointOptions | None:
    """The options from the flags; other endpoint flags without --endpoint are bad usage."""
    if given["url"] is None:
        used = [_FLAGS[name] for name, value in given.items() if value not in (None, [])]
        if used or pairs:
            fail(f"{', '.join(used) or '--endpoint-option'}: only with --endpoint URL")
        return None
    values: dict[str, Any] = {name: value for name, value in given.items() if value not in (None, [])}
    if "body" in values:
        values["body"] = read_text_argument(values["body"], "--endpoint-body")
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            fail(f"--endpoint-option takes key=value, e.g. timeout_s=30; got {pair!r}")
        if key in _FLAGS:
            fail(f"--endpoint-option {key}: use {_FLAGS[key]}")
        values[key] = value.strip()
    try:
        return EndpointOptions(**values)
    except ValidationError as error:
        problems = "; ".join(f"{_option_name(e['loc'])}: {e['msg']}" for e in error.errors())
        fail(f"{problems} (--endpoint-option takes {', '.join(_OTHER)})")


def _resolved(options: EndpointOptions) -> EndpointRequest:
    try:
        return resolve(options)
    except EndpointError as error:
        fail(str(error))


def _questions(state: AppState, job: DatasetRun, request: EndpointRequest) -> Questions:
    """The questions, checked: readable, judgeable by the chosen methods, and a model to judge them with."""
    try:
        questions = read_questions(job.data, parse_mapping(job.options.mapping))
        # Before the service is asked anything: a missing key would otherwise surface after its answers are in.
        check_credentials(parse_spec(state.settings.model or default_model_spec(), state.settings.base_url))
        # What the service returns is not known yet: a placeholder reply says whether each row can be judged.
        trial = questions.dataset(lambda _: ("…", ["…"] if request.contexts_path is not None else []))
        assert trial is not None
        judged = Evaluation(trial, job.methods, defaults=job.defaults, strict=job.every_method_on_every_item)
        for method in judged.dropped:
            err.print(skipped_line(trial, method), style="yellow")
        job.methods = [m for m in job.methods if m not in judged.dropped]
    except (DatasetError, ConfigurationError) as error:
        fail(str(error))
    return questions


def _check_target(run_dir: RunDir, job: DatasetRun) -> None:
    """Refuse an output that is an input, or a run directory of another dataset (unless --force)."""
    try:
        run_dir.check_target([job.data])
        check_own_files(AnswerStore(run_dir).paths)
        if any(path.resolve() == job.data.resolve() for path in AnswerStore(run_dir).paths):
            raise RunError(f"the output {run_dir.target} is also an input ({job.data}); give another -o")
        manifest = run_dir.load_manifest()
    except RunError as error:
        fail(str(error))
    before = manifest.dataset.path if manifest is not None else None
    if before is not None and before != str(job.data.resolve()) and not job.options.force:
        fail(
            f"{run_dir.target} holds results of another dataset ({before}). Give a new -o, or add --force to run "
            "again what differs"
        )


def _progress() -> Callable[[int, int, Answer], None]:
    """A line every tenth of the questions or 10 s, whichever comes first."""
    started = last = time.monotonic()
    failed = 0

    def advance(done: int, total: int, answer: Answer) -> None:
        nonlocal last, failed
        failed += not answer.ok
        now = time.monotonic()
        if done == total or done % max(total // 10, 1) == 0 or now - last >= 10:
            last = now
            err.print(f"asking: {done}/{total} questions · {failed} failed · {now - started:.0f}s elapsed")

    return advance


def _show_collection(collection: Collection, store: AnswerStore) -> None:
    report = collection.report
    parts = [f"{report.reused} answered before, {report.asked} asked now ({report.answered} answered)"]
    if report.asked - report.answered:
        parts.append(f"{report.asked - report.answered} failed")
    if report.not_asked:
        parts.append(f"{report.not_asked} not asked yet")
    err.print(f"questions: {'; '.join(parts)}; answers: {escape(str(store.answers))}")


def _flag(name: str) -> inspect.Parameter:
    field = EndpointOptions.model_fields[name]
    many = name == "headers"
    annotation = list[str] | None if many else str | None
    shown = False if field.is_required() or many else str(field.default)
    option = typer.Option(_FLAGS[name], help=field.description, show_default=shown)
    return inspect.Parameter(
        f"endpoint_{name}", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[annotation, option]
    )


def _describe(name: str) -> str:
    field = EndpointOptions.model_fields[name]
    return f"{field.description}, default {field.default}"


def _option_name(location: tuple[Any, ...]) -> str:
    name = str(location[0]) if location else "?"
    return _FLAGS.get(name, f"--endpoint-option {name}")
