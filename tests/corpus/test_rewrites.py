"""Training data made by rules from faithful answers: paraphrases that stay faithful (every number, date and name
kept) and injections that make exactly one Face4RAG error type, in English and in Chinese."""

from __future__ import annotations

import random

import pytest
from benchmarks.corpus import build_injections, build_paraphrases


@pytest.mark.parametrize(
    ("error_type", "lang", "answer", "injected"),
    [
        ("LCaus.", "zh", "因为明前茶滋味鲜爽，所以春季气温较低。", "因为春季气温较低，所以明前茶滋味鲜爽。"),
        (
            "LCaus.",
            "en",
            "The roads were closed because the river flooded.",
            "The river flooded because the roads were closed.",
        ),
        (
            "LCaus.",
            "en",
            "The river flooded, so the roads were closed.",
            "The roads were closed, so the river flooded.",
        ),
        ("LConf.", "zh", "只有通过考试，才能毕业。", "只要通过考试，就能毕业。"),
        ("LConf.", "zh", "如果下雨，比赛就取消。", "如果比赛取消，就下雨。"),
        ("LConf.", "en", "You can vote only if you are registered.", "You can vote if you are registered."),
        ("LConf.", "en", "If it rains, the match is cancelled.", "If the match is cancelled, it rains."),
        ("LOthe.", "zh", "虽然他很累，但是他完成了工作。", "虽然他完成了工作，但是他很累。"),
        (
            "LOthe.",
            "en",
            "Although he was tired, he finished the work.",
            "Although he finished the work, he was tired.",
        ),
        ("LOver.", "zh", "部分患者会出现头痛。", "全部患者会出现头痛。"),
        ("LOver.", "en", "Some birds cannot fly.", "All birds cannot fly."),
        ("KCont.", "zh", "青蒿素是一种抗疟药物。", "青蒿素不是一种抗疟药物。"),
        ("KCont.", "zh", "他没有参加会议。", "他有参加会议。"),
        ("KCont.", "en", "The bridge is open to traffic.", "The bridge is not open to traffic."),
        ("KCont.", "en", "The bridge cannot open.", "The bridge can open."),
        (
            "KInve.",
            "zh",
            "屠呦呦于1972年发现青蒿素，2015年获得诺贝尔奖。",
            "屠呦呦于2015年发现青蒿素，1972年获得诺贝尔奖。",
        ),
        ("KInve.", "en", "Alice scored 3 goals and Bob scored 5.", "Alice scored 5 goals and Bob scored 3."),
    ],
)
def test_each_injector_makes_its_error_exactly(error_type: str, lang: str, answer: str, injected: str):
    assert build_injections.INJECTORS[error_type](answer, lang) == injected


@pytest.mark.parametrize(
    ("error_type", "lang", "answer"),
    [
        ("LCaus.", "en", "The river is long."),
        ("LConf.", "zh", "北京是首都。"),
        ("LOver.", "en", "All birds have feathers."),
        ("KInve.", "en", "Alice scored 3 goals."),
    ],
)
def test_an_injector_whose_rule_does_not_apply_makes_nothing(error_type: str, lang: str, answer: str):
    assert build_injections.INJECTORS[error_type](answer, lang) is None


