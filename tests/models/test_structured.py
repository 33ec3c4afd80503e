"""Schema handling: JSON extraction, strict schemas, rendering the schema into prompts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ragfacts.models.structured import extract_json, json_schema_of, render_schema, strict_schema


class Point(BaseModel):
    text: str = Field(description="the point")


class Segment(BaseModel):
    points: list[Point] = Field(description="informational points")
    verdict: Literal["True", "False"] = Field(title="The sky is blue", description="Is the fact stated?")


def test_extract_json_prefers_a_fenced_block():
    assert extract_json('noise ```json\n{"a": 1}\n``` tail {"b": 2}') == '{"a": 1}'


def test_extract_json_takes_the_outermost_object():
    assert extract_json('Here it is: {"a": {"b": 1}} thanks') == '{"a": {"b": 1}}'


def test_refs_are_inlined():
    schema = json_schema_of(Segment)
    assert "$defs" not in schema and "$ref" not in str(schema)
    assert schema["properties"]["points"]["items"]["properties"]["text"]["type"] == "string"


def test_strict_schema_closes_every_object():
    strict = strict_schema(json_schema_of(Segment))
    assert strict["additionalProperties"] is False
    assert strict["properties"]["points"]["items"]["additionalProperties"] is False
    assert strict["required"] == ["points", "verdict"]


def test_rendered_schema_shows_titles_descriptions_and_values():
    text = render_schema(json_schema_of(Segment))
    assert '"verdict" (The sky is blue): one of "True" | "False" — Is the fact stated?' in text
    assert "each item has:" in text and '"text"' in text


def test_rendered_schema_in_chinese():
    assert render_schema(json_schema_of(Segment), "zh").startswith("请只输出")


async def test_a_bounded_schema_caps_the_reply_tokens_of_its_stage_and_a_free_text_one_does_not(
    make_model, scripted_server
):
    from ragfacts.models import Message
    from ragfacts.models.structured import reply_token_cap
    from tests.scripted_server import Reply

    class Verdict(BaseModel):
        verdict: Literal["consistent", "inconsistent"]
        sure: bool

    class Reasoned(BaseModel):
        reasoning: str
        verdict: Literal["consistent", "inconsistent"]

    class Listed(BaseModel):
        items: list[str] = Field(max_length=3)  # items of unbounded length: no cap

    # the longest valid reply: {"verdict": "inconsistent", "sure": false} -> 2 + (9+2+14+2) + (6+2+5+2) = 44 characters
    assert reply_token_cap(json_schema_of(Verdict)) == 2 * 44 + 32
    assert reply_token_cap(json_schema_of(Reasoned)) is None and reply_token_cap(json_schema_of(Listed)) is None
    scripted_server.enqueue(
        Reply.json({"verdict": "consistent", "sure": True}), Reply.json({"reasoning": "r", "verdict": "consistent"})
    )
    model = make_model()
    assert (await model.complete([Message(role="user", content="q")], Verdict)).ok
    assert (await model.complete([Message(role="user", content="q")], Reasoned)).ok
    sent = [
        request.body.get("max_tokens", request.body.get("max_completion_tokens"))
        for request in scripted_server.requests
    ]
    assert sent == [120, 1024]
