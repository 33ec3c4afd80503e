"""The cascade: answers the first judge leaves uncertain are judged again by a second model, which decides; both
verdicts and both costs are kept, apart. Through the CLI against the scripted server, where the two models are
told apart by the model name each request carries."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from tests.conftest import TEST_KEY
from tests.methods.test_lface4rag_scored import yes
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()
REFERENCE = "The tower was finished in 1889 for the World's Fair."
ANSWERS = {"sure": "The tower was finished in 1889.", "unsure": "The tower was built for a fair.", "bad": "It is 1920."}
FIRST = ["--strategy", "holistic_score", "--uncertain", "0.4,0.6", "--explain", "none"]
SECOND = ["--escalate-to", "openai:strong", "--escalate-method", "holistic:cot=false"]


@pytest.fixture
def server(scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    scripted_server.enqueue(yes(0.9))  # the first model is asked once whether it gives log-probabilities
    scripted_server.when(ANSWERS["sure"], yes(0.9))
    scripted_server.when(ANSWERS["unsure"], yes(0.5), times=1)  # the first judge: in the band
    scripted_server.when(ANSWERS["unsure"], Reply.json({"verdict": "inconsistent"}))  # the second judge
    scripted_server.when(ANSWERS["bad"], yes(0.1))
    return scripted_server


def invoke(server: ScriptedServer, *args: str):
    return runner.invoke(app, ["--model", "openai:weak", "--base-url", server.base_url, *args], env={"COLUMNS": "200"})


def models(server: ScriptedServer) -> list[str]:
    return [r.body["model"] for r in server.requests]


def test_one_uncertain_answer_is_judged_again_by_the_second_model_whose_verdict_decides(server):
    args = ["--json", "check", "-r", REFERENCE, "-a", ANSWERS["unsure"], *FIRST, *SECOND]
    result = invoke(server, *args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert models(server) == ["weak", "weak", "strong"]  # the probe, the first judge, the second
    assert data["first_outcome"]["label"] == "uncertain" and data["second_outcome"]["label"] == "inconsistent"
    assert data["first"]["holistic"]["probability"] == pytest.approx(0.5)
    assert data["first_outcome"]["usage"]["completions"] == 1 and data["second_outcome"]["usage"]["completions"] == 1
    assert "escalated to strong" in result.stderr and "strong › holistic_direct" in result.stderr


def test_a_sure_answer_is_not_escalated(server):
    result = invoke(server, "--json", "check", "-r", REFERENCE, "-a", ANSWERS["sure"], *FIRST, *SECOND)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (
        models(server) == ["weak", "weak"] and data["second"] is None and data["first_outcome"]["label"] == "consistent"
    )


def test_a_dataset_escalates_only_its_uncertain_answers_keeps_costs_apart_and_resumes_without_calls(server, tmp_path):
    data = tmp_path / "answers.jsonl"
    data.write_text(
        "".join(json.dumps({"id": k, "reference": REFERENCE, "answer": a}) + "\n" for k, a in ANSWERS.items()),
        encoding="utf-8",
    )
    run = tmp_path / "run"
    result = invoke(server, "--json", "check", str(data), "-o", str(run), *FIRST, *SECOND)
    assert result.exit_code == 0, result.output
    # the probe, each answer once, the uncertain one twice
    assert sorted(models(server)) == ["strong", "weak", "weak", "weak", "weak"]
    lines = {json.loads(x)["id"]: json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()}
    assert {k: v["outcome"]["label"] for k, v in lines.items()} == {
        "sure": "consistent",
        "unsure": "inconsistent",
        "bad": "inconsistent",
    }
    assert lines["unsure"]["result"]["first_outcome"]["label"] == "uncertain"
    assert lines["unsure"]["outcome"]["usage"]["completions"] == 2
    ledger = json.loads((run / "ledger.json").read_text())["stages"]
    assert ledger["holistic_score"]["completions"] == 3 and ledger["strong › holistic_direct"]["completions"] == 1
    server.requests.clear()
    again = invoke(server, "check", str(data), "-o", str(run), *FIRST, *SECOND)
    assert again.exit_code == 0, again.output
    assert server.requests == []  # every result reused: same inputs, same two judges (the probe's reply is cached)


def test_escalating_needs_a_band_and_says_so_before_any_call(server):
    result = invoke(server, "check", "-r", REFERENCE, "-a", ANSWERS["unsure"], "--strategy", "holistic_score", *SECOND)
    assert result.exit_code == 2 and "give it a band with --uncertain" in result.stderr
    assert server.requests == []


def test_a_gate_counts_an_uncertain_answer_as_not_consistent(server):
    result = invoke(server, "check", "-r", REFERENCE, "-a", ANSWERS["unsure"], *FIRST, "--fail-on-inconsistent")
    assert result.exit_code == 1
    assert "1 uncertain counted as not consistent" in result.stderr and "UNCERTAIN" in result.stderr


def test_bench_shows_what_each_band_buys_from_one_run_where_every_answer_has_both_verdicts(server, tmp_path):
    rows = [  # (answer, gold, the first judge's P(Yes), the second judge's verdict)
        ("Alpha is right.", "consistent", 0.9, "consistent"),
        ("Beta is right.", "consistent", 0.5, "consistent"),  # the first judge is wrong (0.5 < 0.58)
        ("Gamma is wrong.", "inconsistent", 0.35, "inconsistent"),
        ("Delta is wrong.", "inconsistent", 0.1, "inconsistent"),
    ]
    server.reset()
    server.enqueue(yes(0.9))  # the probe
    for answer, _, p, verdict in rows:
        server.when(answer, yes(p), times=1)
        server.when(answer, Reply.json({"verdict": verdict}))
    data = tmp_path / "labelled.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(n), "reference": REFERENCE, "answer": a, "label": g}) + "\n"
            for n, (a, g, _, _) in enumerate(rows)
        ),
        encoding="utf-8",
    )
    run = tmp_path / "run"
    methods = "lface4rag:strategy=holistic_score,explain_failures=false"
    result = invoke(server, "--json", "bench", str(data), "--methods", methods, "-o", str(run), *SECOND)
    assert result.exit_code == 0, result.output
    (tradeoff,) = json.loads(result.stdout)["bench"]["cascade_tradeoff"]
    got = {
        r["judging"]: (r["escalated"], r["balanced_accuracy"]["value"], r["calls_per_answer"]) for r in tradeoff["rows"]
    }
    assert got == {
        "first judge alone": (0.0, 0.75, 1.0),
        "cascade, band [0.45, 0.55)": (0.25, 1.0, 1.25),
        "cascade, band [0.40, 0.60)": (0.25, 1.0, 1.25),
        "cascade, band [0.30, 0.70)": (0.5, 1.0, 1.5),
        "cascade, band [0.20, 0.80)": (0.5, 1.0, 1.5),
        "second judge alone": (1.0, 1.0, 1.0),
    }
    assert "Cascade trade-off" in (run / "tables.md").read_text()

    report = tmp_path / "report.html"
    assert invoke(server, "report", str(run), "-o", str(report)).exit_code == 0
    page = report.read_text(encoding="utf-8")
    assert "Cascade trade-off" in page and "Calibration of P(faithful) against the gold labels" in page
    assert "Reliability of P(faithful)" in page and "Cascade: balanced accuracy against tokens per answer" in page


def test_evaluate_counts_uncertain_answers_apart_in_its_summary_and_gate(server, tmp_path):
    data = tmp_path / "answers.jsonl"
    data.write_text(
        "".join(json.dumps({"id": k, "reference": REFERENCE, "answer": a}) + "\n" for k, a in ANSWERS.items()),
        encoding="utf-8",
    )
    options = ["-O", "strategy=holistic_score", "-O", "explain_failures=false"]
    args = ["--json", "evaluate", str(data), "-o", str(tmp_path / "run"), "--recall", "none", *options]
    result = invoke(server, *args, "--uncertain", "0.4,0.6", "--min-consistent", "0.5")
    assert result.exit_code == 1, result.output
    (summary,) = json.loads(result.stdout)["summary"]
    assert (summary["consistent"], summary["inconsistent"], summary["uncertain"]) == (1, 1, 1)
    assert "(1 uncertain)" in result.stderr
    assert "lface4rag" in result.stderr and "(1 uncertain counted as not consistent)" in result.stderr
