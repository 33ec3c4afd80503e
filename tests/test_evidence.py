"""Evidence checks without a model: the numbers, dates, amounts and names an answer adds to its reference."""

import math
import sys
import time

import pytest

from ragfacts.evidence import FEATURE_NAMES, Mismatch, evidence_features, feature_vector, find_unsupported
from ragfacts.text import share_found_in


def kinds(answer: str, reference: str, lang: str | None = None) -> list[tuple[str, str]]:
    return [(m.kind, m.text) for m in find_unsupported(answer, reference, lang)]


# --- numbers and dates -----------------------------------------------------------------------------------------


def test_a_wrong_founding_year_is_one_date_mismatch_naming_both_years():
    [mismatch] = find_unsupported("北京大学创办于1949年。", "北京大学创办于1898年，是中国第一所国立综合性大学。")
    assert (mismatch.kind, mismatch.text, mismatch.value) == ("date", "1949年", "1949")
    assert mismatch.reference_candidates == ("1898年",)
    assert mismatch.explain("zh") == "回答说 1949年；参考资料说 1898年"
    assert "1949" in mismatch.explain("en") and "1898" in mismatch.explain("en")


def test_a_year_in_chinese_numerals_supports_the_same_year_in_digits():
    assert find_unsupported("北京大学创办于1898年。", "北京大学创办于一八九八年。") == []
    assert kinds("北京大学创办于1899年。", "北京大学创办于一八九八年。") == [("date", "1899年")]


def test_full_width_digits_are_digits():
    assert find_unsupported("创办于１８９８年", "创办于1898年") == []
    assert find_unsupported("创办于1898年", "创办于１８９８年") == []
    assert kinds("创办于１８９９年", "创办于1898年") == [("date", "１８９９年")]
    assert find_unsupported("失业率为２０％。", "失业率为20%。") == []
    assert kinds("失业率为２０％。", "失业率为25%。") == [("percent", "２０％")]


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("The bridge is 1,898 metres long.", "The bridge is 1 898 m long."),
        ("The bridge is 1898 m long.", "The bridge is 1,898 metres long."),
        ("It cost 2,500.50 dollars.", "It cost $2500.5."),
    ],
)
def test_thousands_separators_and_trailing_zeros_do_not_matter(answer: str, reference: str):
    assert find_unsupported(answer, reference) == []


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("Sales grew by 30 units.", "Sales were 120 units in 2019 and 150 units in 2020."),
        ("He served for 25 years.", "He joined in 1990 and left in 2015."),
        ("Together they have 270 staff.", "One office has 120 staff, the other 150."),
    ],
)
def test_a_number_the_answer_computed_as_a_sum_or_difference_of_two_the_reference_states_is_supported(
    answer: str, reference: str
):
    assert find_unsupported(answer, reference) == []


def test_a_number_no_sum_or_difference_gives_and_a_small_one_are_still_flagged():
    assert kinds("He served for 26 years.", "He joined in 1990 and left in 2015.") == [("number", "26")]
    assert kinds("It has 7 rooms.", "It has 3 bedrooms and 4 offices.") == [("number", "7")]  # below 10: by chance
    assert kinds("It was 30°F.", "It was 25 °C.") == [("quantity", "30°F")]


@pytest.mark.parametrize(
    "answer",
    [
        "Causes: 1. Low quality 2. Drugs 3. Radiation 4. Infection",  # a list run into one line
        "Save with a 401(k) plan or a 501(c)(3) charity.",  # codes
        "Call (510) 208-4832 or 510-208-4833; open 24/7.",  # a phone number, 24/7
        "Run `head -n 5` or\n```\nx = 12\n```\nthen stop.",  # code
    ],
)
def test_list_markers_codes_phone_numbers_and_code_state_no_number(answer: str):
    assert find_unsupported(answer, "Nothing with a number.") == []


def test_a_lone_number_before_a_period_is_still_a_number():
    assert kinds("It has 4. Then it stops.", "It has 3.") == [("number", "4")]


@pytest.mark.parametrize(
    "answer",
    [
        "3. **Wait for Storage Adjustment:** deleting takes time.",
        "2. **Data Engine**: runs the queries.",
        "Use `SELECT KEY FROM AZURE_TABLE` to read it.",
    ],
)
def test_a_bold_label_and_the_capitals_of_code_are_no_names(answer: str):
    assert find_unsupported(answer, "Deleting takes time and queries are run.") == []


