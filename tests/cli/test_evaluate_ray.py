"""`ragfacts evaluate --engine ray`: the same run directory, judged on Ray workers that the command starts.

The end-to-end tests run the command in a subprocess (which starts, and stops, its own local Ray) and skip when
the `ray` extra is not installed (unless RAGFACTS_REQUIRE_RAY_TESTS=1); the test of what happens without it runs
either way.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from ragfacts.cli import app
from tests.conftest import TEST_KEY
from tests.runs.test_ray_engine import import_ray_or_skip
from tests.scripted_server import Reply

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def write_rows(path: Path, count: int) -> Path:
    rows = [{"answer": "x", "reference": f"Context {n}.", "ground_truth": f"Truth {n}."} for n in range(count)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def invoke(url: str, *args: str):
    return runner.invoke(app, ["--model", "openai:scripted", "--base-url", url, "--no-cache", *args])


def test_without_the_ray_extra_the_ray_engine_exits_2_naming_the_install_and_writes_nothing(
    server, tmp_path, monkeypatch
):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` does where the extra is not installed
    data = write_rows(tmp_path / "rows.jsonl", 2)
    result = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"), "--engine", "ray")
    assert result.exit_code == 2, result.output
    assert "pip install 'ragfacts[ray]'" in " ".join(result.output.split())
    assert not (tmp_path / "run").exists() and server.requests == []


def test_ray_options_without_the_ray_engine_are_refused(server, tmp_path):
    data = write_rows(tmp_path / "rows.jsonl", 1)
    result = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"), "--ray-workers", "2")
    assert result.exit_code == 2 and "--ray-workers need --engine ray" in result.output
    assert not (tmp_path / "run").exists() and server.requests == []


def ragfacts(url: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "ragfacts", "--model", "openai:m", "--base-url", url, "--concurrency", "2", *args]


def scrub(value):
    """A result without what differs between two runs of the same work: times (`seconds`, `finished`, `*_s`)."""
    if isinstance(value, dict):
        return {key: scrub(v) for key, v in value.items() if key not in ("seconds", "finished") and key[-2:] != "_s"}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def results_of(run: Path) -> dict:
    lines = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return {(line["id"], line["method"]): scrub(line) for line in lines}


def test_a_ray_run_killed_with_sigkill_resumes_to_what_a_single_process_run_writes(server, tmp_path):
    import_ray_or_skip()
    data = write_rows(tmp_path / "rows.jsonl", 24)
    server.when("<answer>", Reply.schema_valid(delay_s=0.1))
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "RAGFACTS_HOME": str(tmp_path / "home")}
    env.pop("RAY_ADDRESS", None)
    killed = tmp_path / "killed"
    command = ragfacts(
        server.base_url, "--no-cache", "--json", "evaluate", str(data), "-o", str(killed), "--engine", "ray"
    )
    process = subprocess.Popen(
        [*command, "--ray-workers", "2"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    results = killed / "results.jsonl"
    deadline = time.monotonic() + 300  # Ray starts first: seconds on a quiet machine, more on a busy one
    while time.monotonic() < deadline and (not results.exists() or len(results.read_bytes().splitlines()) < 6):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = len(results.read_bytes().splitlines())
    assert 6 <= done_before < 48, "the run was not killed mid-way"

    resumed = subprocess.run(
        [*command, "--ray-workers", "2"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "judging on a local Ray started for this run with 2 workers" in resumed.stderr
    report = json.loads(resumed.stdout)["report"]
    assert report["reused"] >= done_before - 1 and report["reused"] + report["ran"] == 48  # at most one line torn

    whole = tmp_path / "whole"
    single = subprocess.run(
        ragfacts(server.base_url, "--no-cache", "--json", "evaluate", str(data), "-o", str(whole)),
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert single.returncode == 0, single.stderr
    assert results_of(killed) == results_of(whole) and len(results_of(killed)) == 48
    on_ray, here = json.loads(resumed.stdout), json.loads(single.stdout)
    assert scrub(on_ray["rows"]) == scrub(here["rows"]) and scrub(on_ray["summary"]) == scrub(here["summary"])
