"""`ragfacts serve` on the command line: a clear exit 2 for what it cannot do, and no FastAPI for other commands."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from tests.conftest import TEST_KEY

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, ["--model", "openai:scripted", "--base-url", "http://127.0.0.1:9/v1", *args])


def test_without_the_serve_extra_it_exits_2_naming_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "fastapi", None)  # as if it were not installed
    result = invoke("serve")
    assert result.exit_code == 2
    assert "pip install 'ragfacts[serve]'" in result.stderr and "fastapi" in result.stderr


def test_other_commands_never_import_fastapi():
    code = "import sys; from ragfacts.cli import app; print('fastapi' in sys.modules, 'uvicorn' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_the_help_lists_serve_and_its_limits():
    result = runner.invoke(app, ["serve", "--help"])
    assert result.exit_code == 0
    for flag in ("--host", "--port", "--max-body-kb", "--request-timeout", "--max-concurrent", "--token-env"):
        assert flag in result.stdout


def test_a_token_variable_that_is_named_but_not_set_exits_2(monkeypatch):
    pytest.importorskip("fastapi")
    monkeypatch.delenv("MY_SERVE_TOKEN", raising=False)
    result = invoke("serve", "--token-env", "MY_SERVE_TOKEN")
    assert result.exit_code == 2 and "MY_SERVE_TOKEN: that environment variable is not set" in result.stderr


def test_a_port_in_use_exits_2_naming_it(monkeypatch):
    pytest.importorskip("fastapi")
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke("serve", "--port", str(port))
    assert result.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr


def test_an_unknown_default_method_exits_2(monkeypatch):
    pytest.importorskip("fastapi")
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    result = invoke("serve", "--port", "0", "--precision", "nope")
    assert result.exit_code == 2 and "unknown method 'nope'" in result.stderr


def test_a_model_it_cannot_build_exits_2_before_serving():
    pytest.importorskip("fastapi")
    result = runner.invoke(app, ["--model", "openai:scripted", "serve", "--port", "0"])  # no key, no base URL
    assert result.exit_code == 2 and "set OPENAI_API_KEY" in result.stderr