def test_a_year_written_with_a_thousands_separator_still_matches():
    assert find_unsupported("The school was founded in 1898.", "The school was founded in 1,898.") == []


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("城市人口约3.5万人。", "城市人口为35,000人。"),
        ("城市人口为35000人。", "城市人口为3.5万人。"),
        ("全市有两万名教师。", "全市有20000名教师。"),
        ("投资三千五百万元。", "投资3500万元。"),
        ("失业率为百分之二十。", "失业率为20%。"),
        ("The rate was 20 percent.", "失业率为百分之二十。"),
        ("The race is 5 km long.", "The race is 5000 m long."),
        ("全程5公里。", "全程5千米。"),
        ("It weighs 2 kg.", "It weighs 2,000 grams."),
        ("It cost $5 million.", "It cost 5,000,000 dollars."),
        ("项目投资5亿元。", "项目投资500,000,000元。"),
        ("项目投资¥5亿。", "项目投资5亿元人民币。"),
        ("They had twenty-five players.", "They had 25 players."),
        ("He came first.", "He finished 1st in the race."),
        ("It opened on March 5, 1898.", "It opened on 1898-03-05."),
        ("It opened on 5 March 1898.", "它于1898年3月5日开放。"),
        ("它于1898年3月5日开放。", "It opened on March 5, 1898."),
        ("It was 77°F at noon.", "The temperature reached 25 °C at noon."),
        ("气温为25℃。", "It was 77 degrees Fahrenheit."),
    ],
)
def test_the_same_value_in_other_words_or_units_is_supported(answer: str, reference: str):
    assert find_unsupported(answer, reference) == []


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        ("城市人口约3.5万人。", "城市人口为53,000人。", ("number", "3.5万")),
        ("失业率为百分之二十。", "失业率为25%。", ("percent", "百分之二十")),
        ("The race is 5 km long.", "The race is 6000 m long.", ("quantity", "5 km")),
        ("It cost $5 million.", "It cost 5,000 dollars.", ("money", "$5 million")),
        ("项目投资5亿元。", "项目投资5亿美元。", ("money", "5亿元")),
        ("It opened on March 6, 1898.", "It opened on 1898-03-05.", ("date", "March 6, 1898")),
    ],
)
def test_a_different_value_is_flagged_with_its_kind(answer: str, reference: str, expected: tuple[str, str]):
    assert kinds(answer, reference) == [expected]


def test_a_year_is_within_a_full_date_but_a_full_date_is_not_within_a_year():
    assert find_unsupported("It opened in 1898.", "It opened on March 5, 1898.") == []
    [mismatch] = find_unsupported("It opened on March 5, 1898.", "It opened in 1898.")
    assert mismatch.kind == "date" and mismatch.reference_candidates == ("1898",)


def test_a_month_alone_is_a_date_when_said_as_one():
    [mismatch] = find_unsupported("The vote took place in March.", "The vote took place in April 2020.")
    assert (mismatch.kind, mismatch.text, mismatch.value) == ("date", "March", "--03")
    assert mismatch.reference_candidates == ("April 2020",)


def test_a_reference_in_lower_case_still_states_its_dates():
    reference = "khan will fight chris algieri on may 30 . last may he won in las vegas ."
    assert find_unsupported("Khan will fight Chris Algieri on May 30.", reference) == []
    assert find_unsupported("Khan won in Las Vegas in May.", reference) == []


def test_a_full_date_is_supported_by_its_day_and_its_year_stated_apart():
    reference = "Tim Roth was born on December 6. That year, 1975, the band was founded."
    assert find_unsupported("Tim Roth was born on December 6, 1975.", reference) == []
    assert kinds("Tim Roth was born on December 6, 1976.", reference) == [("date", "December 6, 1976")]


def test_a_rounded_amount_is_supported_by_the_exact_one_it_rounds():
    assert find_unsupported("About 3.5 million people live there.", "3,482,000 people live there.") == []
    assert find_unsupported("The rate is 35%.", "The rate is 34.6%.") == []
    assert kinds("The rate is 35%.", "The rate is 33.6%.") == [("percent", "35%")]


