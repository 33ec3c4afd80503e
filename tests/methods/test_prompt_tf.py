"""The Prompt(T/F) baseline: one plain call per fact, verdicts read as the paper reads them."""

from __future__ import annotations

import pytest

from ragfacts.methods.prompt_tf import read_verdict, verify_facts_by_prompt
from ragfacts.methods.recall import recall
from tests.scripted_server import Reply

FACTS = [
    "Paris is the capital of France.",
    "The Seine flows through Paris.",
    "Paris hosted the 2024 Summer Olympics.",
]
PASSAGE = "Paris, the capital of France, lies on the Seine."


async def test_prompt_baseline_makes_one_plain_call_per_fact(make_model, scripted_server):
    result = await verify_facts_by_prompt(make_model(), FACTS, PASSAGE)
    assert len(scripted_server.requests) == 3
    for request in scripted_server.requests:
        assert request.schema is None
        assert "response_format" not in request.body and "tools" not in request.body
        assert sum(fact in request.prompt for fact in FACTS) == 1
        assert "True or False" in request.prompt and PASSAGE in request.prompt
    assert result.usage.calls == 3 and result.method == "prompt-tf"


async def test_each_fact_gets_the_verdict_of_its_own_reply(make_model, scripted_server):
    scripted_server.when("capital of France.\n", Reply.text("True."))
    scripted_server.when("The Seine", Reply.text("False, the passage says otherwise."))
    scripted_server.when("Olympics", Reply.text("I cannot tell from this passage."))
    result = await verify_facts_by_prompt(make_model(), FACTS, PASSAGE)
    assert [v.verdict for v in result.verdicts] == [True, False, None]
    assert result.verdicts[2].unscored == "no_verdict"
    assert result.verdicts[2].raw == "I cannot tell from this passage."
    assert result.n_no_verdict == 1 and result.recall == pytest.approx(1 / 3)


async def test_faithful_parsing_reads_not_true_as_true_and_corrected_does_not(make_model, scripted_server):
    scripted_server.when("claim", Reply.text("The claim is not true."))
    faithful = await verify_facts_by_prompt(make_model(), FACTS[:1], PASSAGE, parsing="faithful")
    corrected = await verify_facts_by_prompt(make_model(), FACTS[:1], PASSAGE, parsing="corrected")
    assert faithful.verdicts[0].verdict is True
    assert corrected.verdicts[0].verdict is False
    assert corrected.config == {"parsing": "corrected"}


async def test_a_failed_call_is_unscored_and_counted(make_model, scripted_server):
    scripted_server.when("The Seine flows", Reply.error(400))
    scripted_server.when("claim", Reply.text("True"))
    result = await verify_facts_by_prompt(make_model(), FACTS, PASSAGE)
    assert [v.unscored for v in result.verdicts] == [None, "failed", None]
    assert result.n_failed == 1 and len(result.failures) == 1


async def test_recall_can_use_the_prompt_baseline(make_model, scripted_server):
    scripted_server.when("claim", Reply.text("True"))
    result = await recall(make_model(), None, None, PASSAGE, facts=FACTS, method="prompt-tf")
    assert len(scripted_server.requests) == 3 and result.recall == 1.0


async def test_chinese_text_gets_the_chinese_prompt(make_model, scripted_server):
    await verify_facts_by_prompt(make_model(), ["北京是中国的首都。"], "北京是中华人民共和国的首都。")
    assert "根据上面的文段" in scripted_server.requests[0].prompt


@pytest.mark.parametrize(
    ("reply", "faithful", "corrected"),
    [
        ("True", True, True),
        ("False.", False, False),
        ("The claim is false.", False, False),
        ("The claim is not true.", True, False),
        ("That is untrue.", True, False),
        ("It isn't true that Paris hosted them.", True, False),
        ("True or False? False.", True, False),
        ("False. Nothing in the passage makes it true.", True, False),
        ("The claim is not false.", False, True),
        ("I cannot tell.", None, None),
        ("", None, None),
        ("该陈述为 True。", True, True),
        ("该陈述不正确。", None, False),
        ("正确", None, True),
    ],
)
def test_read_verdict(reply: str, faithful: bool | None, corrected: bool | None):
    assert read_verdict(reply, "faithful") is faithful
    assert read_verdict(reply, "corrected") is corrected


def test_read_verdict_rejects_an_unknown_parsing():
    with pytest.raises(ValueError, match="parsing"):
        read_verdict("True", "lenient")  # type: ignore[arg-type]
