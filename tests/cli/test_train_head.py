"""`ragfacts train-head`: a head fitted to the user's labelled answers and model, reported on a test split it
made, written only if it beats the default judge there, and usable with -O head=FILE (refused for another model).

Against the scripted server: an endpoint gives log-probabilities but no hidden state, so the head is a calibrated
logistic over P(Yes) and the evidence features. The answers are made so that P(Yes) says nothing and the evidence
(a year the reference does not contain) says everything: the head must find that, and the default cannot.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.methods.precision.head import Head
from tests.conftest import TEST_KEY
from tests.methods.test_lface4rag_scored import yes
from tests.scripted_server import ScriptedServer

runner = CliRunner()


def rows(n: int = 60) -> list[dict[str, str]]:
    out = []
    for i in range(n):
        year, faithful = 1800 + i, i % 2 == 0
        out.append(
            {
                "id": f"r{i}",
                "reference": f"Bridge number {i} opened in {year} and is {100 + i} metres long.",
                "answer": f"Bridge number {i} opened in {year if faithful else year + 7}.",
                "label": "consistent" if faithful else "inconsistent",
            }
        )
    return out


@pytest.fixture
def server(scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    scripted_server.enqueue(yes(0.9))  # the probe
    for i, row in enumerate(rows()):
        scripted_server.when(row["answer"], yes(0.3 + 0.4 * ((i * 37) % 10) / 10))  # P(Yes) unrelated to the label
    return scripted_server


def invoke(server: ScriptedServer, *args: str, model: str = "openai:user-model"):
    return runner.invoke(app, ["--model", model, "--base-url", server.base_url, *args], env={"COLUMNS": "200"})


def write(path, data) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")


def test_a_head_is_fitted_reported_on_its_own_test_split_written_and_used(server, tmp_path):
    data, head_file = tmp_path / "labelled.jsonl", tmp_path / "head.json"
    write(data, rows())
    result = invoke(server, "--json", "train-head", str(data), "-o", str(head_file))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["features"] == "log-odds + evidence" and sum(report["split"].values()) == 60
    assert report["test"]["head"]["balanced_accuracy"]["value"] == 1.0  # the evidence separates the labels
    assert report["test"]["default"]["value"] < 1.0 and report["default"].startswith("holistic_score")
    head = Head.load(head_file)
    assert head.model_sha256 is None and head.model_id == "user-model" and not head.uses_state
    assert head.training["data"]["sha256"] and "trained_head" in head.calibrations
    assert "head written to" in result.stderr and "reading the answers took" in result.stderr

    server.requests.clear()
    server.enqueue(yes(0.9))
    flawed = rows()[1]
    options = ["-O", "strategy=trained_head", "-O", f"head={head_file}", "-O", "explain_failures=false"]
    used = invoke(server, "--json", "check", "-r", flawed["reference"], "-a", flawed["answer"], *options)
    assert used.exit_code == 0, used.output
    assert json.loads(used.stdout)["label"] == "inconsistent"

    refused = invoke(server, "check", "-r", flawed["reference"], "-a", flawed["answer"], *options, model="openai:other")
    assert refused.exit_code == 2 and "trained on the answers of user-model, not other" in refused.stderr

    # the same file calibrates the model's plain P(Yes) too (holistic_score), for this model only
    scored = ["-O", "strategy=holistic_score", "-O", f"head={head_file}", "-O", "explain_failures=false"]
    plain = invoke(server, "--json", "check", "-r", flawed["reference"], "-a", flawed["answer"], *scored)
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.stdout)["holistic"]["calibrated"] is True
    other = invoke(server, "check", "-r", flawed["reference"], "-a", flawed["answer"], *scored, model="openai:other")
    assert other.exit_code == 2 and "not other" in other.stderr


def test_a_rerun_reads_no_answer_twice(server, tmp_path):
    data, head_file = tmp_path / "labelled.jsonl", tmp_path / "head.json"
    write(data, rows())
    assert invoke(server, "train-head", str(data), "-o", str(head_file)).exit_code == 0
    first = len(server.requests)
    head_file.unlink()
    assert invoke(server, "train-head", str(data), "-o", str(head_file)).exit_code == 0
    assert first == 61 and len(server.requests) == first  # the readings were kept in head.json.features.jsonl
    assert head_file.is_file()


def test_too_few_labelled_answers_is_bad_input_and_writes_nothing(server, tmp_path):
    data, head_file = tmp_path / "labelled.jsonl", tmp_path / "head.json"
    write(data, rows(10))
    result = invoke(server, "train-head", str(data), "-o", str(head_file))
    assert result.exit_code == 2 and "a head needs at least 40" in result.stderr
    assert not head_file.exists() and server.requests == []