def test_a_hedged_amount_is_supported_within_ten_percent_and_a_bare_one_is_not():
    assert find_unsupported("The town has about 35,000 residents.", "The town has 33,000 residents.") == []
    assert kinds("The town has 35,000 residents.", "The town has 33,000 residents.") == [("number", "35,000")]


def test_a_bare_number_is_supported_by_the_same_number_in_any_form():
    assert find_unsupported("The final was on the 5th day; 1898 saw it.", "决赛于1898年3月5日举行。") == []
    assert find_unsupported("答案是29。", "电视剧第29集播出了这一情节。") == []


def test_numbers_of_the_reference_that_the_answer_does_not_mention_are_not_flagged():
    reference = "Founded in 1898 with 3 faculties, it had 12,000 students and a budget of $5 million by 1950."
    assert find_unsupported("It was founded in 1898.", reference) == []


def test_a_faithful_paraphrase_without_numbers_has_no_mismatch():
    reference = "The committee approved the plan after a long debate, citing its low cost and broad support."
    answer = "After lengthy discussion, the committee backed the plan because it was cheap and widely supported."
    assert find_unsupported(answer, reference) == []


def test_small_word_numbers_and_ordinals_count_only_against_a_differing_reference_value():
    reference = "The drought was caused by low rainfall, high temperatures and overuse of groundwater."
    assert find_unsupported("There were three causes; the first was low rainfall.", reference) == []
    assert kinds("It is the third largest city.", "It is the second largest city in the country.") == [
        ("number", "third")
    ]
    assert kinds("它是全国第三大城市。", "它是全国第二大城市。") == [("number", "第三")]
    assert find_unsupported("Villegas hit two aces.", "Villegas, ranked 74, hit an ace.") == []  # 74 counts no aces


@pytest.mark.parametrize(
    "answer",
    [
        "1. Paris is the capital.\n2. Lyon is smaller.",  # list markers
        "Paris is the capital [1].",  # citations
        "The film was shot in 3D.",  # codes
        "One of the reasons is cost.",  # "one"
        "他读了《三国演义》，觉得十全十美。",  # numerals inside names and idioms
        "秦始皇统一了中国，一些人认为这是第一步。",
    ],
)
def test_enumerations_codes_and_idioms_are_not_numbers(answer: str):
    reference = "Paris is the capital of France. 秦始皇统一了中国。他读了《三国演义》。Lyon is smaller."
    assert [m for m in find_unsupported(answer, reference) if m.kind != "entity"] == []


def test_mismatch_spans_point_at_the_answer_text():
    answer = "Founded in 1901 in Lyon, it had 12,500 students and a $3 million budget in 1950."
    reference = "Founded in 1898 in Paris, it had 12,000 students and a $2 million budget in 1950."
    found = find_unsupported(answer, reference)
    assert [(m.kind, m.text) for m in found] == [
        ("date", "1901"),
        ("number", "12,500"),
        ("money", "$3 million"),
        ("entity", "Lyon"),
    ]
    for mismatch in found:
        assert answer[mismatch.start : mismatch.end] == mismatch.text
    assert (found[2].start, found[2].end) == (answer.index("$3"), answer.index(" budget"))


def test_candidates_are_the_reference_values_closest_first_and_at_most_three():
    reference = "It was founded in 1898, renamed in 1912, moved in 1952 and merged in 2000."
    [mismatch] = find_unsupported("It was founded in 1899 and renamed in 1912.", reference)
    assert mismatch.reference_candidates[0] == "1898"  # shares "founded"; 1912 is what the answer also says
    assert "1912" not in mismatch.reference_candidates
    assert len(mismatch.reference_candidates) <= 3


def test_explanations_name_what_the_reference_lacks_when_it_has_no_candidate():
    [mismatch] = find_unsupported("It opened in 1901.", "It opened after the war.")
    assert mismatch.explain() == "the answer says 1901; the reference gives no date"
    assert mismatch.explain("zh") == "回答说 1901；参考资料没有给出日期"
    assert isinstance(mismatch, Mismatch)
    [name] = find_unsupported("It was built by Gustave Eiffel.", "It was built in 1889.")
    assert name.explain() == "the answer says Gustave Eiffel; the reference does not mention it"
    assert name.explain("zh") == "回答说 Gustave Eiffel；参考资料没有提到它"


# --- names -------------------------------------------------------------------------------------------------------


