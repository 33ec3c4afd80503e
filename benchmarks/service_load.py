"""`ragfacts serve` under load: requests/s, latency percentiles, and no lost or mixed-up answers.

Starts the scripted OpenAI-compatible server (tests/scripted_server.py) on 127.0.0.1 as the model, and
`ragfacts serve` as a real uvicorn process on 127.0.0.1 in front of it. For each client concurrency C, fires
POST /check requests (method `holistic`: one model call each) from C concurrent httpx clients, bounded by a
request count and a time limit. Every request carries a unique token in its answer; the model echoes the
token it was asked about into its reply, so a response is correct only if it comes back with its own
request's id AND the model's reply to its own answer: a lost request (an error or no answer) or a mixed-up
one (another request's id or reply) is counted, never ignored. The server's /metrics are read back to check
that it counted as many /check requests as were sent (answered and refused).

Reported per concurrency: requests, requests/s, latency p50/p90/p99/max of the answered ones, statuses,
requests refused with 429 (the service full, on purpose: each must carry Retry-After, which the client then
waits before its next request), lost (an error or any
other status), mixed up, the serve process's CPU time per request, and model calls. The model answers at once
unless --model-delay-ms, so the figures are the service's own overhead on this machine (2 cores, shared with
whatever else runs).

    python benchmarks/service_load.py [--requests 2000] [--seconds 60] [--concurrency 1 16 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from tests.scripted_server import RecordedRequest, Reply, ScriptedServer  # noqa: E402

import ragfacts  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import provenance  # noqa: E402

TOKEN = re.compile(r"load-([0-9a-f]{32})-end")
SERVICE_TOKEN = "load-test-token-" + uuid.uuid4().hex


class EchoingModel(ScriptedServer):
    """A scripted model whose reply names the token of the answer it judged (and keeps no request log)."""

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s
        self.calls = 0

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.calls += 1
        found = TOKEN.search(request.prompt)
        seen = found.group(1) if found else "none"
        return Reply(obj={"problems": [f"judged {seen}"], "verdict": "inconsistent"}, delay_s=self.delay_s)


class Served:
    """`ragfacts serve` in its own process; stderr (JSON lines) drained on a thread."""

    def __init__(self, model_url: str, home: Path, args: argparse.Namespace) -> None:
        command = [sys.executable, "-m", "ragfacts", "--model", "openai:load", "--base-url", model_url, "--no-cache"]
        command += ["--concurrency", str(args.model_concurrency), "--max-retries", "0", "serve", "--port", "0"]
        command += ["--max-concurrent", str(args.max_concurrent), "--precision", "holistic"]
        env = {**os.environ, "OPENAI_API_KEY": "sk-load", "RAGFACTS_HOME": str(home)}
        env["RAGFACTS_SERVE_TOKEN"] = SERVICE_TOKEN
        self.process = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._drain, daemon=True).start()
        self.url = self._wait_listening(timeout_s=60)
        self._wait_healthy(timeout_s=60)

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if '"event": "request"' not in line:  # keep startup and errors; request lines are many
                self.lines.put(line)

    def _wait_listening(self, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            entry = json.loads(line) if line.startswith("{") else {}
            if entry.get("event") == "listening":
                return entry["url"]
        self.process.kill()
        raise SystemExit("ragfacts serve did not start")

    def _wait_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit("ragfacts serve never answered /health")

    def cpu_s(self) -> float | None:
        """User + system CPU seconds the serve process has used (Linux)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


