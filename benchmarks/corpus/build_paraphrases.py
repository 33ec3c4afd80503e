"""Build benchmarks/data/paraphrases/: faithful paraphrases of the faithful answers of the train, dev and test files.

A faithful answer rewritten with its words and their order changed and its numbers, dates, names and claims kept
is still faithful; a judge that flags it makes a gate flaky. The rewrites are made by rules, in English and in
Chinese, and each is checked before it is kept:

* **Rules** (each seeded per item, applied in a random order, at least two changes an answer):
  - words and phrases swapped for their synonyms from a fixed lexicon (`BOTH_EN`, `ONE_WAY_EN`, `BOTH_ZH`,
    `ONE_WAY_ZH`: function words, connectives and common verbs and nouns whose swap keeps the claim:
    "approximately" -> "about", "the following day" / "the next day", 因为 / 由于, 非常 / 十分);
  - sentences reordered where the moved sentence does not lean on the one before it (no leading pronoun or
    connective: "He", "However", 他, 因此);
  - a leading time or place phrase moved to the end of its sentence, or the reverse ("In 1990, X did Y." /
    "X did Y in 1990.");
  - the answer framed as read from the reference ("According to the reference, …", "根据资料，…");
  - contractions made or undone ("does not" / "doesn't"); a small count written in Chinese numerals ("3个" /
    "三个"); a short answer said as a sentence ("Paris" / "The answer is Paris.").
* **Checks** (a candidate failing any is dropped; the answer gets no paraphrase):
  - every number, date, amount and name of the rewrite is in the original answer and every one of the original
    is in the rewrite (`ragfacts.evidence.find_unsupported`, both ways, Chinese names included);
  - against the reference, the rewrite has no more unsupported numbers, dates, amounts or names than the original
    (the evidence features the head reads);
  - it differs from the original (at least two rule applications that changed the text).

Only rows labelled consistent are rewritten; each paraphrase keeps its original's id (suffixed ``:para``),
reference, question, source, licence and task, so it stays on its original's side of every split. The train
paraphrases are training data for a head (pass them to benchmarks/train_head.py's --train); the dev and
test paraphrases are read only to measure the share of faithful paraphrases a head passes (chosen on dev, reported
on test), never trained on.

    python benchmarks/corpus/build_paraphrases.py [--check]

The build is deterministic: ``--check`` compares with the files already written.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ragfacts.evidence import FEATURE_NAMES, feature_vector, find_unsupported
from ragfacts.methods.precision.training import VETO_FEATURES
from ragfacts.text import detect_lang, split_sentences

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_records import rebuild_rows

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data"
OUT = DATA / "paraphrases"
SEED = 20261127
# (input file, output file, at most this many paraphrases per language; None: every faithful answer)
PLAN = (
    (DATA / "train" / "train.jsonl", "train", {"en": 120, "zh": 160}),
    (DATA / "train" / "train_en_rag.jsonl", "train", {"en": 120, "zh": 0}),
    (DATA / "quality" / "dev.jsonl", "dev", None),
    (DATA / "quality" / "test.jsonl", "test", None),
)

# Interchangeable words or phrases. A pair of BOTH_* is tried in either direction, a pair of ONE_WAY_* only from
# left to right (its right side has senses the left lacks: "about the film" is no "approximately the film").
# Matching ignores case at the start of a word; the first letter's case is kept.
BOTH_EN = (
    ("the following day", "the next day"),
    ("the following year", "the next year"),
    ("vehicles", "cars"),
    ("purchased", "bought"),
    ("began", "started"),
    ("finished", "completed"),
    ("large", "big"),
    ("assisted", "helped"),
    ("often", "frequently"),
    ("usually", "typically"),
    ("mainly", "mostly"),
    ("quickly", "rapidly"),
    ("received", "got"),
    ("located in", "situated in"),
    ("known as", "called"),
    ("died", "passed away"),
    ("created", "made"),
    ("important", "significant"),
    ("shows", "indicates"),
    ("showed", "indicated"),
    ("said", "stated"),
    ("says", "states"),
    ("people", "individuals"),
    ("children", "kids"),
    ("perhaps", "maybe"),
    ("nearly", "almost"),
    ("entire", "whole"),
    ("tried", "attempted"),
    ("needed", "required"),
    ("for example", "for instance"),
    ("a lot of", "lots of"),
    ("film", "movie"),
    ("close to", "near"),
)
ONE_WAY_EN = (
    ("approximately", "about"),
    ("roughly", "around"),
    ("purchase", "buy"),
    ("begin", "start"),
    ("commenced", "started"),
    ("assist", "help"),
    ("however", "but"),
    ("therefore", "so"),
    ("in order to", "to"),
    ("numerous", "many"),
    ("obtain", "get"),
    ("referred to as", "called"),
    ("founded", "established"),
    ("utilize", "use"),
    ("requires", "needs"),
    ("sufficient", "enough"),
    ("moreover", "in addition"),
    ("such as", "like"),
    ("difficult", "hard"),
)
CONTRACTIONS = (
    ("does not", "doesn't"),
    ("do not", "don't"),
    ("did not", "didn't"),
    ("is not", "isn't"),
    ("are not", "aren't"),
    ("was not", "wasn't"),
    ("were not", "weren't"),
    ("cannot", "can't"),
    ("could not", "couldn't"),
    ("will not", "won't"),
    ("has not", "hasn't"),
    ("have not", "haven't"),
    ("it is", "it's"),
)
BOTH_ZH = (
    ("因为", "由于"),
    ("所以", "因此"),
    ("但是", "不过"),
    ("非常", "十分"),
    ("大约", "大概"),
    ("已经", "已"),
    ("可以", "能够"),
    ("如果", "假如"),
    ("虽然", "尽管"),
    ("目前", "当前"),
    ("许多", "很多"),
    ("获得", "取得"),
    ("位于", "坐落于"),
    ("称为", "叫做"),
    ("之后", "以后"),
    ("之前", "以前"),
    ("并且", "而且"),
    ("例如", "比如"),
    ("使用", "利用"),
    ("帮助", "协助"),
    ("去世", "逝世"),
    ("举行", "举办"),
    ("认为", "觉得"),
    ("马上", "立刻"),
    ("经常", "常常"),
    ("仍然", "依然"),
    ("突然", "忽然"),
    ("告诉", "告知"),
    ("知道", "了解"),
    ("喜欢", "喜爱"),
    ("显示", "表明"),
    ("现在", "如今"),
    ("一起", "一同"),
)
ONE_WAY_ZH = (
    ("然而", "但是"),
    ("很", "非常"),
    ("的时候", "时"),
    ("没有", "没"),
    ("这个", "此"),
    ("一直", "始终"),
    ("曾经", "曾"),
    ("然后", "随后"),
    ("另外", "此外"),
    ("最后", "最终"),
    ("差不多", "几乎"),
    ("不少", "许多"),
    ("表示", "称"),
    ("通常", "一般"),
    ("立即", "马上"),
    ("需要", "需"),
)
LEADING_EN = re.compile(
    r"^(he|she|it|they|this|these|that|those|his|her|its|their|them|him|however|but|and|so|also|then|therefore|"
    r"thus|hence|as a result|in addition|moreover|furthermore|meanwhile|later|after that|instead|otherwise|"
    r"both|each|such|there|one|another|other|here|first|second|finally|next|the other)\b",
    re.IGNORECASE,
)
LEADING_ZH = re.compile(
    r"^(他|她|它|其|该|此|这|那|但|而|因此|所以|于是|然后|此外|同时|并且|而且|不过|然而|可是|另外|后来|随后)"
)
FRONT_EN = re.compile(r"^(In|On|During|By|After|Before|Since|Until) ([^,]{2,40}), (\w)(.+?)([.!?])$")
BACK_EN = re.compile(r"^(\w)(.{10,}?) (in|on|during|by|after|before) (\d{4}|[A-Z][a-z]+ \d{4})([.!?])$")
FRAMES = {
    "en": ("According to the reference, ", "Based on the text, ", "The passage says that ", "From the reference: "),
    "zh": ("根据资料，", "参考资料显示，", "据介绍，", "资料中提到，"),
}
WRAPS = {"en": ("The answer is {}.", "It is {}.", "{}, according to the reference."), "zh": ("答案是{}。", "是{}。")}
CN_SMALL = "零一二三四五六七八九十"
COUNTED_ZH = re.compile(r"(?<![\d.])([2-9]|10)(个|名|位|次|种|天|条|家|件|本|只|项|所|座|部|场|届|岁|人)")
LOWERABLE = {"The", "A", "An", "It", "There", "This", "These", "Those", "That", "Some", "Many", "Most", "In", "On"}


def _case_like(template: str, word: str) -> str:
    return word[:1].upper() + word[1:] if template[:1].isupper() else word


def swap_words(text: str, lang: str, rng: random.Random) -> str:
    """One lexicon pair found in the text, swapped (every occurrence) for its partner."""
    both, one_way = (BOTH_EN, ONE_WAY_EN) if lang == "en" else (BOTH_ZH, ONE_WAY_ZH)
    options = []
    for old, new in [*both, *((b, a) for a, b in both), *one_way]:
        pattern = re.compile(rf"\b{re.escape(old)}\b", re.IGNORECASE) if lang == "en" else re.compile(re.escape(old))
        if pattern.search(text):
            options.append((pattern, new))
    if not options:
        return text
    pattern, new = rng.choice(options)
    if lang == "zh":
        return pattern.sub(new, text)
    return pattern.sub(lambda m: _case_like(m.group(0), new), text)


def contract(text: str, lang: str, rng: random.Random) -> str:
    if lang != "en":
        return text
    options = []
    for a, b in CONTRACTIONS:
        for old, new in ((a, b), (b, a)):
            pattern = re.compile(rf"\b{re.escape(old)}\b", re.IGNORECASE)
            if pattern.search(text):
                options.append((pattern, new))
    if not options:
        return text
    pattern, new = rng.choice(options)
    return pattern.sub(lambda m: _case_like(m.group(0), new), text)


def reorder(text: str, lang: str, rng: random.Random) -> str:
    """Two adjacent sentences swapped where neither leans on the sentence before it."""
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return text
    leading = LEADING_EN if lang == "en" else LEADING_ZH
    places = [
        n
        for n in range(len(sentences) - 1)
        if not any(leading.match(s.strip()) or s.rstrip().endswith((":", "：")) for s in sentences[n : n + 2])
        and "\n" not in "".join(sentences[n : n + 2]).strip()
    ]
    if not places:
        return text
    n = rng.choice(places)
    sentences[n], sentences[n + 1] = sentences[n + 1], sentences[n]
    joiner = " " if lang == "en" else ""
    return joiner.join(s.strip() for s in sentences)


def move_phrase(text: str, lang: str, rng: random.Random) -> str:
    """A sentence's leading time or place phrase moved to its end, or a trailing year moved to its front."""
    if lang != "en":
        return text
    sentences = [s.strip() for s in split_sentences(text)]
    order = list(range(len(sentences)))
    rng.shuffle(order)
    for n in order:
        sentence = sentences[n]
        front = FRONT_EN.match(sentence)
        if front:
            prep, phrase, first, rest, stop = front.groups()
            sentences[n] = f"{first.upper()}{rest} {prep.lower()} {phrase}{stop}"
            return " ".join(sentences)
        back = BACK_EN.match(sentence)
        if back and not back.group(2).rstrip().endswith(","):
            first, rest, prep, when, stop = back.groups()
            word = first + rest.split(" ", 1)[0]
            head = (first.lower() if word in LOWERABLE else first) + rest
            sentences[n] = f"{prep.capitalize()} {when}, {head}{stop}"
            return " ".join(sentences)
    return text