def test_an_english_entity_swap_is_flagged_with_the_reference_name():
    [mismatch] = find_unsupported("The capital of France is Paris.", "The capital of France is Lyon.")
    assert (mismatch.kind, mismatch.text, mismatch.value) == ("entity", "Paris", "paris")
    assert mismatch.reference_candidates == ("Lyon",)
    assert mismatch.explain() == "the answer says Paris; the reference says Lyon"


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("Curie's discovery changed physics.", "Marie Curie discovered radium."),
        ("The discovery was made by Marie Curie.", "Marie Skłodowska Curie discovered radium."),
        ("It was launched by NASA.", "The National Aeronautics and Space Administration launched it."),
        ("The U.S. joined in 1917.", "The United States joined the war in 1917."),
        ("The jet was shot down by Turkish forces.", "Turkey shot down the jet."),
        ("The Smiths moved to PARIS.", "The Smith family moved to Paris."),
    ],
)
def test_names_match_across_case_possessives_plurals_acronyms_and_demonyms(answer: str, reference: str):
    assert find_unsupported(answer, reference) == []


@pytest.mark.parametrize(
    "answer",
    [
        "However, the plan was approved.",
        "Founded long ago, the school grew quickly.",
        "Key Points:\nThe plan was approved.",
        "In summary, the plan was approved.",
        "Outcome - Approved by the council.",
    ],
)
def test_capitalised_words_at_a_sentence_start_are_not_names(answer: str):
    assert find_unsupported(answer, "The plan was approved by the council.") == []


def test_a_two_word_name_at_a_sentence_start_is_still_a_name():
    assert kinds("Marie Curie won the prize.", "Pierre Curie won the prize.") == [("entity", "Marie Curie")]
    assert (
        find_unsupported("Averaged 25 points.\nEarned Class honours.", "He averaged 25 points, earning Class honours.")
        == []
    )


def test_chinese_titles_in_brackets_are_names():
    [mismatch] = find_unsupported("《红楼梦》的作者是曹雪芹。", "《石头记》的作者是曹雪芹。")
    assert (mismatch.kind, mismatch.text, mismatch.reference_candidates) == ("entity", "《红楼梦》", ("《石头记》",))
    assert find_unsupported("曹雪芹写了《红楼梦》。", "《红楼梦》是曹雪芹所著。") == []


def test_latin_words_in_chinese_text_are_checked_but_glosses_are_not():
    assert kinds("苹果发布了iPhone 15。", "苹果在2023年发布了iPhone 14和Apple Watch。") == [("number", "15")]
    assert kinds("该机型由Samsung生产。", "该机型由Apple在2023年发布，型号为iPhone 14。") == [("entity", "Samsung")]
    assert find_unsupported("北京大学（Peking University）创办于1898年。", "北京大学创办于1898年。") == []


def test_names_are_not_checked_against_a_reference_in_another_script():
    assert find_unsupported("Peking University is in Beijing.", "北京大学位于北京。", "en") == []


def test_chinese_person_and_place_names_are_checked_when_asked_for():
    pytest.importorskip("jieba")
    answer, reference = "梅西在洛杉矶签约。", "利昂内尔·梅西在纽约签约，合同为期两年。"
    assert find_unsupported(answer, reference) == []  # not by default: it needs jieba and time
    [mismatch] = find_unsupported(answer, reference, chinese_names=True)
    assert (mismatch.kind, mismatch.text, answer[mismatch.start : mismatch.end]) == ("entity", "洛杉矶", "洛杉矶")
    assert find_unsupported("梅西在纽约签约。", reference, chinese_names=True) == []
    assert find_unsupported("这些东西都很好。", "这里的商品都很好。", chinese_names=True) == []