async def level(url: str, concurrency: int, limit: int, seconds: float) -> dict[str, Any]:
    """Fire up to `limit` requests (or for `seconds`) from `concurrency` clients; check every answer."""
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    lost = mixed = refused = refused_without_retry_after = 0
    sent = 0
    headers = {"Authorization": f"Bearer {SERVICE_TOKEN}"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    started = time.perf_counter()
    deadline = started + seconds

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal sent, lost, mixed, refused, refused_without_retry_after
        while sent < limit and time.perf_counter() < deadline:
            sent += 1
            token = uuid.uuid4().hex
            body = {"reference": "The river flows north.", "answer": f"It flows north (load-{token}-end).", "id": token}
            begun = time.perf_counter()
            try:
                response = await client.post("/check", json=body)
            except httpx.HTTPError as error:
                lost += 1
                statuses[type(error).__name__] = statuses.get(type(error).__name__, 0) + 1
                continue
            statuses[str(response.status_code)] = statuses.get(str(response.status_code), 0) + 1
            if response.status_code == 429:  # full: refused on purpose; a client comes back after Retry-After
                refused += 1
                refused_without_retry_after += "retry-after" not in response.headers
                await asyncio.sleep(float(response.headers.get("retry-after", "1")))
                continue
            if response.status_code != 200:
                lost += 1
                continue
            latencies.append(time.perf_counter() - begun)
            data = response.json()
            problems = data["result"]["judgement"]["problems"]
            if data["id"] != token or problems != [f"judged {token}"]:
                mixed += 1

    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=120) as client:
        await asyncio.gather(*(client_loop(client) for _ in range(concurrency)))
    wall = time.perf_counter() - started
    ordered = sorted(latencies)

    def percentile(share: float) -> float | None:
        if not ordered:
            return None
        return round(1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)

    return {
        "concurrency": concurrency,
        "requests": sent,
        "wall_s": round(wall, 2),
        "requests_per_s": round(sent / wall, 1) if wall else None,
        "answered_per_s": round(len(latencies) / wall, 1) if wall else None,
        "latency_ms": {
            "p50": percentile(0.50),
            "p90": percentile(0.90),
            "p99": percentile(0.99),
            "max": round(1000 * ordered[-1], 2) if ordered else None,
            "mean": round(1000 * statistics.fmean(ordered), 2) if ordered else None,
        },
        "statuses": statuses,
        "answered": len(latencies),
        "refused_429": refused,
        "refused_without_retry_after": refused_without_retry_after,
        "lost": lost,
        "mixed_up": mixed,
    }


def requests_counted_by_server(url: str) -> int:
    """POST /check requests the server counted in its /metrics (every status: answered and refused)."""
    text = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {SERVICE_TOKEN}"}).text
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith('ragfacts_http_requests_total{endpoint="/check"')
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="at most this many requests per concurrency")
    parser.add_argument("--seconds", type=float, default=60.0, help="and for at most this long per concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--model-concurrency", type=int, default=8, help="ragfacts --concurrency: model calls at once")
    parser.add_argument("--max-concurrent", type=int, default=64, help="serve --max-concurrent")
    parser.add_argument("--model-delay-ms", type=float, default=0.0, help="how long the scripted model takes")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "service_load.json")
    args = parser.parse_args()
    model = EchoingModel(args.model_delay_ms / 1000).start()
    with tempfile.TemporaryDirectory(prefix="ragfacts-load-") as scratch:
        served = Served(model.base_url, Path(scratch), args)
        try:
            levels = []
            for concurrency in args.concurrency:
                calls_before, cpu_before = model.calls, served.cpu_s()
                result = asyncio.run(level(served.url, concurrency, args.requests, args.seconds))
                cpu_after = served.cpu_s()
                result["model_calls"] = model.calls - calls_before
                if cpu_before is not None and cpu_after is not None and result["requests"]:
                    result["server_cpu_ms_per_request"] = round(1000 * (cpu_after - cpu_before) / result["requests"], 2)
                levels.append(result)
                print(json.dumps(result), flush=True)
            counted = requests_counted_by_server(served.url)
            problems = [line.strip() for line in iter_queue(served.lines) if '"level": "info"' not in line]
        finally:
            served.stop()
            model.stop()
    sent = sum(r["requests"] for r in levels)
    report = {
        "provenance": provenance(),
        "what": "POST /check (holistic, 1 model call) through `ragfacts serve` (uvicorn) to the scripted model",
        "spec": {
            "ragfacts": ragfacts.__version__,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            "requests_per_level": args.requests,
            "seconds_per_level": args.seconds,
            "model_concurrency": args.model_concurrency,
            "max_concurrent": args.max_concurrent,
            "model_delay_ms": args.model_delay_ms,
        },
        "levels": levels,
        "totals": {
            "sent": sent,
            "check_requests_per_server_metrics": counted,
            "refused_429": sum(r["refused_429"] for r in levels),
            "lost": sum(r["lost"] for r in levels),
            "mixed_up": sum(r["mixed_up"] for r in levels),
            "server_warnings_and_errors_logged": len(problems),
            "first_logged": problems[:5],
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["totals"], indent=2))


def iter_queue(lines: queue.Queue[str]) -> list[str]:
    drained = []
    while True:
        try:
            drained.append(lines.get_nowait())
        except queue.Empty:
            return drained


if __name__ == "__main__":
    main()
