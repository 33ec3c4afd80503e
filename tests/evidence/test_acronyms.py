"""Abbreviations and their long forms: a name is supported by the other form of itself that the reference states."""

import pytest

from ragfacts.evidence import find_unsupported
from ragfacts.evidence._acronyms import acronym_letters, defined_pairs, stands_for


def kinds(answer: str, reference: str) -> list[tuple[str, str]]:
    return [(m.kind, m.text) for m in find_unsupported(answer, reference, "en")]


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        # the long form in the answer, its abbreviation (an inner letter included) in the reference
        ("Logs are kept in the Harbor Object Vault for a week.", "Logs are kept in HOBV for a week."),
        ("Run a Copy Rows As Insert statement to fill it.", "Fill tables with CRAIs."),
        # the abbreviation in the answer (an inner letter included, or a plural), its long form in the reference
        ("Files live in MXFS.", "Files live in the Maxwell File System."),
        ("Set up RTQs for the team.", "Each team gets its own Review Task Queue."),
    ],
)
def test_an_abbreviation_supports_its_long_form_and_back(answer: str, reference: str):
    assert find_unsupported(answer, reference, "en") == []


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        # "ABBR (Long Name)": the reference states the abbreviation only
        ("The error reads: expected MXFS (Maxwell File Store).", "The error names MXFS as expected."),
        # "long name (ABBR)": the reference states the long form only, in lower case
        ("Chronic scale fatigue (CSF) slows the fish.", "Some fish show chronic scale fatigue in winter."),
        # a code beside its full name, the code not its bare initials
        ("Flights land at Tarbet Holm (THM).", "Flights land at THM twice a day."),
    ],
)
def test_an_answer_that_pairs_an_abbreviation_with_its_long_form_is_supported_by_either(answer: str, reference: str):
    assert find_unsupported(answer, reference, "en") == []


def test_a_new_name_or_abbreviation_is_still_flagged():
    assert kinds("Data sits in the Harbor Object Vault.", "Data sits in HOBX.") == [("entity", "Harbor Object Vault")]
    assert kinds("Use MXFS for that.", "Use the Maxwell Storage Layer for that.") == [("entity", "MXFS")]
    # a pair the answer makes whose sides the reference has neither of
    assert kinds("Chronic scale fatigue (CSF) slows the fish.", "Cold water slows fish in winter.") == [
        ("entity", "CSF")
    ]
    # "Paris (France)" pairs no abbreviation, and a parenthesis that does not spell the letters is no pair
    assert kinds("The PVR (Quill Tower) opened late.", "The Quill Tower opened late.") == [("entity", "PVR")]
    # nor do words that spell the letters only by chance
    assert kinds("Rows move through UNK.", "Rows move at the University in Kunming.") == [("entity", "UNK")]


def test_words_that_spell_the_letters_only_by_chance_are_no_long_form():
    # an inner letter counts only where no joining word is left out: "University in Kunming" is no UNK
    assert not stands_for("UNK", ("University", "in", "Kunming"))
    assert stands_for("DOE", ("Department", "of", "Energy"))
    assert stands_for("DBFS", ("Databricks", "File", "System"))
    assert not stands_for("DB", ("Databricks",))  # one word is no long form


def test_abbreviation_letters_and_pairs():
    assert [acronym_letters(w) for w in ("ACLs", "U.S.", "HTTPS", "Paris", "XX")] == ["ACL", "US", "HTTPS", "", ""]
    [pair] = defined_pairs("Use the review task queue (RTQ) daily.")
    assert pair.letters == "RTQ" and pair.words == ("review", "task", "queue")
    assert defined_pairs("He lives in Paris (France).") == []
