"""Fact generation: short, independent facts from a ground truth, deduplicated, failures recorded."""

from __future__ import annotations

import pytest

from ragfacts.methods.facts import clean_facts, generate_facts, read_fact_list
from ragfacts.models import FailureKind
from tests.scripted_server import Reply

QUESTION = "When and where will PSLV-C56 launch?"
GROUND_TRUTH = "PSLV-C56 launches on 30 July 2023 from the Satish Dhawan Space Centre."


async def test_generation_asks_for_a_list_of_strings_with_question_and_answer_delimited(make_model, scripted_server):
    await generate_facts(make_model(), QUESTION, GROUND_TRUTH)
    request = scripted_server.requests[0]
    assert request.schema["properties"]["facts"]["type"] == "array"
    assert request.schema["properties"]["facts"]["items"]["type"] == "string"
    assert f"<question>\n{QUESTION}\n</question>" in request.prompt
    assert f"<reference_answer>\n{GROUND_TRUTH}\n</reference_answer>" in request.prompt
    assert "pronouns" in request.prompt


async def test_generated_facts_lose_markers_and_duplicates(make_model, scripted_server):
    scripted_server.enqueue(
        Reply.json(
            {
                "facts": [
                    "- PSLV-C56 launches on 30 July 2023.",
                    "PSLV-C56 launches on 30 July 2023",
                    "2. PSLV-C56 launches from the Satish Dhawan Space Centre.",
                    "  ",
                ]
            }
        )
    )
    result = await generate_facts(make_model(), QUESTION, GROUND_TRUTH)
    assert result.ok
    assert result.facts == [
        "PSLV-C56 launches on 30 July 2023.",
        "PSLV-C56 launches from the Satish Dhawan Space Centre.",
    ]
    assert result.duplicates_removed == 1
    assert result.completions[0]["stage"] == "generate_facts"
    assert result.prompt_version == "generate_facts/en@1"


async def test_chinese_ground_truth_gets_the_chinese_prompt(make_model, scripted_server):
    result = await generate_facts(make_model(), "北京是哪个国家的首都？", "北京是中国的首都。")
    assert result.lang == "zh"
    assert "参考答案" in scripted_server.requests[0].prompt


async def test_an_empty_fact_list_is_a_failure(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"facts": []}))
    result = await generate_facts(make_model(), QUESTION, GROUND_TRUTH)
    assert not result.ok and result.failure.kind is FailureKind.INVALID_OUTPUT
    assert result.facts == []


async def test_a_failed_call_is_recorded_not_raised(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(400))
    result = await generate_facts(make_model(), QUESTION, GROUND_TRUTH)
    assert not result.ok and result.failure.kind is FailureKind.REQUEST
    assert result.completions[0]["failure"] is not None


async def test_a_missing_question_still_renders_the_prompt(make_model, scripted_server):
    await generate_facts(make_model(), None, GROUND_TRUTH)
    assert "<question>\n\n</question>" in scripted_server.requests[0].prompt


def test_clean_facts_keeps_numbers_that_are_not_list_markers():
    facts, _ = clean_facts(["3.5 million people live there.", "-5 degrees is the record low.", "(2) Second."])
    assert facts == ["3.5 million people live there.", "-5 degrees is the record low.", "Second."]


def test_read_fact_list_accepts_json_and_lines():
    assert read_fact_list('["A is B.", "C is D."]') == ["A is B.", "C is D."]
    assert read_fact_list("- A is B.\n\n- C is D.\n") == ["A is B.", "C is D."]
    assert read_fact_list("[1] A is B.") == ["[1] A is B."]
    with pytest.raises(ValueError, match="strings"):
        read_fact_list("[1, 2]")
