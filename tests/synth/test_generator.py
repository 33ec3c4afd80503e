"""The synthesiser's call pattern on the scripted OpenAI-compatible server: what is asked, checked, kept and why."""

from __future__ import annotations

import json

import pytest

from ragfacts.items import Item
from ragfacts.methods.base import MethodError, create_method, registered_methods
from ragfacts.synth import Synthesiser, SynthOptions
from tests.scripted_server import Reply, ScriptedServer

REFERENCE = "The Nile flows north through Egypt and ends in the Mediterranean Sea."
ANSWER = "The Nile flows north and ends in the Mediterranean Sea."
ITEM = Item(id="nile", question="Where does the Nile end?", reference=REFERENCE, answer=ANSWER)
REWORDINGS = ("The Nile runs northward to the Mediterranean Sea.", "Running north, the Nile reaches the Mediterranean.")


def edit(server: ScriptedServer, type_name: str, original: str, replacement: str) -> None:
    """The injection prompt of `type_name` replies with this edit."""
    reply = {"thinking": "t", "original": original, "replacement": replacement}
    server.when(f"The error type, {type_name}:", Reply.json(reply))


def check_edit(server: ScriptedServer, replacement: str, error_type: str | None, only_error: bool = True) -> None:
    """The check of the edit that wrote `replacement` replies with this verdict."""
    verdict = {"reasoning": "r", "error_type": error_type, "only_error": only_error}
    server.when(f"<segment>\n{replacement}\n</segment>", Reply.json(verdict))


def rewordings(server: ScriptedServer, *texts: str, same_meaning: bool = True) -> None:
    for text in texts:
        server.when("Reword the answer below", Reply.json({"paraphrase": text}), times=1)
    verdict = {"reasoning": "r", "same_meaning": same_meaning, "supported": True}
    server.when("You check a rewording", Reply.json(verdict))


def stages(model) -> dict[str, int]:
    return {name: usage.calls for name, usage in model.ledger.stages.items()}


def synthesiser(**options) -> Synthesiser:
    return Synthesiser(SynthOptions(**options))


async def test_a_row_costs_one_call_per_type_and_positive_and_one_check_for_each(scripted_server, make_model):
    edit(scripted_server, "contradiction", "north", "south")
    check_edit(scripted_server, "south", "KCont.")
    edit(scripted_server, "hallucination", "Sea.", "Sea, 6,650 km from its source.")
    check_edit(scripted_server, "Sea, 6,650 km from its source.", "Hallu.")
    rewordings(scripted_server, *REWORDINGS)
    model = make_model()
    generator = synthesiser(types="KCont,Hallu", positives=2)

    result = await generator.evaluate(ITEM, model)

    assert stages(model) == {
        "synth_inject_contradiction": 1,
        "synth_inject_hallucination": 1,
        "synth_check_edit": 2,
        "synth_paraphrase": 2,
        "synth_check_paraphrase": 2,
    }
    assert result.usage.calls == len(scripted_server.requests) == 8
    assert generator.estimate(ITEM, model).calls == 8
    assert [(c.kind, c.error_type, c.status) for c in result.candidates] == [
        ("original", None, "kept"),
        ("paraphrase", None, "kept"),
        ("paraphrase", None, "kept"),
        ("injection", "KCont.", "kept"),
        ("injection", "Hallu.", "kept"),
    ]
    contradiction = result.candidates[3]
    assert contradiction.answer == "The Nile flows south and ends in the Mediterranean Sea."
    assert contradiction.span.model_dump() == {"original": "north", "replacement": "south", "start": 15}
    assert contradiction.made_by.prompt_version == "synth_inject_contradiction/en@1"
    assert contradiction.checked_by.prompt_version == "synth_check_edit/en@1"
    assert contradiction.check == {"reasoning": "r", "error_type": "KCont.", "only_error": True}
    outcome = result.outcome()
    assert outcome.complete and outcome.failures == 0 and outcome.units == 5


async def test_the_second_rewording_is_shown_the_first_so_that_it_differs(scripted_server, make_model):
    rewordings(scripted_server, *REWORDINGS)
    await synthesiser(types="KCont", positives=2).evaluate(ITEM, make_model())
    asked = [r.prompt for r in scripted_server.requests if "Reword the answer below" in r.prompt]
    assert "<statements>\n\n</statements>" in asked[0]
    assert f"<statements>\n{REWORDINGS[0]}\n</statements>" in asked[1]


async def test_every_call_of_a_row_starts_with_the_same_reference_and_question(scripted_server, make_model):
    # The layout a prefix cache reuses: the local backend evaluates only what follows.
    rewordings(scripted_server, REWORDINGS[0])
    await synthesiser(types="KCont,LCaus").evaluate(ITEM, make_model())
    prefixes = {r.prompt.split("</question>")[0] for r in scripted_server.requests}
    assert len(prefixes) == 1 and REFERENCE in prefixes.pop()


async def test_the_check_is_not_told_the_intended_type_and_rejects_an_edit_it_types_otherwise(
    scripted_server, make_model
):
    edit(scripted_server, "contradiction", "north", "south")
    edit(scripted_server, "conceptual substitution", "north", "south")
    check_edit(scripted_server, "south", "KCont.")
    result = await synthesiser(types="KCont,KConc", positives=0).evaluate(ITEM, make_model())
    checks = [json.dumps(r.body["messages"]) for r in scripted_server.requests if "<segment>" in r.prompt]
    assert len(checks) == 2 and checks[0] == checks[1]
    contradiction, substitution = result.candidates[1:]
    assert contradiction.status == "kept"
    assert substitution.status == "rejected"
    assert substitution.reason == "the verifier called the error KCont., not KConc."


