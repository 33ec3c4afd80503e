"""The Ray engine: the runner's pairs judged by worker actors, the same run directory written by the driver.

Tests that need Ray share one local Ray with two CPUs for this module (the engine joins a Ray that this process
started, and leaves it running); they skip when the `ray` extra is not installed, unless RAGFACTS_REQUIRE_RAY_TESTS=1.
The workers are real processes talking to the scripted server over HTTP. The workers' own tests (configuration
check, usage reports) need no Ray: a worker is a plain class that Ray runs as an actor.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragfacts.datasets.dataset import Dataset
from ragfacts.methods.base import create_method
from ragfacts.models import ConfigurationError
from ragfacts.runs.current import summarise
from ragfacts.runs.planning import RunPlan
from ragfacts.runs.ray_engine import JudgeWorker, RayEngine, RayOptions, WorkerSetup, _worker_settings, run_on_ray
from ragfacts.runs.rundir import RunDir, RunError
from ragfacts.runs.runner import run
from ragfacts.runtime import Runtime, Settings
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply, ScriptedServer


def import_ray_or_skip():
    """The `ray` module; the test skips without it, or fails where CI asks for these tests
    (RAGFACTS_REQUIRE_RAY_TESTS=1)."""
    if os.environ.get("RAGFACTS_REQUIRE_RAY_TESTS") == "1":
        import ray

        return ray
    return pytest.importorskip("ray", reason="needs the [ray] extra")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray = import_ray_or_skip()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture
def server(scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)  # the workers get it from this process
    return scripted_server


def runtime_for(url: str, **options: object) -> Runtime:
    return Runtime(
        Settings(
            model="openai:scripted-model", base_url=url, use_cache=False, options={"retry_base_s": 0.01, **options}
        )
    )


def write(path: Path, count: int) -> Path:
    """Rows that differ in their reference and ground truth; the answer is what the scripted server's segments and
    facts say ("x"), so that every result is complete."""
    rows = [{"answer": "x", "reference": f"Context {n}.", "ground_truth": f"Truth {n}."} for n in range(count)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def plan(path: Path, **options) -> RunPlan:
    return RunPlan(dataset=Dataset.open(path), methods=[create_method("lface4rag"), create_method("faaf")], **options)


def scrub(value):
    """A result without what differs between two runs of the same work: times (`seconds`, `finished`, `*_s`)."""
    if isinstance(value, dict):
        return {key: scrub(v) for key, v in value.items() if key not in ("seconds", "finished") and key[-2:] != "_s"}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def results_of(run_dir: RunDir) -> dict:
    return {(line["id"], line["method"]): scrub(line) for line in run_dir.lines()}


def ledger_of(run_dir: RunDir) -> dict:
    return scrub(json.loads(run_dir.ledger.read_text(encoding="utf-8")))


async def on_ray(run_dir: RunDir, run_plan: RunPlan, runtime: Runtime, workers: int = 2, engines: list | None = None):
    try:
        announce = engines.append if engines is not None else None
        return await run_on_ray(run_dir, run_plan, runtime, RayOptions(workers=workers), announce=announce)
    finally:
        await runtime.aclose()


async def here(run_dir: RunDir, run_plan: RunPlan, runtime: Runtime):
    try:
        return await run(run_dir, run_plan, runtime.model())
    finally:
        await runtime.aclose()


async def test_two_workers_write_the_results_summary_and_ledger_of_a_single_process_run(local_ray, server, tmp_path):
    data = write(tmp_path / "data.jsonl", 12)
    local = RunDir(tmp_path / "local")
    single = await here(local, plan(data), runtime_for(server.base_url))
    requests_here = len(server.requests)
    server.reset()

    engines: list[RayEngine] = []
    sharded = RunDir(tmp_path / "ray")
    report = await on_ray(sharded, plan(data), runtime_for(server.base_url), engines=engines)

    assert (report.results, report.ran, report.reused, report.incomplete, report.stopped) == (24, 24, 0, 0, None)
    assert single.incomplete == 0
    (engine,) = engines
    assert len(engine.judged) == 2 and min(engine.judged) > 0 and sum(engine.judged) == 24  # both workers judged
    assert results_of(sharded) == results_of(local) and len(list(sharded.lines())) == 24
    model = runtime_for(server.base_url).model()
    assert [s.model_dump() for s in summarise(sharded, plan(data), model)] == [
        s.model_dump() for s in summarise(local, plan(data), model)
    ]
    assert ledger_of(sharded) == ledger_of(local)  # every worker's usage merged, stage by stage
    assert report.usage.calls == len(server.requests) == requests_here
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {TEST_KEY}"}  # forwarded to workers
    manifests = [json.loads(r.manifest.read_text()) for r in (local, sharded)]
    assert manifests[0]["methods"] == manifests[1]["methods"] and manifests[0]["model"] == manifests[1]["model"]


async def test_a_partial_run_resumes_on_ray_judging_only_what_is_left(local_ray, server, tmp_path):
    data = write(tmp_path / "data.jsonl", 8)
    run_dir = RunDir(tmp_path / "run")
    partial = await on_ray(run_dir, plan(data, limit=3), runtime_for(server.base_url))
    assert (partial.ran, partial.not_run) == (6, 10)
    server.reset()

    resumed = await on_ray(run_dir, plan(data), runtime_for(server.base_url))
    assert (resumed.reused, resumed.ran, resumed.not_run) == (6, 10, 0)
    done_before = [f"{kind} {n}." for n in range(3) for kind in ("Context", "Truth")]
    assert not any(text in request.prompt for request in server.requests for text in done_before)
    assert json.loads(run_dir.ledger.read_text())["total"]["calls"] == partial.usage.calls + resumed.usage.calls

    whole = RunDir(tmp_path / "whole")
    await here(whole, plan(data), runtime_for(server.base_url))
    assert results_of(run_dir) == results_of(whole)
    invocations = json.loads(run_dir.manifest.read_text())["invocations"]
    assert [(i["ran"], i["reused"]) for i in invocations] == [(6, 0), (10, 6)]


async def test_a_run_made_in_one_process_is_finished_on_ray_and_a_finished_one_starts_no_ray(
    local_ray, server, tmp_path
):
    data = write(tmp_path / "data.jsonl", 6)
    run_dir = RunDir(tmp_path / "run")
    await here(run_dir, plan(data, limit=2), runtime_for(server.base_url))
    engines: list[RayEngine] = []
    finished = await on_ray(run_dir, plan(data), runtime_for(server.base_url), engines=engines)
    assert (finished.reused, finished.ran) == (4, 8) and len(engines) == 1
    server.reset()
    again = await on_ray(run_dir, plan(data), runtime_for(server.base_url), engines=engines)
    assert (again.reused, again.ran) == (12, 0) and len(engines) == 1 and server.requests == []


async def test_a_run_directory_of_another_configuration_is_refused_before_ray_starts(local_ray, server, tmp_path):
    data = write(tmp_path / "data.jsonl", 2)
    run_dir = RunDir(tmp_path / "run")
    await here(run_dir, plan(data), runtime_for(server.base_url))
    engines: list[RayEngine] = []
    with pytest.raises(RunError, match="another configuration"):
        await on_ray(run_dir, plan(data), runtime_for(server.base_url, temperature=0.5), engines=engines)
    assert engines == []


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def test_an_unreachable_endpoint_stops_the_ray_run_early_with_nothing_marked_done(local_ray, server, tmp_path):
    data = write(tmp_path / "data.jsonl", 30)
    run_dir = RunDir(tmp_path / "run")
    url = closed_port_url()
    report = await on_ray(run_dir, plan(data, stop_after_failures=3, in_flight=2), runtime_for(url, max_retries=0))
    assert report.stopped is not None and f"3 calls in a row to {url}" in report.stopped
    assert report.not_run > 0 and report.ran < 60
    assert not any(entry.complete for entry in run_dir.index().entries.values())
    assert json.loads(run_dir.ledger.read_text())["total"]["failures"] >= report.ran


async def test_an_address_when_this_process_already_runs_ray_is_refused(local_ray, server, tmp_path):
    data = write(tmp_path / "data.jsonl", 1)
    runtime = runtime_for(server.base_url)
    with pytest.raises(ConfigurationError, match="already initialised"):
        await run_on_ray(RunDir(tmp_path / "run"), plan(data), runtime, RayOptions(address="ray://127.0.0.1:1"))
    await runtime.aclose()
    assert not (tmp_path / "run").exists()


async def setup_for(url: str, configs: dict[str, str] | None = None) -> tuple[WorkerSetup, dict[str, str]]:
    runtime = runtime_for(url)
    model = runtime.model()
    methods = [create_method("lface4rag"), create_method("faaf")]
    expected = {m.spec: m.resolved(model).configuration_hash(model) for m in methods}
    await runtime.aclose()
    setup = WorkerSetup(runtime.settings, methods, None, configs or expected, 5, environment={})
    return setup, expected


async def test_a_worker_that_would_judge_with_another_configuration_says_so(server):
    setup, expected = await setup_for(server.base_url, {"lface4rag": "0" * 16, "faaf": "1" * 16})
    worker = JudgeWorker(setup)
    assert "would judge lface4rag, faaf with another configuration" in (worker.ready() or "")
    await worker.close()
    same = JudgeWorker((await setup_for(server.base_url))[0])
    assert same.ready() is None and same.configs == expected
    await same.close()


async def test_a_worker_reports_each_calls_usage_once(server, tmp_path):
    setup, _ = await setup_for(server.base_url)
    worker = JudgeWorker(setup)
    item = next(Dataset.open(write(tmp_path / "data.jsonl", 1)).items())
    server.enqueue(Reply.error(400))  # the first call fails: its usage counts too
    first = await worker.judge(item, "faaf")
    second = await worker.judge(item, "lface4rag")
    await worker.close()
    assert first["line"]["method"] == "faaf" and first["usage"] and first["down"] is None
    calls = sum(counts["calls"] for result in (first, second) for counts in result["usage"].values())
    assert calls == len(server.requests) and worker.usage() == {}
    assert first["usage"]["generate_facts"]["failures"] == 1


def test_the_runs_concurrency_and_rate_limits_are_shared_out_among_the_workers(server):
    runtime = Runtime(
        Settings(
            model="openai:scripted-model", base_url=server.base_url, concurrency=8, options={"rpm": 60, "tpm": 9e4}
        )
    )
    settings = _worker_settings(runtime, 3)
    assert (settings.concurrency, settings.options["rpm"], settings.options["tpm"]) == (3, 20.0, 3e4)
    assert _worker_settings(runtime, 16).concurrency == 1  # never less than one request in flight
