"""English names at the start of a sentence, a list item, a heading or a label, where a capital proves little."""

import pytest

from ragfacts.evidence import find_unsupported


def kinds(answer: str, reference: str) -> list[tuple[str, str]]:
    return [(m.kind, m.text) for m in find_unsupported(answer, reference, "en")]


@pytest.mark.parametrize(
    "answer",
    [
        "Replace NAME with the label of your bucket.",
        "- Supports CSV uploads from the console.",
        "2. **Grid Panel**: Enables YAML editing of the layout.",
        "Review Orbit Console's settings page first.",
    ],
)
def test_an_instruction_verb_opening_a_sentence_or_item_is_no_part_of_a_name(answer: str):
    reference = "The Orbit Console has a settings page, a Grid Panel for YAML and CSV uploads; NAME is the label."
    assert find_unsupported(answer, reference, "en") == []


def test_a_name_after_an_instruction_verb_is_still_checked():
    assert kinds("Replace NAME with your Quasar Key.", "Use NAME with your key.") == [("entity", "Quasar Key")]
    assert kinds("Marie Curie won the prize.", "Pierre Curie won the prize.") == [("entity", "Marie Curie")]


@pytest.mark.parametrize(
    "answer",
    [
        "**To Grow or Shrink Volumes in Orbit:**\n1. Open the panel.",
        "### Main Parts of the Orbit Setup\n1. Open the panel.",
        "1. **Tune Buffers and Queues**: open the panel.",
    ],
)
def test_words_of_a_heading_or_bold_label_are_no_names(answer: str):
    assert find_unsupported(answer, "Open the panel of Orbit.", "en") == []


def test_a_capital_in_a_heading_is_no_evidence_that_a_sentence_opener_is_a_name():
    answer = "**Wait for the Resize:**\n1. Open the panel.\n\nResizes can take a day."
    assert find_unsupported(answer, "Open the panel; changes can take a day.", "en") == []
    # capitalised mid-sentence in running text, it still is
    assert kinds("We asked Resizes about it. Resizes is a firm.", "We asked the firm.") == [
        ("entity", "Resizes"),
        ("entity", "Resizes"),
    ]


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("Turn on Streamloader for the job.", "Turn on Stream Loader for the job."),
        ("Set up Quiet Link first.", "Set up QuietLink first."),
    ],
)
def test_a_name_closed_up_or_split_is_the_same_name(answer: str, reference: str):
    assert find_unsupported(answer, reference, "en") == []
