"""The real peers side by side: the `ragas` and `refchecker` packages against our methods of the same name.

One model serves everyone: the embedded GGUF (or --gguf) through `python -m llama_cpp.server` on 127.0.0.1,
started and stopped by this script, behind a small counting proxy, so calls, tokens, failures and time are
measured the same way for the peer and for ragfacts. On the same items (a stratified sample of a labelled
set) it reports label agreement, score correlation, accuracy against the gold labels, and cost.

Peers: RAGAS faithfulness (`ragas.metrics.Faithfulness`, through LangChain's ChatOpenAI; a NaN score is a
failure) and RefChecker (`LLMExtractor` + `LLMChecker` through LiteLLM, one check per triplet as in the
paper, strict aggregation). Ours: `ragas` and `refchecker` through `ragfacts.check`.

    python -m venv /tmp/peers && . /tmp/peers/bin/activate
    pip install torch==2.13.0  # the CPU build; refchecker would pull CUDA otherwise
    pip install -r benchmarks/requirements-peers.txt -e .
    python benchmarks/peers.py --data benchmarks/data/quality/dev.jsonl --sample 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

import ragfacts
from ragfacts.bench.sampling import stratified_sample
from ragfacts.datasets.dataset import Dataset
from ragfacts.models.local.embedded import ensure_default_model
from ragfacts.models.spec import ragfacts_home

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
os.environ.setdefault("OPENAI_API_KEY", "sk-local")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no usage analytics calls out


class CountingProxy:
    """An OpenAI-compatible pass-through that counts calls, tokens, failures and time per phase."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.phase = "idle"
        self.counts: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=600)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                started = time.perf_counter()
                try:
                    reply = proxy._client.post(
                        proxy.upstream + self.path.removeprefix("/v1"),
                        content=body,
                        headers={"Content-Type": "application/json"},
                    )
                    status, data = reply.status_code, reply.content
                except httpx.HTTPError as error:
                    status, data = 502, json.dumps({"error": {"message": str(error)}}).encode()
                proxy._count(status, data, time.perf_counter() - started)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                reply = proxy._client.get(proxy.upstream + self.path.removeprefix("/v1"))
                self.send_response(reply.status_code)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(reply.content)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _count(self, status: int, data: bytes, seconds: float) -> None:
        usage: dict[str, Any] = {}
        with contextlib.suppress(json.JSONDecodeError, AttributeError):
            usage = json.loads(data).get("usage") or {}
        with self._lock:
            c = self.counts.setdefault(
                self.phase,
                {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "http_errors": 0, "server_seconds": 0.0},
            )
            c["calls"] += 1
            c["prompt_tokens"] += usage.get("prompt_tokens", 0)
            c["completion_tokens"] += usage.get("completion_tokens", 0)
            c["http_errors"] += status >= 400
            c["server_seconds"] += seconds

    def stop(self) -> None:
        self._server.shutdown()


def start_llama_server(gguf: Path, n_ctx: int) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--model_alias",
        "local",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(1)
    process.kill()
    raise SystemExit("llama_cpp.server did not start (is llama-cpp-python[server] installed?)")


async def peer_ragas(items: list[Any], url: str) -> list[float | None]:
    from langchain_openai import ChatOpenAI
    from ragas import SingleTurnSample
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import Faithfulness

    llm = LangchainLLMWrapper(ChatOpenAI(model="local", base_url=url, api_key="sk-local", temperature=0))
    metric = Faithfulness(llm=llm)
    scores: list[float | None] = []
    for item in items:
        sample = SingleTurnSample(
            user_input=item.question or "", response=item.answer, retrieved_contexts=[item.reference]
        )
        try:
            score = await metric.single_turn_ascore(sample)
        except Exception as error:  # a peer's failure is a result here, counted like a NaN
            print(f"  ragas failed on {item.id}: {type(error).__name__}: {error}", file=sys.stderr)
            score = math.nan
        scores.append(None if score is None or math.isnan(score) else float(score))
    return scores


def peer_refchecker(items: list[Any], url: str) -> list[dict[str, Any]]:
    from refchecker import LLMChecker, LLMExtractor

    extractor = LLMExtractor(claim_format="triplet", model="openai/local", batch_size=1, api_base=url)
    checker = LLMChecker(model="openai/local", batch_size=1, api_base=url)
    found = []
    for item in items:
        try:
            extracted = extractor.extract(batch_responses=[item.answer], batch_questions=[item.question])
            claims = [c.content for c in extracted[0].claims]
            labels = (
                checker.check(
                    batch_claims=[claims],
                    batch_references=[[item.reference]],
                    batch_questions=[item.question],
                    is_joint=False,
                    merge_psg=True,  # one label per claim; without it each is a list, one per reference
                )[0]
                if claims
                else []
            )
        except Exception as error:
            print(f"  refchecker failed on {item.id}: {type(error).__name__}: {error}", file=sys.stderr)
            found.append({"label": None, "score": None, "claims": 0})
            continue
        flat = [label if isinstance(label, str) else str(label) for label in labels]
        entailed = sum(label == "Entailment" for label in flat)
        label = None if not flat else ("consistent" if entailed == len(flat) else "inconsistent")
        found.append({"label": label, "score": entailed / len(flat) if flat else None, "claims": len(flat)})
    return found