def frame(text: str, lang: str, rng: random.Random) -> str:
    """The answer said as read from the reference."""
    prefix = rng.choice(FRAMES[lang])
    if lang == "zh":
        return prefix + text
    first = text.split(" ", 1)[0]
    if first in LOWERABLE:
        return prefix + text[:1].lower() + text[1:]
    # a name may start the answer: its capital stays, and the frame goes after its last sentence
    body = text.rstrip()
    if body[-1:] == ".":
        return f"{body[:-1]}, according to the reference."
    return text


def numerals(text: str, lang: str, rng: random.Random) -> str:
    """A small count written in Chinese numerals ("3个" -> "三个")."""
    if lang != "zh":
        return text
    return COUNTED_ZH.sub(lambda m: CN_SMALL[int(m.group(1))] + m.group(2), text, count=1)


def wrap(text: str, lang: str, rng: random.Random) -> str:
    """A short answer (a name, a number, a phrase) said as a sentence."""
    bare = text.strip()
    short = len(bare.split()) <= 8 if lang == "en" else len(bare) <= 8
    if not short or bare[-1:] in ".!?。！？":
        return text
    return rng.choice(WRAPS[lang]).format(bare)


RULES: tuple[Callable[[str, str, random.Random], str], ...] = (
    swap_words,
    swap_words,
    contract,
    reorder,
    move_phrase,
    numerals,
    wrap,
)


