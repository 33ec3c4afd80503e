"""Judging a run on Ray: the pairs to judge sharded over worker actors, every result written by this process.

Only the judging moves. The runner (`runs.runner.run`) still plans what to judge and what to reuse (with
`runs.planning`, which this engine also reads to know whether there is work left), checks the configuration, writes
the manifest, appends each result line, compacts and records the invocation, so a run directory made on Ray is the
same contract as one made in a single process, and either engine resumes the other's. Each worker is a Ray actor
with its own model client, cache and ledger, built from the command's settings (`runtime.Runtime`). The driver reads
the dataset, keeps a bounded number of (item, method) pairs in flight per worker, and appends each line as it comes
back: a killed driver loses only what was in flight. Workers report their usage by stage with each result; it is
merged into the run's ledger.

`--concurrency` and the rate limits (`-M rpm=`, `tpm=`) are the run's, not each worker's: they are shared out
among the workers (each gets its part, at least one request in flight), so N workers do not hit the endpoint
N times as hard as the same command in one process.

Actors rather than Ray Data: a worker keeps its HTTP client, connection pool and cache open across items,
results stream back one at a time in whatever order they finish (Ray Data hands back blocks, after converting
the rows to Arrow), and the extra stays Ray core, without pyarrow and pandas.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.items import Item
from ragfacts.methods.base import Outcome, Task
from ragfacts.models import ChatModel, ConfigurationError, request_priority
from ragfacts.models.spec import KEY_VARIABLES
from ragfacts.runs.planning import RunPlan, check_configuration, endpoint_down, plan_work, prepare
from ragfacts.runs.progress import RunProgress
from ragfacts.runs.rundir import RunDir, result_line
from ragfacts.runs.runner import RunReport, run
from ragfacts.runtime import Runtime, Settings
from ragfacts.usage import Usage

INSTALL_HINT = "pip install 'ragfacts[ray]'"
START_TIMEOUT_S = 120.0  # for workers to start and build their models
# The environment a worker needs and a Ray cluster's nodes may not have: the API key and the state directory.
# The model spec and base URL travel resolved in the settings instead.
FORWARDED_VARIABLES = ("RAGFACTS_HOME", *KEY_VARIABLES)


class RayOptions(BaseModel):
    """Where and how wide to judge on Ray."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: str | None = Field(
        default=None,
        description="a running cluster: ray://HOST:PORT (Ray Client), HOST:PORT, or auto (the one `ray start` "
        "started on this machine); None: RAY_ADDRESS if set, else a local Ray started for this run, stopped after it",
    )
    workers: int | None = Field(default=None, ge=1, description="worker actors; None: one per CPU of the cluster")


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker is built from; sent to each actor once."""

    settings: Settings
    methods: Sequence[Task]  # as asked for; each worker resolves them for its own model
    label_scores: bool | None  # what the driver's probe found, so workers do not probe again
    configs: dict[str, str]  # the driver's configuration hash per method, which the worker must reproduce
    stop_after_failures: int
    environment: dict[str, str]  # FORWARDED_VARIABLES as set for the command


class JudgeWorker:
    """A Ray actor's body: one model (client, cache, ledger) judging the pairs it is sent."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.problem: str | None = None
        self.stop_after_failures = setup.stop_after_failures
        self._reported: dict[str, Usage] = {}
        self.runtime: Runtime | None = None
        node = platform.node()
        # An actor's process is its own (Ray never reuses it for other work), so its environment is ours to set.
        # Set here rather than through a Ray runtime_env, which would cost every worker a fresh process.
        os.environ.update(setup.environment)
        try:
            self.runtime = Runtime(setup.settings)
            self.model = self.runtime.model()
        except (ConfigurationError, OSError) as error:
            self.problem = f"a Ray worker on {node} cannot build its model: {error}"
            return
        if setup.label_scores is not None:
            self.model.label_scores = setup.label_scores
        self.methods = {m.spec: m.resolved(self.model) for m in setup.methods}
        self.configs = {spec: m.configuration_hash(self.model) for spec, m in self.methods.items()}
        if self.configs != setup.configs:
            differ = ", ".join(spec for spec in self.configs if self.configs[spec] != setup.configs.get(spec))
            self.problem = (
                f"a Ray worker on {node} would judge {differ} with another configuration than this process (another "
                f"ragfacts version or other prompts there?): install this ragfacts ({INSTALL_HINT}) on every node"
            )

    def ready(self) -> str | None:
        """None when the worker can judge, else what is wrong."""
        return self.problem

    async def judge(self, item: Item, spec: str, rank: int = 0) -> dict[str, Any]:
        """The results line of `item` by the method `spec`, the usage since the last report, and whether the
        endpoint is down (the message that stops the run, else None). `rank` is the item's place in the run:
        as in one process, the calls of earlier items go first."""
        method = self.methods[spec]
        started = time.perf_counter()
        with request_priority(rank):
            result = await method.evaluate(item, self.model)
        seconds = time.perf_counter() - started
        line = result_line(item, method, self.configs[spec], result.outcome(), result, seconds, rank)
        down = endpoint_down(self.model, self.stop_after_failures)
        return {"line": line, "usage": self.usage(), "down": down}

    def usage(self) -> dict[str, dict[str, Any]]:
        """The usage by stage since the last report (each call's usage is reported once)."""
        fresh: dict[str, dict[str, Any]] = {}
        for stage, total in self.model.ledger.stages.items():
            delta = total.since(self._reported.get(stage, Usage()))
            if delta != Usage():
                fresh[stage] = delta.model_dump()
                self._reported[stage] = total.model_copy()
        return fresh

    async def close(self) -> None:
        if self.runtime is not None:
            await self.runtime.aclose()