def test_a_chinese_name_jieba_does_not_know_is_found_in_its_place_in_the_reference():
    pytest.importorskip("jieba")
    reference = "青蒿素由屠呦呦团队于1972年发现，屠呦呦因此获得诺贝尔奖。"  # jieba reads 屠呦呦 as three words
    [mismatch] = find_unsupported("青蒿素是袁隆平团队于1972年发现的。", reference, chinese_names=True)
    assert (mismatch.text, mismatch.reference_candidates) == ("袁隆平", ("屠呦呦",))
    assert mismatch.explain("zh") == "回答说 袁隆平；参考资料说 屠呦呦"
    [mismatch] = find_unsupported("梅西在洛杉矶签约。", "梅西在纽约签约，合同为期两年。", chinese_names=True)
    assert mismatch.reference_candidates == ("纽约",)  # a shorter name in the same place
    [mismatch] = find_unsupported("该公司由张三创立。", "该公司由李四于2001年创立。", chinese_names=True)
    assert mismatch.reference_candidates == ()  # "年" before "创立" is no name
    [mismatch] = find_unsupported("张三说过这句话。", "李小明说过这句话。", chinese_names=True)
    assert mismatch.reference_candidates == ("李小明",)  # the whole name, not 小明
    for answer, reference in [("北京总部很大。", "这家公司总部很大。"), ("上海市很大。", "这个城市很大。")]:
        [mismatch] = find_unsupported(answer, reference, chinese_names=True)
        assert mismatch.reference_candidates == (), reference  # 家公司 is no word, 城市 no name
    reference = "据《肘后备急方》记载，屠呦呦团队于1972年发现青蒿素。"
    [mismatch] = find_unsupported("袁隆平团队于1972年发现青蒿素。", reference, chinese_names=True)
    assert mismatch.reference_candidates[0] == "屠呦呦"  # the name in its place before any other


def test_chinese_names_without_jieba_say_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "jieba", None)
    with pytest.raises(ImportError, match="pip install"):
        find_unsupported("梅西在洛杉矶签约。", "梅西在纽约签约。", chinese_names=True)


# --- features ----------------------------------------------------------------------------------------------------

PAIRS = [
    ("北京大学创办于1949年。", "北京大学创办于1898年。"),
    ("The capital of France is Paris.", "The capital of France is Lyon."),
    ("After long debate, the committee backed the plan.", "The committee approved the plan after a long debate."),
    ("", "Some reference."),
    ("An answer with 3 numbers: 4, 5 and 2020.", ""),
]


@pytest.mark.parametrize(("answer", "reference"), PAIRS)
def test_features_are_bounded_and_in_feature_names_order(answer: str, reference: str):
    features = evidence_features(answer, reference)
    assert tuple(features) == FEATURE_NAMES
    assert feature_vector(answer, reference) == [features[name] for name in FEATURE_NAMES]
    for name, value in features.items():
        assert math.isfinite(value)
        if name.startswith(("share_", "any_", "answer_novel", "max_", "negation_", "answer_len_ratio")):
            assert 0.0 <= value <= 1.0, name
        else:
            assert 0.0 <= value <= math.log1p(1000), name


def test_features_count_the_unsupported_mentions():
    wrong = evidence_features("北京大学创办于1949年。", "北京大学创办于1898年。")
    assert wrong["n_numbers_answer"] == math.log1p(1) and wrong["n_numbers_unsupported"] == math.log1p(1)
    assert wrong["share_numbers_unsupported"] == 1.0
    assert wrong["any_number_unsupported"] == wrong["any_date_unsupported"] == 1.0
    assert wrong["any_amount_unsupported"] == 0.0
    swapped = evidence_features("The capital of France is Paris.", "The capital of France is Lyon.")
    assert swapped["any_entity_unsupported"] == 1.0 and swapped["share_entities_unsupported"] == 0.5
    faithful = evidence_features("北京大学创办于1898年。", "北京大学创办于1898年，位于北京。")
    assert faithful["any_number_unsupported"] == faithful["answer_novel_token_share"] == 0.0


def test_the_novel_token_share_is_what_share_found_in_leaves():
    answer, reference = "The cat sat. Dogs bark loudly at night.", "The cat sat on the mat."
    assert evidence_features(answer, reference)["answer_novel_token_share"] == pytest.approx(
        1 - share_found_in(answer, reference)
    )
    assert evidence_features(answer, reference)["max_sentence_novel_share"] == 1.0
    assert evidence_features(answer, reference)["share_sentences_novel"] == 0.5


def test_a_long_reference_is_read_in_linear_time():
    reference = " ".join(
        f"In {1800 + i % 200}, the town of Name{i} had {i * 37:,} residents and {i % 50}% growth." for i in range(300)
    )
    start = time.perf_counter()
    find_unsupported("In 1899, the town had 4,000 residents and 12% growth under Mayor Smith.", reference)
    assert time.perf_counter() - start < 2.0  # about 25,000 characters; typically 20 ms
