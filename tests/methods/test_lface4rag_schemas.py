"""The stage schemas: reasoning before the verdict, validated segments, Chinese descriptions for Chinese prompts."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from ragfacts.methods.bilingual import in_language
from ragfacts.methods.precision import schemas
from ragfacts.models.structured import json_schema_of
from ragfacts.typology import ErrorType

ALL = [
    schemas.Decomposition,
    schemas.AtomicStatements,
    schemas.FactCheck,
    schemas.FactVerdict,
    schemas.LogicCheck,
    schemas.LogicVerdict,
    schemas.HolisticJudgement,
    schemas.HolisticVerdict,
]
CJK = re.compile(r"[\u4e00-\u9fff]")


def descriptions(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for key, value in node.items() if key != "description" for d in descriptions(value)]
    if isinstance(node, list):
        return [d for item in node for d in descriptions(item)]
    return []


@pytest.mark.parametrize("schema", ALL)
def test_every_description_has_a_chinese_version(schema: type[BaseModel]):
    chinese = json_schema_of(in_language(schema, "zh"))
    untranslated = [d for d in descriptions(chinese) if not CJK.search(d)]
    assert untranslated == []
    assert json_schema_of(in_language(schema, "en")) == json_schema_of(schema)


@pytest.mark.parametrize("schema", ALL)
def test_the_chinese_variant_keeps_the_name_and_validates_the_same(schema: type[BaseModel]):
    variant = in_language(schema, "zh")
    assert variant.__name__ == schema.__name__ and issubclass(variant, schema)
    assert in_language(schema, "zh") is variant


@pytest.mark.parametrize("schema", [schemas.FactCheck, schemas.LogicCheck, schemas.FactVerdict])
def test_the_verdict_comes_last_after_the_reasoning_and_the_error_type(schema: type[BaseModel]):
    assert list(schema.model_fields)[-2:] == ["error_type", "verdict"]


def test_the_error_type_field_lists_the_whole_typology():
    field = json_schema_of(schemas.FactCheck)["properties"]["error_type"]
    assert field["anyOf"][0]["enum"] == [t.value for t in ErrorType]
    assert all(t.value in field["description"] for t in ErrorType)


def test_a_decomposition_needs_at_least_one_non_blank_segment():
    with pytest.raises(ValidationError):
        schemas.Decomposition.model_validate_json('{"segments": []}')
    with pytest.raises(ValidationError):
        schemas.Decomposition.model_validate_json('{"segments": ["  ", ""]}')
    assert schemas.Decomposition.model_validate_json('{"segments": [" a ", ""]}').segments == ["a"]
