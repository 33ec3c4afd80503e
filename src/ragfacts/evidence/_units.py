"""What a written number is counted in, and what may stand around it: units, currencies, hedges, measure words."""

from __future__ import annotations

import re

from ragfacts.evidence._numerals import SCALE

_DOLLARS = frozenset({"USD", "HKD", "AUD", "CAD", "SGD", "TWD"})
CURRENCIES: dict[str, frozenset[str]] = {  # a sign, code or word, folded: the currencies it may be
    **dict.fromkeys(("$", "dollars", "dollar"), _DOLLARS),
    **dict.fromkeys(("us$", "usd", "us dollars", "u.s. dollars", "美元", "美金"), frozenset({"USD"})),
    **dict.fromkeys(("hk$", "hkd", "港元", "港币"), frozenset({"HKD"})),
    "nt$": frozenset({"TWD"}),
    "a$": frozenset({"AUD"}),
    "c$": frozenset({"CAD"}),
    "s$": frozenset({"SGD"}),
    **dict.fromkeys(("€", "euros", "euro", "eur", "欧元"), frozenset({"EUR"})),
    **dict.fromkeys(("£", "pounds", "pound", "pounds sterling", "gbp", "英镑"), frozenset({"GBP"})),
    "¥": frozenset({"CNY", "JPY"}),
    **dict.fromkeys(("yuan", "rmb", "cny", "元", "人民币", "块钱"), frozenset({"CNY"})),
    **dict.fromkeys(("yen", "jpy", "日元"), frozenset({"JPY"})),
}
_CURRENCY_BEFORE_LIST = "US$ HK$ NT$ A$ C$ S$ $ € £ ¥ USD EUR GBP CNY RMB JPY HKD 人民币"
_CURRENCY_BEFORE = tuple(sorted(_CURRENCY_BEFORE_LIST.split(), key=len, reverse=True))
_CURRENCY_AFTER = (
    r"\s?(?:(?:us dollars|u\.s\. dollars|dollars|dollar|usd|euros|euro|eur|pounds sterling|pounds|pound|gbp|yuan"
    r"|rmb|cny|yen|jpy)(?![a-z])|美元|美金|欧元|英镑|日元|港元|港币|人民币|块钱|元)"
)
UNITS: dict[str, tuple[str, float]] = {  # a unit, folded: its dimension and its size in the base unit
    **dict.fromkeys(("km", "kilometres", "kilometers", "kilometre", "kilometer", "公里", "千米"), ("length", 1e3)),
    **dict.fromkeys(("m", "metres", "meters", "metre", "meter", "米"), ("length", 1.0)),
    **dict.fromkeys(("cm", "centimetres", "centimeters", "centimetre", "centimeter", "厘米"), ("length", 1e-2)),
    **dict.fromkeys(("mm", "millimetres", "millimeters", "millimetre", "millimeter", "毫米"), ("length", 1e-3)),
    **dict.fromkeys(("miles", "mile", "mi", "英里"), ("length", 1609.344)),
    **dict.fromkeys(("ft", "feet", "foot", "英尺"), ("length", 0.3048)),
    **dict.fromkeys(("kg", "kilograms", "kilogram", "kilos", "千克", "公斤"), ("mass", 1e3)),
    **dict.fromkeys(("g", "grams", "gram", "克"), ("mass", 1.0)),
    **dict.fromkeys(("mg", "milligrams", "milligram", "毫克"), ("mass", 1e-3)),
    **dict.fromkeys(("metric tons", "metric tonnes", "metric ton", "tonnes", "tonne", "tons", "ton"), ("mass", 1e6)),
    "吨": ("mass", 1e6),
    "斤": ("mass", 500.0),
    **dict.fromkeys(("km²", "km2", "sq km", "square kilometres", "square kilometers", "平方公里"), ("area", 1e6)),
    **dict.fromkeys(("square kilometre", "square kilometer", "平方千米"), ("area", 1e6)),
    **dict.fromkeys(("m²", "m2", "square metres", "square meters", "square metre", "square meter"), ("area", 1.0)),
    "平方米": ("area", 1.0),
    **dict.fromkeys(("hectares", "hectare", "ha", "公顷"), ("area", 1e4)),
    **dict.fromkeys(("acres", "acre"), ("area", 4046.8564224)),
    "亩": ("area", 2000 / 3),
    **dict.fromkeys(("l", "litres", "liters", "litre", "liter", "升"), ("volume", 1.0)),
    **dict.fromkeys(("ml", "millilitres", "milliliters", "millilitre", "milliliter", "毫升"), ("volume", 1e-3)),
    **dict.fromkeys(("m³", "m3", "cubic metres", "cubic meters", "立方米"), ("volume", 1e3)),
    **dict.fromkeys(("°c", "℃", "degrees celsius", "摄氏度"), ("celsius", 1.0)),
    **dict.fromkeys(("°f", "℉", "degrees fahrenheit", "华氏度"), ("celsius", 5 / 9)),
}
# Added to a value before it is scaled to its base unit: 77 °F is (77 - 32) * 5/9 = 25 °C.
UNIT_OFFSETS = dict.fromkeys(("°f", "℉", "degrees fahrenheit", "华氏度"), -32.0)
BASE_UNITS = {"length": "m", "mass": "g", "area": "m²", "volume": "L", "celsius": "°C"}
_UNIT = "|".join(
    rf"[ -]?{re.escape(name)}(?![a-z])" if name.isascii() else rf" ?{re.escape(name)}"
    for name in sorted(UNITS, key=len, reverse=True)
)
# What may follow a written number, in one pass over the lower-cased text: its scale, a Chinese "and more", then
# a percent sign, a currency or a unit, then a hedge ("20%左右").
AFTER = re.compile(
    rf"(?:{SCALE})?(?P<more>余|多|来)?"
    rf"(?:(?P<percent>\s?(?:%|percent\b|per\s?cent\b|pct\b))|(?P<currency>{_CURRENCY_AFTER})|(?P<unit>{_UNIT}))?"
    r"(?P<hedge>\s?(?:左右|上下|以上|\+|plus\b))?"
)
_HEDGE_WORDS = (
    *("about", "around", "approximately", "approx.", "nearly", "almost", "roughly", "some", "over", "under"),
    *("estimated", "more than", "less than", "fewer than", "up to", "at least", "at most", "close to"),
)
_HEDGE_CHINESE = ("约", "近", "超过", "逾", "不到", "不足", "至少", "多达")  # 大约, 将近, 接近 end in 约, 近
# What a Chinese numeral must be followed by to count as one in an answer ("三国" is a name, "十分" an adverb).
_CN_MEASURE_WORDS_LIST = (
    "年 月 日 天 号 个 位 名 人 岁 次 届 种 座 家 件 条 项 所 篇 部 本 张 场 枚 颗 只 头 匹 辆 架 艘 层 栋 间 倍 周 "
    "小时 分钟 秒 世纪 年代 星期 例 期 册 卷 章 节 首 支 队 户 亿 万 千 百"
)
CN_MEASURE_WORD = re.compile("|".join(sorted(_CN_MEASURE_WORDS_LIST.split(), key=len, reverse=True)))
# The first characters of what may follow a lone Chinese numeral that is a number: a measure word, a unit, a
# currency, a scale, "and more".
CN_NUMBER_FOLLOWERS = frozenset(
    _CN_MEASURE_WORDS_LIST.replace(" ", "")
    + "".join(name for name in UNITS if not name.isascii())
    + "美欧英日港人元块余多来十百千万亿%"
)


def currency_before(folded: str, start: int) -> int:
    """Return where a currency sign or code written before `start` begins ("$", "US$ ", "人民币"), or -1."""
    window = max(0, start - 4)
    before = folded[window:start].rstrip(" ")
    if not before.endswith(_CURRENCY_BEFORE):
        return -1
    sign = next(sign for sign in _CURRENCY_BEFORE if before.endswith(sign))
    return window + len(before) - len(sign)


def currency_label(currencies: frozenset[str]) -> str:
    """Return how a set of currencies reads in a normalised value: "USD", "dollars", "CNY/JPY"."""
    return "dollars" if currencies == _DOLLARS else "/".join(sorted(currencies)) or "?"


def hedged_before(lowered: str, start: int) -> bool:
    """Whether "about", "over", "约" ... comes just before `start` (in the lower-cased text)."""
    before = lowered[max(0, start - 24) : start].rstrip(" $€£¥")
    if before.endswith(_HEDGE_CHINESE):
        return True
    if not before.endswith(_HEDGE_WORDS):
        return False
    word = next(word for word in _HEDGE_WORDS if before.endswith(word))
    return not before[: -len(word)][-1:].isalpha()