def ours(items: list[Any], url: str, method: str) -> list[dict[str, Any]]:
    # llama_cpp.server constrains output through a forced tool call (it has no json_schema response format),
    # and like every grammar it does not show the schema to the model: render it into the prompt.
    tool_mode = {"mode": "tool", "schema_in_prompt": True}
    settings = {"base_url": url, "concurrency": 1, "cache": False, "model_options": tool_mode}
    results = ragfacts.check(items, method=method, model="openai:local", settings=settings)
    return [{"label": row["label"], "score": row["faithfulness"]} for row in results]


def compare(name: str, peer: list[dict[str, Any]], mine: list[dict[str, Any]], gold: list[str | None]) -> dict:
    both = [(p, m) for p, m in zip(peer, mine, strict=True) if p["label"] and m["label"] != "unscored"]
    pairs = [
        (p["score"], m["score"])
        for p, m in zip(peer, mine, strict=True)
        if p["score"] is not None and m["score"] is not None
    ]
    return {
        "method": name,
        "items": len(peer),
        "peer_failures": sum(p["label"] is None for p in peer),
        "ours_unscored": sum(m["label"] == "unscored" for m in mine),
        "label_agreement": sum(p["label"] == m["label"] for p, m in both) / len(both) if both else None,
        "compared": len(both),
        "score_correlation": _pearson(pairs),
        "peer_accuracy": _accuracy([p["label"] for p in peer], gold),
        "ours_accuracy": _accuracy([m["label"] for m in mine], gold),
    }


def _pearson(pairs: list[tuple[float, float]]) -> float | None:
    if len(pairs) < 3:
        return None
    xs, ys = zip(*pairs, strict=True)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if not sx or not sy:
        return None
    return sum((x - mx) * (y - my) for x, y in pairs) / (sx * sy)


def _accuracy(labels: list[str | None], gold: list[str | None]) -> float | None:
    scored = [(label, g) for label, g in zip(labels, gold, strict=True) if g]
    return sum(label == g for label, g in scored) / len(scored) if scored else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("benchmarks/data/quality/dev.jsonl"))
    parser.add_argument("--sample", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gguf", type=Path, default=None, help="default: the embedded model")
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/peers.json"))
    args = parser.parse_args()
    items = list(stratified_sample(Dataset.open(args.data), args.sample, args.seed).items())
    gold = [item.label for item in items]
    gguf = args.gguf or ensure_default_model(ragfacts_home() / "models")
    server, upstream = start_llama_server(gguf, args.n_ctx)
    proxy = CountingProxy(upstream)
    walls: dict[str, float] = {}
    try:
        runs: dict[str, Any] = {}
        for phase, job in (
            (
                "ragas (peer)",
                lambda: [
                    {"label": None if s is None else ("consistent" if s >= 1.0 else "inconsistent"), "score": s}
                    for s in asyncio.run(peer_ragas(items, proxy.url))
                ],
            ),
            ("ragas (ragfacts)", lambda: ours(items, proxy.url, "ragas")),
            ("refchecker (peer)", lambda: peer_refchecker(items, proxy.url)),
            ("refchecker (ragfacts)", lambda: ours(items, proxy.url, "refchecker")),
        ):
            proxy.phase = phase
            started = time.perf_counter()
            runs[phase] = job()
            walls[phase] = round(time.perf_counter() - started, 1)
            print(f"{phase}: {walls[phase]} s, {proxy.counts.get(phase)}", file=sys.stderr, flush=True)
    finally:
        proxy.stop()
        server.terminate()
        server.wait(timeout=30)
    report = {
        "provenance": provenance(data=files(args.data)),
        "model": gguf.name,
        "data": str(args.data),
        "items": [item.id for item in items],
        "comparison": [
            compare("ragas", runs["ragas (peer)"], runs["ragas (ragfacts)"], gold),
            compare("refchecker", runs["refchecker (peer)"], runs["refchecker (ragfacts)"], gold),
        ],
        "cost": {phase: {**proxy.counts.get(phase, {}), "wall_s": walls[phase]} for phase in walls},
        "per_item": {phase: runs[phase] for phase in runs},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"comparison": report["comparison"], "cost": report["cost"]}, indent=2))


if __name__ == "__main__":
    main()