class RayEngine:
    """The driver's side: starts Ray (or joins a cluster), starts the workers, feeds them and collects lines."""

    def __init__(self, options: RayOptions) -> None:
        self.options = options
        self.workers: list[Any] = []
        self.judged: list[int] = []  # results each worker returned, in worker order
        self.where = ""  # the Ray this engine runs on, in words
        self._ray: Any = None
        self._started_ray = False

    async def start(self, runtime: Runtime, plan: RunPlan) -> None:
        """Start Ray and the workers, and check that they judge as this process would; raises ConfigurationError."""
        ray = self._ray = import_ray()
        model = runtime.model()
        methods = await prepare(model, plan.methods)  # probes once here; the workers are told the answer
        self._join_or_start_ray()
        count = self.options.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        setup = WorkerSetup(
            settings=_worker_settings(runtime, count),
            methods=plan.methods,
            label_scores=model.label_scores,
            configs={m.spec: m.configuration_hash(model) for m in methods},
            stop_after_failures=plan.stop_after_failures,
            environment=_forwarded_environment(),
        )
        # Judging waits on the endpoint, not on a CPU: workers take none, so any number fits, and SPREAD puts
        # them on different nodes of a cluster.
        actor = ray.remote(JudgeWorker).options(num_cpus=0, scheduling_strategy="SPREAD", max_restarts=0)
        self.workers = [actor.remote(setup) for _ in range(count)]
        self.judged = [0] * count
        try:
            problems = await asyncio.wait_for(
                asyncio.gather(*(_awaitable(w.ready.remote()) for w in self.workers)), START_TIMEOUT_S
            )
        except asyncio.TimeoutError:
            raise ConfigurationError(
                f"{count} Ray workers did not start within {START_TIMEOUT_S:.0f} s on {self.where}"
            ) from None
        except ray.exceptions.RayError as error:
            raise ConfigurationError(
                f"a Ray worker could not start on {self.where}: {_gist(error)}. Every node needs this "
                f"ragfacts installed ({INSTALL_HINT})"
            ) from None
        for problem in problems:
            if problem is not None:
                raise ConfigurationError(problem)

    async def judge(
        self,
        plan: RunPlan,
        methods: Sequence[Task],
        configs: dict[str, str],
        model: ChatModel,
        todo: set[tuple[str, str]],
        append: Callable[[dict[str, Any]], None],
        progress: RunProgress,
        report: RunReport,
    ) -> None:
        """Judge the pairs in `todo` on the workers, appending each line as it comes back (the runner's Judge)."""
        ray = self._ray
        work = (
            (item, m.spec, rank)
            for rank, item in enumerate(plan.dataset.items())
            for m in methods
            if (item.key, m.spec) in todo
        )
        # The run's window of pairs in flight, shared out among the workers like the concurrency.
        per_worker = 1 if model.serves_one_at_a_time else -(-max(plan.in_flight, 1) // len(self.workers))
        pending: dict[asyncio.Future[Any], tuple[int, Any]] = {}

        def submit(index: int) -> None:
            pair = next(work, None)
            if pair is not None:
                ref = self.workers[index].judge.remote(*pair)
                pending[_awaitable(ref)] = (index, ref)

        for _ in range(per_worker):
            for index in range(len(self.workers)):
                submit(index)
        try:
            while pending:
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    index, _ref = pending.pop(future)
                    try:
                        judged = future.result()
                    except ray.exceptions.RayActorError as error:
                        report.stopped = f"stopped early: a Ray worker died ({_gist(error)})"
                        return
                    _merge_usage(model, judged["usage"])
                    line = judged["line"]
                    append(line)
                    self.judged[index] += 1
                    report.ran += 1
                    report.incomplete += not line["complete"]
                    progress.advance(Outcome.model_validate(line["outcome"]), model.ledger.total())
                    if judged["down"] is not None:
                        report.stopped = judged["down"]
                        return
                    submit(index)
        finally:
            for future, (_, ref) in pending.items():  # what was in flight is not written: a rerun judges it
                future.add_done_callback(_ignore_outcome)
                _cancel(ray, ref)
            await self._collect_usage(model)

    async def close(self) -> None:
        """Stop the workers, and the Ray this engine started."""
        ray = self._ray
        if ray is None:
            return
        if self.workers:
            closing = [_awaitable(w.close.remote()) for w in self.workers]
            await asyncio.wait(closing, timeout=10)
            for worker in self.workers:
                ray.kill(worker)
            self.workers = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False

    def _join_or_start_ray(self) -> None:
        ray = self._ray
        address = self.options.address or os.environ.get("RAY_ADDRESS") or None
        if ray.is_initialized():  # a notebook or a test that started Ray: use it, and leave it running
            if self.options.address:
                raise ConfigurationError(
                    f"Ray is already initialised in this process; leave out the Ray address {self.options.address}"
                )
            self.where = "the Ray of this process"
            return
        try:
            ray.init(
                # "local": a new Ray for this run, even where `ray start` left the address of a cluster (Ray's
                # default would join it, or wait minutes for it when it is gone); --ray-address auto joins it.
                address=address or "local",
                include_dashboard=False,
                log_to_driver=False,  # worker failures come back as exceptions; their logs stay in Ray's session
                logging_level=logging.WARNING,
            )
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise ConfigurationError(
                f"cannot connect to Ray at {address}: {_gist(error)}; give ray://HOST:PORT (Ray Client) or "
                "HOST:PORT of a running cluster (`ray start --head`), or leave the address out to start a local Ray"
            ) from None
        self._started_ray = True
        self.where = f"Ray at {address}" if address else "a local Ray started for this run"

    async def _collect_usage(self, model: ChatModel) -> None:
        """Merge what the workers used and have not reported yet (calls of pairs stopped mid-way)."""
        ray = self._ray
        for worker in self.workers:
            try:
                _merge_usage(model, await asyncio.wait_for(_awaitable(worker.usage.remote()), 30))
            except (asyncio.TimeoutError, ray.exceptions.RayError):
                continue  # a dead worker's unreported usage is lost with it


async def run_on_ray(
    run_dir: RunDir,
    plan: RunPlan,
    runtime: Runtime,
    options: RayOptions,
    progress: RunProgress | None = None,
    announce: Callable[[RayEngine], None] | None = None,
) -> RunReport:
    """Run `plan` into `run_dir` like `runs.runner.run`, judged on Ray workers; `announce` is told where.

    Raises ConfigurationError (Ray missing, unreachable, or workers that cannot judge as this process would)
    before anything is written, and RunError as `run` does.
    """
    import_ray()
    model = runtime.model()
    if not await _work_left(run_dir, plan, model):  # a finished run: no need to start Ray
        return await run(run_dir, plan, model, progress)
    engine = RayEngine(options)
    try:
        await engine.start(runtime, plan)
        if announce is not None:
            announce(engine)
        return await run(run_dir, plan, runtime.model(), progress, judge=engine.judge)
    finally:
        await engine.close()


async def _work_left(run_dir: RunDir, plan: RunPlan, model: ChatModel) -> bool:
    """Whether the run has pairs to judge, as the runner will plan them; raises RunError as the runner would for
    a run directory made differently, before Ray is started for nothing."""
    methods = await prepare(model, plan.methods)
    configs = {m.spec: m.configuration_hash(model) for m in methods}
    check_configuration(run_dir, run_dir.load_manifest(), plan, methods, model)
    return bool(plan_work(plan, methods, configs, run_dir.index()).todo)


def import_ray() -> Any:
    """The `ray` module; raises ConfigurationError with the install command when the extra is missing."""
    try:
        import ray
    except ImportError:
        raise ConfigurationError(f"the ray engine needs Ray: {INSTALL_HINT}") from None
    return ray


def _worker_settings(runtime: Runtime, workers: int) -> Settings:
    """A worker's settings: the command's, with the model resolved here, the cache directory made absolute, and
    its share of the concurrency and of the rate limits (the run's are shared out among `workers`)."""
    settings = runtime.settings
    cache_dir = Path(settings.cache_dir).resolve() if settings.cache_dir is not None else None
    options = dict(settings.options)
    for limit in ("rpm", "tpm"):
        if options.get(limit) is not None:
            options[limit] = float(str(options[limit])) / workers
    return settings.model_copy(
        update={
            "model": str(runtime.spec),
            "base_url": runtime.spec.base_url,
            "cache_dir": cache_dir,
            "concurrency": max(1, -(-settings.concurrency // workers)),
            "options": options,
        }
    )


def _forwarded_environment() -> dict[str, str]:
    environment = {name: os.environ[name] for name in FORWARDED_VARIABLES if os.environ.get(name)}
    if "RAGFACTS_HOME" in environment:  # a worker's working directory is not this one
        environment["RAGFACTS_HOME"] = str(Path(environment["RAGFACTS_HOME"]).resolve())
    return environment


def _merge_usage(model: ChatModel, usage: dict[str, dict[str, Any]]) -> None:
    for stage, counts in usage.items():
        model.ledger.add(stage, Usage.model_validate(counts))


def _awaitable(ref: Any) -> asyncio.Future[Any]:
    return asyncio.wrap_future(ref.future())


def _ignore_outcome(future: asyncio.Future[Any]) -> None:
    """Retrieve the outcome of a pair no longer waited for (asyncio logs an exception nobody retrieved)."""
    if not future.cancelled():
        future.exception()


def _cancel(ray: Any, ref: Any) -> None:
    with contextlib.suppress(Exception):  # already finished, or the worker is gone: nothing to cancel
        ray.cancel(ref)


def _gist(error: BaseException) -> str:
    """The last line of an error's text: Ray's errors carry the remote traceback before it."""
    text = str(error).strip()
    return text.splitlines()[-1] if text else type(error).__name__