@pytest.mark.parametrize(
    ("error_type", "lang", "answer"),
    [
        ("LOver.", "en", "He was born on May 9, 2012."),  # a month, not a hedge
        ("LOver.", "en", "It is the most important bridge."),
        ("LOver.", "en", "A few people came."),
        ("LOver.", "zh", "报名人数不少于三人。"),
        ("LOthe.", "en", "The animation, though not exactly inspired, is certainly colorful."),
        ("LOthe.", "en", "Although he missed a season, he signed with the Penguins and made his N.H.L. debut in 2019."),
        ("LCaus.", "en", "It is able to dissolve gold because of the unique action of HCl."),
        ("LCaus.", "zh", "预计由于巨大的成本而无法使用AI技术的公司，也将有更多的空间使用GPT-4。"),
        ("LConf.", "en", "If you have any questions, please contact Karen at karen.brown@nera.com or 213 346 3045."),
        ("LConf.", "zh", "张颂文如果不来演高启强，我一定会遗憾终生的！"),
        ("KInve.", "en", "Anderson was born as William T. Anderson in 1950."),
        ("KInve.", "en", 'She released "Step Back in Time" in 2019.'),
        ("KCont.", "en", "He has to leave early."),
        ("KCont.", "en", "They did the work."),
        ("LOver.", "zh", "资金不得弥补经常性开支。"),
        ("LCaus.", "en", "He put a charm on his house, so that only his descendants could live there."),
        ("LCaus.", "zh", "这首歌优美，也因为有真实故事的支撑，所以格外动人。"),
        ("KInve.", "en", 'She released "Greatest Hits: The Definitive Collection" in 2019.'),
        ("LOver.", "zh", "所有的这些年代都很重要。"),  # 有的 inside 所有的
        ("LOver.", "zh", "我们会尽可能帮助你。"),
        ("LOver.", "zh", "它是组成部分之一。"),
        ("LOver.", "en", "Several hundred people came."),
        ("LOver.", "en", "More often than not it rains."),
        ("LOver.", "en", "How often will I be billed?"),
        ("KCont.", "en", "They spent more than they did in the 2009 campaign."),
        ("KCont.", "en", "She has seven children."),
        ("KCont.", "zh", "请确认是否参加。"),
    ],
)
def test_an_injection_that_would_not_read_as_a_sentence_is_not_made(error_type: str, lang: str, answer: str):
    assert build_injections.INJECTORS[error_type](answer, lang) is None


@pytest.mark.parametrize(
    ("error_type", "lang", "answer", "injected"),
    [
        (
            "LOthe.",
            "zh",
            "虽然震中标记为一点，但7.8级地震的震源域可延伸至190公里。",
            "虽然7.8级地震的震源域可延伸至190公里，但震中标记为一点。",
        ),
        ("LOver.", "zh", "他很可能接替佩洛西。", "他一定接替佩洛西。"),
        (
            "LOver.",
            "en",
            "Suspects in several shootings had cleared checks.",
            "Suspects in all shootings had cleared checks.",
        ),
        ("KCont.", "en", "She has written three books.", "She has not written three books."),
        ("LConf.", "zh", "如果经济增长，就业就会增加。", "如果就业会增加，就经济增长。"),  # 就业 is no "then"
    ],
)
def test_an_injection_keeps_decimals_whole_and_reads_as_a_sentence(
    error_type: str, lang: str, answer: str, injected: str
):
    assert build_injections.INJECTORS[error_type](answer, lang) == injected


def test_an_answer_gets_one_labelled_row_per_type_that_applies():
    row = {"id": "r1", "answer": "The roads were closed because the river flooded.", "label": "consistent"}
    made = build_injections.inject(row)
    assert {r["error_type"] for r in made} == {"LCaus.", "KCont."}
    assert all(r["label"] == "inconsistent" and r["injected_into"] == "r1" for r in made)


@pytest.mark.parametrize(
    ("answer", "lang"),
    [
        ("The bridge opened to vehicles the following day, on May 27, 1937, after 4 years of work.", "en"),
        ("Paris", "en"),
        ("因为屠呦呦团队在1972年发现了青蒿素，所以她获得了诺贝尔奖。", "zh"),
        ("俄罗斯", "zh"),
    ],
)
def test_a_paraphrase_changes_the_words_and_keeps_every_number_date_and_name(answer: str, lang: str):
    rewrite, applied = build_paraphrases.paraphrase(answer, lang, random.Random(7))
    assert rewrite != answer and len(applied) >= 2
    assert build_paraphrases.checked(answer, rewrite, answer, lang)


def test_a_rewrite_that_drops_or_changes_a_number_is_not_kept():
    original = "The bridge opened on May 27, 1937."
    assert not build_paraphrases.checked(original, "The bridge opened on May 27, 1947.", original, "en")
    assert not build_paraphrases.checked(original, "The bridge opened in May.", original, "en")


def test_a_reference_sentence_with_a_cause_gives_a_faithful_answer_and_its_reversal():
    from collections import Counter

    row = {
        "id": "r2",
        "reference": "天气很好。由于春季气温较低，因此明前茶滋味鲜爽。",
        "answer": "x",
        "label": "consistent",
    }
    faithful, flawed = build_injections.mined(row, Counter())
    assert (faithful["answer"], faithful["label"]) == ("由于春季气温较低，因此明前茶滋味鲜爽。", "consistent")
    assert (flawed["answer"], flawed["label"], flawed["error_type"]) == (
        "由于明前茶滋味鲜爽，因此春季气温较低。",
        "inconsistent",
        "LCaus.",
    )
