"""Nothing secret on disk or on screen: a run against a server that echoes the key, and a base URL with
credentials, then a planted-secret scan of every file the run wrote, the cache, stdout and stderr.

A secret counts as leaked if it, or any 8 consecutive characters of it, appears anywhere (servers echo keys in
part: "Incorrect API key provided: sk-abc…")."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from typer.testing import CliRunner

from ragfacts.cli import app
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply

runner = CliRunner()
ECHO = "Incorrect API key provided: {key}. You can find your API key at https://example.invalid/keys."


def leaks(text: str, secret: str) -> list[str]:
    """The pieces of `secret` (8+ characters) found in `text`."""
    return sorted({secret[i : i + 8] for i in range(len(secret) - 7) if secret[i : i + 8] in text})


def written(*folders: Path) -> dict[str, str]:
    """Every file under the folders, as text (bytes decoded leniently: a SQLite cache is scanned too)."""
    return {
        str(path): path.read_bytes().decode("utf-8", errors="replace")
        for folder in folders
        for path in folder.rglob("*")
        if path.is_file()
    }


def dataset(folder: Path) -> Path:
    data = folder / "answers.jsonl"
    rows = [{"id": f"r{n}", "reference": "The tower is 300 m tall.", "answer": f"It is {n} m tall."} for n in (1, 2)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return data


def test_api_key_in_401_message_is_never_stored_or_printed(server, tmp_path, isolated_home):
    for _ in range(40):
        server.enqueue(Reply.error(401, error_message=ECHO))
    run = tmp_path / "run"
    args = ["--model", "openai:m", "--base-url", server.base_url, "--json", "evaluate", str(dataset(tmp_path))]
    result = runner.invoke(app, [*args, "-o", str(run), "--precision", "holistic", "--recall", "none"])
    assert result.exit_code in (0, 3), result.output
    assert any(TEST_KEY[:20] in r.headers.get("authorization", "") for r in server.requests)  # the key was sent
    assert "[redacted]" in (run / "results.jsonl").read_text(encoding="utf-8")  # and echoed, then redacted
    texts = {"stdout": result.stdout, "stderr": result.stderr, **written(run, isolated_home)}
    assert {name: leaks(text, TEST_KEY) for name, text in texts.items() if leaks(text, TEST_KEY)} == {}


def test_base_url_credentials_are_never_stored_or_printed(server, tmp_path, isolated_home):
    host = server.base_url.split("://", 1)[1]
    base_url = f"http://gateway-user:p4ss-w0rd-123456@{host}"
    server.when("", Reply.json({"verdict": "consistent"}))
    run = tmp_path / "run"
    args = ["--model", "openai:m", "--base-url", base_url, "--json", "evaluate", str(dataset(tmp_path))]
    result = runner.invoke(app, [*args, "-o", str(run), "--precision", "holistic:cot=false", "--recall", "none"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert "[redacted]@" in json.dumps(manifest)  # the server's address is kept, its credentials are not
    basic = base64.b64encode(b"gateway-user:p4ss-w0rd-123456").decode()
    texts = {"stdout": result.stdout, "stderr": result.stderr, **written(run, isolated_home)}
    for secret in ("p4ss-w0rd-123456", basic):
        assert {name: leaks(text, secret) for name, text in texts.items() if leaks(text, secret)} == {}


def test_an_over_long_input_is_refused_before_it_is_sent_and_the_result_says_so(server, tmp_path):
    answer = tmp_path / "answer.txt"
    answer.write_text("The tower is tall. " * 40_000, encoding="utf-8")  # 760,000 characters, ~190,000 tokens
    args = ["--model", "openai:m", "--base-url", server.base_url, "--json", "check", "-r", "R.", "-a", f"@{answer}"]
    result = runner.invoke(app, [*args, "--method", "holistic"])
    data = json.loads(result.stdout)
    assert server.requests == [] and data["label"] == "unscored"
    assert (
        "more than the model's context of 131,072 tokens (declare it with -M n_ctx=); not sent"
        in (data["judgement"]["call"]["failure"]["message"])
    )
    server.when("", Reply.json({"problems": [], "verdict": "consistent"}))
    declared = runner.invoke(app, [*args[:4], "-M", "n_ctx=1000000", *args[4:], "--method", "holistic"])
    assert declared.exit_code == 0 and len(server.requests) == 1  # a declared larger context: sent
