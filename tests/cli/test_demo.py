"""`ragfacts demo`: every built-in example, both answers, precision and recall, then the ledger."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.datasets.demo import load_demo_examples
from ragfacts.text import delimit
from tests.scripted_server import Reply

runner = CliRunner()


def test_demo_examples_cover_chinese_and_english_with_both_answers():
    examples = load_demo_examples()
    assert {e.lang for e in examples} == {"zh", "en"}
    assert examples and all(set(e.answers) == {"faithful", "flawed"} and e.flawed_errors for e in examples)


def test_demo_runs_every_example_through_precision_and_recall(scripted_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-demo")
    args = ["--json", "--no-cache", "--model", "openai:scripted", "--base-url", scripted_server.base_url, "demo"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["example"], r["answer_kind"]) for r in rows] == [
        (e.id, kind) for e in load_demo_examples() for kind in ("faithful", "flawed")
    ]
    assert rows and all(r["precision"]["options"]["strategy"] == "paper" for r in rows)
    assert rows and all(r["recall"]["verification"]["n_facts"] >= 1 for r in rows)
    assert "Usage ledger" in result.stderr
    # fact generation runs once per example, not once per answer
    schema_names = [
        (r.body.get("response_format") or {}).get("json_schema", {}).get("name") for r in scripted_server.requests
    ]
    assert schema_names.count("FactList") == len(load_demo_examples())


def test_demo_language_filter_and_bad_language(scripted_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-demo")
    base = ["--json", "--no-cache", "--model", "openai:scripted", "--base-url", scripted_server.base_url, "demo"]
    result = runner.invoke(app, [*base, "--lang", "en"])
    assert result.exit_code == 0 and {r["lang"] for r in json.loads(result.stdout)} == {"en"}
    assert runner.invoke(app, [*base, "--lang", "fr"]).exit_code == 2


def test_demo_without_any_model_says_how_to_get_one(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.stderr and "ragfacts[local]" in result.stderr


def test_demo_report_comes_before_the_ledger(scripted_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-demo")
    args = ["--no-cache", "--model", "openai:scripted", "--base-url", scripted_server.base_url, "demo", "--lang", "en"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert 0 <= result.stderr.index("ragfacts demo") < result.stderr.index("Usage ledger")


def test_demo_shows_each_example_whole_the_planted_errors_and_how_many_flaws_were_caught(scripted_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-demo")
    flawed = next(e for e in load_demo_examples() if e.lang == "en").answers["flawed"]
    first_sentence = flawed.split(". ")[0] + "."
    scripted_server.when(delimit("answer", flawed), Reply.json({"segments": [first_sentence]}), times=1)
    inconsistent = Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "KCont."})
    scripted_server.when(delimit("segment", first_sentence), inconsistent)
    args = ["--no-cache", "--model", "openai:scripted", "--base-url", scripted_server.base_url, "demo", "--lang", "en"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    example = next(e for e in load_demo_examples() if e.lang == "en")
    for text in (example.question, example.reference, example.answers["faithful"], flawed):
        assert text in result.stderr
    assert "(planted: KCont., LOver.)" in result.stderr
    assert f"flagged [KCont.]: {first_sentence}\n" in result.stderr  # the segment whole
    assert "caught 1 of 1 flawed answers" in result.stderr
    assert "KCont. contradiction" in result.stderr and "LOver. overgeneralization" in result.stderr