def paraphrase(answer: str, lang: str, rng: random.Random) -> tuple[str, list[str]]:
    """The answer rewritten by the rules, and the names of the rules that changed it."""
    text, applied = answer, []
    rules = list(RULES)
    rng.shuffle(rules)
    for rule in rules:
        changed = rule(text, lang, rng)
        if changed != text:
            text, applied = changed, [*applied, rule.__name__]
    if len(applied) < 2 or rng.random() < 0.25:
        changed = frame(text, lang, rng)
        if changed != text:
            text, applied = changed, [*applied, "frame"]
    return text, applied


def _veto_count(answer: str, reference: str, lang: str) -> float:
    values = dict(zip(FEATURE_NAMES, feature_vector(answer, reference, lang), strict=True))
    return sum(values[name] for name in VETO_FEATURES)


def checked(original: str, rewrite: str, reference: str, lang: str) -> bool:
    """The rewrite keeps every number, date, amount and name of the original, adds none, and is no less
    supported by the reference."""
    if find_unsupported(rewrite, original, lang, chinese_names="auto"):
        return False
    if find_unsupported(original, rewrite, lang, chinese_names="auto"):
        return False
    return _veto_count(rewrite, reference, lang) <= _veto_count(original, reference, lang)


def build() -> dict[str, list[dict]]:
    files: dict[str, list[dict]] = {"train": [], "dev": [], "test": []}
    for path, name, limits in PLAN:
        counts: Counter[str] = Counter()
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        for row in rows:
            if row["label"] != "consistent":
                continue
            lang = detect_lang(row["answer"])
            if limits is not None and counts[lang] >= limits.get(lang, 0):
                continue
            rng = random.Random(int(hashlib.sha256(f"{SEED}:{row['id']}".encode()).hexdigest(), 16))
            rewrite, applied = paraphrase(row["answer"], lang, rng)
            if len(applied) < 2 or not checked(row["answer"], rewrite, row["reference"], lang):
                continue
            counts[lang] += 1
            files[name].append(
                {
                    **row,
                    "id": f"{row['id']}:para",
                    "answer": rewrite,
                    "error_type": None,
                    "paraphrase_of": row["id"],
                    "rules": applied,
                }
            )
        print(f"{path.relative_to(ROOT)}: {dict(counts)} paraphrases", file=sys.stderr)
    return files


def main() -> int:
    return rebuild_rows(__doc__, build, OUT, "paraphrases")


if __name__ == "__main__":
    sys.exit(main())
