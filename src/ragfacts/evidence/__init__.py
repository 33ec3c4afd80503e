"""Evidence checks that cost no model call: the numbers, dates, amounts and names an answer adds to its reference.

    find_unsupported("北京大学创办于1949年。", "北京大学创办于1898年。")[0].explain("zh")
    # '回答说 1949年；参考资料说 1898年'

Pure regular expressions, English and Chinese: about half a millisecond for an answer against a 2,000-character
reference, read once for both entry points (up to 2 ms for a reference dense with numbers or an answer with many
flags). Made for precision: a faithful answer flagged is worse than a miss, so the answer is read strictly and
the reference leniently.

What is read (answer and reference alike):
- numbers: 1,898 / 1 898 / 3.5 / full-width １８９８ / Chinese 一千八百九十八, 两万, 3.5万, 5千万 / English words
  two to ninety-nine ("twenty-five") / scale words (3.5 million, 5 bn, 5亿). A number is written to a precision
  (3.5 million: 100,000; 两万: 10,000; 1,898: 1) and is supported by a reference number that rounds to it.
  "about", "over", "约", "多" ... widen that to 10%.
- ordinals: 1st, first, 第一. Dates: 1898, 1898年, 一八九八年, 1898年3月5日, 1898-03-05, March 5, 1898,
  5 March 1898, March 1898, 3月5日, "in March", the 1890s, 90年代. A four-digit number is a year after "in",
  "since", "from" ... or in a range (1898-1902); otherwise it is a number. Times (10:30) match exactly.
- percentages: 20%, 20 percent, 百分之二十 (never compared with 0.2).
- quantities: length, mass, area, volume, temperature in metric, imperial and Chinese units, in base units (5 km =
  5000 m = 5公里 = 5千米; 3亩 = 2000 m²; 77 °F = 25 °C).
- money: $, US$, HK$, €, £, ¥, USD, RMB, 人民币 before or dollars, euros, yuan, 元, 美元, 欧元 ... after, with
  scales ($5 million = 5,000,000 dollars; 5亿元 = 500,000,000 CNY). Currencies must agree ($ and dollars are any
  dollar; ¥ is yuan or yen).
- names: English capitalised word runs ("Bank of England"), but not at a sentence start unless two words long
  or written capitalised elsewhere in running text (a heading's or label's capitals prove nothing); function
  words, labels ("**To Add Storage:**") and headings ("### Key Parts") left out, and an instruction verb opening a
  sentence or list item is no part of a name ("Replace IMAGE with", "- Supports JSON"). In Chinese text: names in
  《》「」『』, short quoted Chinese phrases, and Latin words (iPhone) except glosses in brackets after Chinese;
  with `chinese_names=True`, also the person and place names jieba tags (nr, ns, nrt, nsf), which needs jieba
  installed (pip install 'jieba>=0.42'). On our labelled Chinese pairs it flags 39% of the unfaithful answers
  instead of 21%, and 0.4% of the faithful ones instead of 0.1%; it costs half a second to load, then some 10 µs
  per answer character.

When the reference supports an answer's mention:
- the same kind with an equal value (rounded to the answer's precision); a date when the reference's date has
  every part the answer's gives (1898 is within 1898-03-05, not the other way), or states its year and its
  day apart;
- a bare number or a bare year also when any number of the reference equals it, in any form (the year or day
  of a date, the figure of an amount of money, an ordinal: 29 is in 第29集);
- a bare whole number of at least 10 also when it is the sum or the difference of two whole numbers of the
  reference ("grew by 30" from 120 and 150; "25 years" from 1990 and 2015); smaller ones too often are by chance;
- a name when each of its words occurs in the reference (case, accents, a possessive and a plural "s"
  ignored), as a demonym or region (Turkish for Turkey, Western for West), or spelled out (NASA, U.S.; UK for
  Britain); a quoted Chinese name when it occurs with punctuation and width ignored;
- a name also when the reference has an abbreviation of it, or the long form of an abbreviation: each word gives
  its initial, joining words ("of") may give none, and without joining words one word may give one more letter
  (DBFS for "Databricks File System", CTAS for "Create Table As Select", ACLs for ACL); written closed up or apart
  ("Autoloader" for "Auto Loader", "Private Link" for "PrivateLink"); or when the answer pairs it with its other
  form ("polycystic ovary syndrome (PCOS)", "DBFS (Databricks File Store)") and the reference states that one.

Left out of the answer (too ambiguous to flag): "one"/"一" as numbers, Chinese numerals without a measure word
(三国, 十全十美, 统一), capitalised number words inside names, list markers ("1.", also run into a line: "1. Low
quality 2. Drugs"), citations ("[2]"), codes (3D, HAuCl4, 10am, 401(k), phone numbers, 24/7), and everything
inside code (`x = 1`, fenced blocks), whose capitals are keywords, not names; bold labels ("**Tax Benefits:**").
Small word numbers (two to nine, 三个) and ordinals (first, 第二) are reported only when the reference gives another
for the same word ("the third largest" against "the second largest"). Names are not checked against a reference in
another script (Paris against 巴黎), nor English names against a Chinese one.

`reference_candidates` are the reference's mentions of the same kind that the answer does not also state,
those sharing most words around them first, then the nearest in value; names need shared words or spelling.
"""

from __future__ import annotations

from ragfacts.evidence._check import Mismatch, answer_mentions, find_unsupported
from ragfacts.evidence._features import FEATURE_NAMES, evidence_features, feature_vector

__all__ = ["FEATURE_NAMES", "Mismatch", "answer_mentions", "evidence_features", "feature_vector", "find_unsupported"]
