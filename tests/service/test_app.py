"""The service's endpoints: the same results as the command line, gates, per-request methods, clear 422s."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from typer.testing import CliRunner

from ragfacts.cli import app as cli_app
from ragfacts.text import delimit
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition, names
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()
VOLATILE = {"latency_s", "model_s", "waited_s", "seconds", "usage", "finished"}


def stable(value: Any) -> Any:
    """`value` without what differs between two runs of the same work (times and their sums)."""
    if isinstance(value, dict):
        return {key: stable(v) for key, v in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


async def cli_json(server: ScriptedServer, *args: str) -> dict[str, Any]:
    """What `ragfacts --json ...` prints, run on a thread (it runs its own event loop)."""
    options = ["--model", "openai:scripted", "--base-url", server.base_url, "--no-cache", "--json", *args]
    result = await asyncio.to_thread(runner.invoke, cli_app, options)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def decompose_each_answer_whole(server: ScriptedServer, answers: list[str]) -> None:
    """The decomposition of each answer (its first call, the only one that shows it as <answer>) is the answer."""
    for answer in answers:
        server.when(delimit("answer", answer), decomposition(answer), times=1)


def holistic_reply(verdict: str, *problems: str) -> Reply:
    return Reply.json({"problems": list(problems), "verdict": verdict})


async def test_check_answers_with_the_result_that_check_json_prints(service_settings, open_client, scripted_server):
    scripted_server.enqueue(decomposition(SEG1))
    printed = await cli_json(scripted_server, "check", "-r", REFERENCE, "-a", SEG1, "-q", "Where?")
    scripted_server.reset()
    scripted_server.enqueue(decomposition(SEG1))
    client = await open_client(service_settings())
    response = await client.post("/check", json={"reference": REFERENCE, "answer": SEG1, "question": "Where?"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert stable(body["result"]) == stable(printed)
    assert body["method"] == "lface4rag" and body["result"]["label"] == "consistent"
    assert body["outcome"]["usage"]["calls"] == len(scripted_server.requests) == 3
    assert body["gate"] == {"passed": None, "checks": []}  # no threshold given: nothing to pass or fail


async def test_recall_answers_with_the_result_that_recall_json_prints(service_settings, open_client, scripted_server):
    verdicts = Reply.json({"fact_0": "True", "fact_1": "False"})
    scripted_server.enqueue(verdicts)
    printed = await cli_json(
        scripted_server, "recall", "-a", "Paris is in France.", "-f", '["Paris is in France.", "Lyon is too."]'
    )
    scripted_server.enqueue(verdicts)
    client = await open_client(service_settings())
    body = {"answer": "Paris is in France.", "facts": ["Paris is in France.", "Lyon is too."], "id": "q-7"}
    response = await client.post("/recall", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert stable(data["result"]) == stable(printed) and data["result"]["recall"] == 0.5
    assert data["id"] == "q-7" and data["method"] == "faaf"


async def test_evaluate_answers_with_the_summary_and_rows_that_evaluate_json_prints(
    service_settings, open_client, scripted_server, tmp_path: Path
):
    rows = [
        {
            "user_input": f"Question {n}?",
            "response": f"Response {n}.",
            "retrieved_contexts": [f"context {n} one", f"context {n} two"],
            "reference": f"Ground truth {n}.",
        }
        for n in range(3)
    ]
    data = tmp_path / "ragas.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    decompose_each_answer_whole(scripted_server, [row["response"] for row in rows])
    printed = await cli_json(scripted_server, "evaluate", str(data), "-o", str(tmp_path / "run"))
    calls_of_cli = len(scripted_server.requests)
    scripted_server.reset()
    decompose_each_answer_whole(scripted_server, [row["response"] for row in rows])
    client = await open_client(service_settings())
    response = await client.post("/evaluate", json={"rows": rows, "min_faithfulness": 0.9, "min_recall": 0.9})
    assert response.status_code == 200, response.text
    document = response.json()
    assert stable(document["rows"]) == stable(printed["rows"]) and len(document["rows"]) == 3
    assert stable(document["summary"]) == stable(printed["summary"])
    assert document["report"]["ran"] == printed["report"]["ran"] == 6
    assert document["report"]["usage"]["calls"] == len(scripted_server.requests) == calls_of_cli
    assert "run" not in document and "results_file" not in document  # nothing of the server's disk
    assert document["gate"]["passed"] is True, document["gate"]
    assert [(c["name"], c["method"], c["value"]) for c in document["gate"]["checks"]] == [
        ("min_faithfulness", "lface4rag", 1.0),
        ("min_recall", "faaf", 1.0),
    ]


async def test_a_threshold_the_answer_misses_fails_the_gate_with_http_200(
    service_settings, open_client, scripted_server
):
    scripted_server.enqueue(holistic_reply("inconsistent", "The answer says north; the reference says south."))
    client = await open_client(service_settings())
    body = {"reference": "It flows south.", "answer": "It flows north.", "method": "holistic", "min_faithfulness": 0.8}
    response = await client.post("/check", json=body)
    assert response.status_code == 200
    gate = response.json()["gate"]
    assert gate["passed"] is False
    (check,) = gate["checks"]
    assert (check["name"], check["threshold"], check["value"], check["passed"]) == ("min_faithfulness", 0.8, 0.0, False)
    assert check["message"] == "gate min_faithfulness 0.8 failed: holistic measured 0.000"


async def test_an_answer_that_meets_every_threshold_passes(service_settings, open_client, scripted_server):
    scripted_server.enqueue(holistic_reply("consistent"))
    client = await open_client(service_settings())
    body = {"reference": "R.", "answer": "A.", "method": "holistic", "min_consistent": 1, "min_faithfulness": 1}
    gate = (await client.post("/check", json=body)).json()["gate"]
    assert gate["passed"] is True and [c["passed"] for c in gate["checks"]] == [True, True]


async def test_an_unscored_answer_never_passes(service_settings, open_client, scripted_server):
    scripted_server.enqueue(Reply.malformed(), Reply.malformed(), Reply.malformed())
    client = await open_client(service_settings())
    body = {"reference": "R.", "answer": "A.", "method": "holistic", "min_consistent": 1}
    data = (await client.post("/check", json=body)).json()
    assert data["result"]["label"] == "unscored" and data["outcome"]["failures"] == 1
    assert data["outcome"]["complete"] is False and data["gate"]["passed"] is False


async def test_the_method_and_its_options_are_chosen_per_request(service_settings, open_client, scripted_server):
    client = await open_client(service_settings())
    scripted_server.enqueue(decomposition(SEG1))
    body = {"reference": REFERENCE, "answer": SEG1, "method": "lface4rag:strategy=paper", "options": {"cot": False}}
    data = (await client.post("/check", json=body)).json()
    assert data["method"] == "lface4rag:chain_of_thought=false,strategy=paper"
    assert data["result"]["options"]["chain_of_thought"] is False
    sent = names(scripted_server.requests)  # a segment's fact and logic stages run concurrently: either order
    assert sent[0] == "Decomposition" and sorted(sent[1:]) == ["FactVerdict", "LogicVerdict"]
    scripted_server.reset()
    scripted_server.enqueue(holistic_reply("consistent"))
    data = (await client.post("/check", json={"reference": "R.", "answer": "A.", "method": "holistic"})).json()
    assert data["method"] == "holistic" and data["result"]["judgement"]["verdict"] == "consistent"
    assert names(scripted_server.requests) == ["HolisticJudgement"]


async def test_requests_that_name_no_method_get_the_servers_default(service_settings, open_client, scripted_server):
    client = await open_client(service_settings(precision="holistic", recall="faaf:mode=tf"))
    scripted_server.enqueue(holistic_reply("consistent"), Reply.json({"fact_0": "True"}))
    assert (await client.post("/check", json={"reference": "R.", "answer": "A."})).json()["method"] == "holistic"
    data = (await client.post("/recall", json={"answer": "A.", "facts": ["A."]})).json()
    assert data["method"] == "faaf:mode=tf" and data["result"]["verification"]["config"]["mode"] == "tf"


async def test_concurrent_requests_each_get_their_own_answer(service_settings, open_client, scripted_server):
    count = 24
    for n in range(count):  # each answer's reply names it; delays make the requests overlap at the model
        reply = holistic_reply("inconsistent", f"problem of case {n}") if n % 2 else holistic_reply("consistent")
        scripted_server.when(f"case-{n:03d}-end", reply.delayed(0.05 * (n % 4)))
    client = await open_client(service_settings(concurrency=6))

    async def ask(n: int) -> dict[str, Any]:
        body = {"reference": "R.", "answer": f"The answer of case-{n:03d}-end.", "method": "holistic", "id": f"{n}"}
        response = await client.post("/check", json=body)
        assert response.status_code == 200
        return response.json()

    answers = await asyncio.gather(*(ask(n) for n in range(count)))
    for n, data in enumerate(answers):
        assert data["id"] == str(n)
        assert data["result"]["label"] == ("inconsistent" if n % 2 else "consistent")
        assert data["result"]["judgement"]["problems"] == ([f"problem of case {n}"] if n % 2 else [])
    assert scripted_server.max_in_flight > 1 and len(scripted_server.requests) == count


async def test_recall_generates_facts_from_a_ground_truth(service_settings, open_client, scripted_server):
    scripted_server.enqueue(Reply.json({"facts": ["Paris is the capital.", "It is in France."]}))
    scripted_server.enqueue(Reply.json({"fact_0": "True", "fact_1": "True"}))
    client = await open_client(service_settings())
    body = {
        "answer": "Paris, in France, is the capital.",
        "ground_truth": "Paris is the capital of France.",
        "min_recall": 1,
    }
    data = (await client.post("/recall", json=body)).json()
    assert data["result"]["facts"] == ["Paris is the capital.", "It is in France."]
    assert data["result"]["recall"] == 1.0 and data["gate"]["passed"] is True


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/check", {"reference": "R."}, "answer: Field required"),
        ("/check", {"reference": "R.", "answer": "A.", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ("/check", {"reference": "R.", "answer": "   "}, "answer: answer is empty"),
        (
            "/check",
            {"reference": "R.", "answer": "A.", "min_faithfulness": 1.5},
            "min_faithfulness: Input should be less",
        ),
        ("/check", {"reference": "R.", "answer": "A.", "method": "nope"}, "unknown method 'nope'; methods: "),
        ("/check", {"reference": "R.", "answer": "A.", "method": "faaf"}, "faaf is a recall method"),
        ("/check", {"reference": "R.", "answer": "A.", "options": {"strategy": "fast"}}, "lface4rag: strategy"),
        (
            "/recall",
            {"answer": "A.", "facts": ["F."], "ground_truth": "G."},
            "give exactly one of facts or ground_truth",
        ),
        ("/recall", {"answer": "A.", "facts": []}, "facts must be a non-empty list"),
        ("/recall", {"answer": "A.", "facts": ["F."], "min_consistent": 1}, "min_consistent: Extra inputs"),
        ("/evaluate", {"rows": []}, "rows: List should have at least 1 item"),
        (
            "/evaluate",
            {"rows": [{"answer": "A.", "reference": "R."}], "precision": None, "recall": "none"},
            "both none",
        ),
        (
            "/evaluate",
            {"rows": [{"answer": "A.", "reference": "R."}], "recall": None, "min_recall": 0.5},
            "min_recall needs a recall method",
        ),
        ("/evaluate", {"rows": [{"answer": "A.", "question": "Q?"}]}, "cannot be judged"),
        ("/evaluate", {"rows": [{"reference": "R."}]}, "answer"),
    ],
)
async def test_an_invalid_request_is_answered_422_naming_the_problem_without_calling_the_model(
    service_settings, open_client, scripted_server, path, body, says
):
    client = await open_client(service_settings())
    response = await client.post(path, json=body)
    assert response.status_code == 422, response.text
    data = response.json()
    assert data["error"] == "invalid_request" and says in data["message"], data["message"]
    assert scripted_server.requests == []


async def test_a_body_that_is_not_json_is_answered_422(service_settings, open_client):
    client = await open_client(service_settings())
    response = await client.post("/check", content=b"{not json", headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and response.json()["error"] == "invalid_request"


async def test_health_names_the_model_and_the_defaults(service_settings, open_client):
    client = await open_client(service_settings(max_concurrent=5))
    data = (await client.get("/health")).json()
    assert data["status"] == "ok" and data["model"] == "openai:scripted"
    assert (data["precision"], data["recall"], data["judging"], data["max_concurrent"]) == ("lface4rag", "faaf", 0, 5)


async def test_an_unknown_path_is_a_json_404_and_every_answer_carries_a_request_id(service_settings, open_client):
    client = await open_client(service_settings())
    response = await client.get("/nowhere")
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert len(response.headers["X-Request-ID"]) == 32
    echoed = await client.get("/health", headers={"X-Request-ID": "ci-run-42.7"})
    assert echoed.headers["X-Request-ID"] == "ci-run-42.7"
    refused = await client.get("/health", headers={"X-Request-ID": "two words\tand a tab"})
    assert refused.headers["X-Request-ID"] != "two words\tand a tab"


async def test_the_openapi_document_describes_the_endpoints(service_settings, open_client):
    client = await open_client(service_settings())
    document = (await client.get("/openapi.json")).json()
    assert {"/check", "/recall", "/evaluate", "/health", "/metrics"} <= set(document["paths"])
    check = document["paths"]["/check"]["post"]
    assert {"200", "401", "413", "422", "429", "504"} <= set(check["responses"])
    assert "min_faithfulness" in document["components"]["schemas"]["CheckRequest"]["properties"]
    assert (await client.get("/docs")).status_code == 200


async def test_a_method_the_servers_model_cannot_run_is_answered_422(service_settings, open_client, scripted_server):
    client = await open_client(service_settings())
    body = {"reference": "R.", "answer": "A.", "method": "lface4rag:strategy=sentence_scores"}
    response = await client.post("/check", json=body)  # the scripted model gives no log-probabilities
    assert response.status_code == 422
    data = response.json()
    assert data["error"] == "unsupported" and "returns no log-probabilities" in data["message"]