@pytest.mark.parametrize(
    ("error_type", "only_error", "reason"),
    [
        (None, True, "the verifier found the edited answer still faithful"),
        ("KCont.", False, "the verifier found more than this one error"),
    ],
)
async def test_an_edit_the_check_finds_faithful_or_compound_is_rejected_with_the_reason(
    scripted_server, make_model, error_type, only_error, reason
):
    edit(scripted_server, "contradiction", "north", "south")
    check_edit(scripted_server, "south", error_type, only_error)
    result = await synthesiser(types="KCont", positives=0).evaluate(ITEM, make_model())
    assert (result.candidates[1].status, result.candidates[1].reason) == ("rejected", reason)
    assert result.candidates[1].answer is not None  # kept in the log, for the record


async def test_an_edit_whose_span_is_not_in_the_answer_is_not_applied_and_not_checked(scripted_server, make_model):
    edit(scripted_server, "contradiction", "flows east", "flows west")
    model = make_model()
    result = await synthesiser(types="KCont", positives=0).evaluate(ITEM, model)
    injection = result.candidates[1]
    assert injection.status == "not_applied" and "not in the answer: 'flows east'" in injection.reason
    assert injection.answer is None and "synth_check_edit" not in stages(model)


async def test_a_rewording_that_changes_the_meaning_is_rejected(scripted_server, make_model):
    rewordings(scripted_server, REWORDINGS[0], same_meaning=False)
    result = await synthesiser(types="KCont", positives=1).evaluate(ITEM, make_model())
    paraphrase = result.candidates[1]
    assert (paraphrase.status, paraphrase.reason) == (
        "rejected",
        "the verifier found the rewording changes the meaning",
    )
    assert paraphrase.span.original == ANSWER and paraphrase.span.replacement == REWORDINGS[0]


async def test_a_row_without_an_answer_gets_one_written_and_checked_before_any_edit(scripted_server, make_model):
    written = "The Nile ends in the Mediterranean Sea."
    scripted_server.when("You write a faithful answer", Reply.json({"answer": written}))
    scripted_server.when("You check an answer written", Reply.json({"reasoning": "none", "supported": True}))
    edit(scripted_server, "contradiction", "Mediterranean", "Red")
    check_edit(scripted_server, "Red", "KCont.")
    item = ITEM.model_copy(update={"answer": ""})
    model = make_model()
    result = await synthesiser(types="KCont", positives=0).evaluate(item, model)
    assert [(c.kind, c.status) for c in result.candidates] == [("written", "kept"), ("injection", "kept")]
    assert result.candidates[0].answer == written
    assert result.candidates[1].answer == "The Nile ends in the Red Sea."
    assert stages(model) == {
        "synth_answer": 1,
        "synth_check_answer": 1,
        "synth_inject_contradiction": 1,
        "synth_check_edit": 1,
    }


async def test_a_written_answer_the_check_does_not_support_ends_the_row(scripted_server, make_model):
    scripted_server.when("You check an answer written", Reply.json({"reasoning": "made up", "supported": False}))
    model = make_model()
    result = await synthesiser().evaluate(ITEM.model_copy(update={"answer": ""}), model)
    assert [(c.kind, c.status) for c in result.candidates] == [("written", "rejected")]
    assert len(scripted_server.requests) == 2


async def test_a_check_that_never_validates_is_a_counted_failure_and_the_row_is_retried(scripted_server, make_model):
    edit(scripted_server, "contradiction", "north", "south")
    scripted_server.when("<segment>\nsouth\n</segment>", Reply.malformed())
    result = await synthesiser(types="KCont", positives=0).evaluate(ITEM, make_model())
    injection = result.candidates[1]
    assert injection.status == "failed" and injection.reason.startswith("invalid_output")
    assert injection.checked_by.failure is not None and injection.checked_by.usage.reasks == 2
    assert result.outcome().failures == 1 and not result.outcome().complete


async def test_without_verify_every_applied_edit_is_kept_and_nothing_is_checked(scripted_server, make_model):
    edit(scripted_server, "contradiction", "north", "south")
    rewordings(scripted_server, REWORDINGS[0])
    model = make_model()
    result = await synthesiser(types="KCont", verify=False).evaluate(ITEM, model)
    assert [(c.kind, c.status, c.reason) for c in result.candidates[1:]] == [
        ("paraphrase", "kept", "not verified"),
        ("injection", "kept", "not verified"),
    ]
    assert stages(model) == {"synth_paraphrase": 1, "synth_inject_contradiction": 1}


async def test_a_chinese_row_is_asked_in_chinese_with_chinese_field_descriptions(scripted_server, make_model):
    item = Item(id="zh", reference="尼罗河向北流，注入地中海。", answer="尼罗河向北流入地中海。")
    scripted_server.when(
        "使回答恰好带上一个“矛盾错误”", Reply.json({"thinking": "t", "original": "向北", "replacement": "向南"})
    )
    check_edit(scripted_server, "向南", "KCont.")
    result = await synthesiser(types="KCont", positives=0).evaluate(item, make_model())
    assert result.lang == "zh" and result.candidates[1].status == "kept"
    assert result.candidates[1].made_by.prompt_version == "synth_inject_contradiction/zh@1"
    inject = scripted_server.requests[0]
    assert "你在为事实核查制作测试材料" in inject.prompt
    assert "逐字照抄" in inject.schema["properties"]["original"]["description"]


def test_the_synthesiser_is_driven_by_the_runner_but_is_not_a_method_anyone_can_name():
    assert "synth" not in registered_methods()
    with pytest.raises(MethodError, match="unknown method 'synth'"):
        create_method("synth")
