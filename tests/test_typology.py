"""The Face4RAG error typology: nine types in three classes, plus the "other" buckets."""

from __future__ import annotations

from collections import Counter

import pytest

from ragfacts.typology import TYPOLOGY, ErrorClass, ErrorType, parse_error_type, typology_text


def test_the_typology_has_the_papers_nine_types_in_three_classes_plus_other_buckets():
    classes = Counter(info.error_class for info in TYPOLOGY.values())
    assert classes == {
        ErrorClass.HALLUCINATION: 1,
        ErrorClass.KNOWLEDGE: 4,
        ErrorClass.LOGICAL_FALLACY: 5,  # four named fallacies + LOthe.
        ErrorClass.OTHER: 1,
    }
    assert set(TYPOLOGY) == set(ErrorType)
    assert [t.value for t in ErrorType] == [
        "Hallu.",
        "KCont.",
        "KInve.",
        "KConf.",
        "KConc.",
        "LOver.",
        "LCaus.",
        "LConf.",
        "LIncl.",
        "LOthe.",
        "Other",
    ]


@pytest.mark.parametrize("error_type", list(ErrorType))
def test_every_type_has_a_name_and_definition_in_both_languages(error_type: ErrorType):
    info = error_type.info
    assert info.error_type is error_type
    assert info.name("en") and info.definition("en") and info.name("en").isascii()
    assert info.name("zh") != info.name("en") and not info.definition("zh").isascii()


def test_the_typology_text_lists_every_code_in_the_requested_language():
    english, chinese = typology_text("en"), typology_text("zh")
    for error_type in ErrorType:
        assert f"- {error_type.value} (" in english and f"- {error_type.value} (" in chinese
    assert "causal confusion" in english and "因果混淆错误" in chinese


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("KCont.", ErrorType.CONTRADICTION),
        ("kcont", ErrorType.CONTRADICTION),
        ("Contradiction Error", ErrorType.CONTRADICTION),
        ("矛盾错误", ErrorType.CONTRADICTION),
        ("LOth.", ErrorType.OTHER_LOGICAL_FALLACY),
        ("Other Errors", ErrorType.OTHER),
        ("CAUSAL_CONFUSION", ErrorType.CAUSAL_CONFUSION),
        ("", None),
        ("typo", None),
    ],
)
def test_dataset_labels_map_to_error_types(label: str, expected: ErrorType | None):
    assert parse_error_type(label) is expected
