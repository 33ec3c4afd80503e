"""Build benchmarks/data/injections/: flawed answers made by rules from faithful ones, one Face4RAG error type each.

Face4RAG builds its benchmark by injecting each error type of its typology into faithful answers (§3.2). Where a
rule makes the error exactly, it is made here, in English and in Chinese, on the faithful answers of the train split
(training data, and a dev split of about a fifth of its reference groups: `split_of`) and of the test split (to
measure, per type, the share a judge catches): the quality corpus's and the long English RAG answers' of LFQA, MTRAG
and ARES (benchmarks/data/rag_en/). Each injected answer keeps its original's reference, question, source, licence
and task, and says its `error_type`:

- `LCaus.` (causal confusion): cause and effect swapped around 因为…所以 / 由于…因此 / because / so / therefore
  ("X because Y" -> "Y because X");
- `LConf.` (condition confusion): the two sides of a condition swapped (如果A，就B -> 如果B，就A; "if A, B" ->
  "if B, A"), or a necessary condition made sufficient (只有A，才B -> 只要A，就B; "only if" -> "if");
- `LOthe.` (other logical fallacy): the two sides of a concession swapped (虽然A，但是B -> 虽然B，但是A;
  "although A, B" -> "although B, A");
- `LOver.` (overgeneralisation): a limited claim made universal (some -> all, often -> always, 部分 -> 全部,
  一些 -> 所有, 可能 -> 一定);
- `KCont.` (contradiction): a statement negated or its negation removed (is -> is not, 是 -> 不是, 没有 -> 有);
- `KInve.` (entity inversion): two numbers, dates or names of the answer swapped ("A won 3, B won 5" -> "A won
  5, B won 3").

An injector returns None where its rule does not apply; an answer gets at most one injection per type, and only
types whose rule applied. Faithful answers seldom hold a cause, a condition or a concession, so for the logic types
pairs are also cut from the references (`mined`): a reference sentence holding that structure is a faithful answer
as it stands (its row labelled consistent, `mined_for` the type), and the sentence with the structure broken is the
flawed one; at most MINED_PER_TYPE pairs per file, language and type, one type a sentence. The rules are exact by
construction (they change only what they name), so no model checks them; what a swap makes may still read oddly,
which a judge should flag anyway.

    python benchmarks/corpus/build_injections.py [--check]
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragfacts.evidence import answer_mentions
from ragfacts.text import detect_lang, split_sentences

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_records import rebuild_rows

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data"
OUT = DATA / "injections"
PLAN = (
    (DATA / "train" / "train.jsonl", "train"),
    (DATA / "train" / "train_en_rag.jsonl", "train"),
    *((DATA / "rag_en" / f"{source}_train.jsonl", "train") for source in ("lfqa", "mtrag", "ares")),
    (DATA / "quality" / "test.jsonl", "test"),
    *((DATA / "rag_en" / f"{source}_test.jsonl", "test") for source in ("lfqa", "mtrag", "ares")),
)


def _words(text: str) -> frozenset[str]:
    """The words of a space-separated list."""
    return frozenset(text.split())


# A sentence ends at 。！？, or at . ! ? not followed by a letter or digit (7.8, N.H.L. and e-mail addresses go on).
_END = r"(?P<end>[。！？]|[.!?](?![\w.])|$)"
_CLAUSE_ZH = r"(?:[^，,。！？；;.!?]|[.!?](?=[\w.]))+?"
_CLAUSE_EN = r"(?:[^,.;:!?\"“”()]|[.](?=\w))+?"
_END_EN = r"(?<!\.[A-Z])(?P<end>[.!?])(?![\w.])"  # not the last stop of an abbreviation: N.H.L.
# A Chinese connective that opens its clause: at the start, after punctuation or after a space.
_OPENS_ZH = r"(?<![^，,。！？；;：:“”\"\s])"
# Words a declarative clause starts with: a swapped condition whose other side starts otherwise ("please call
# us") would not be a sentence.
_SUBJECTS_EN = _words(
    "i you he she it we they the a an this that these those there his her its our their your my one each "
    "every all some most many no people"
)


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lower_first(text: str) -> str:
    """The first word lower-cased, unless it is a name or an acronym (a capital after its first letter, or a word
    other than the common sentence openers)."""
    first = text.split(" ", 1)[0]
    openers = {"The", "A", "An", "It", "This", "That", "These", "Those", "There", "They", "He", "She", "We", "Its"}
    openers |= {"Some", "Many", "Most", "All", "His", "Her", "Their", "Our", "My", "Your", "You", "People"}
    return text[:1].lower() + text[1:] if first in openers else text


def _swap_clauses(
    pattern: re.Pattern[str],
    text: str,
    build: Callable[[re.Match[str]], str],
    both: Callable[[re.Match[str]], bool] = lambda match: True,
) -> str | None:
    """The first match of `pattern` whose clauses pass `both`, rebuilt by `build`; None where there is none."""
    for match in pattern.finditer(text):
        if not both(match):
            continue
        changed = text[: match.start()] + build(match) + text[match.end() :]
        return changed if changed != text else None
    return None


_CAUSE_ZH = re.compile(
    rf"{_OPENS_ZH}(?P<because>因为|由于)(?P<a>{_CLAUSE_ZH})[，,](?P<so>所以|因此|因而|从而)(?P<b>{_CLAUSE_ZH}){_END}"
)
_SO_ZH = re.compile(rf"{_OPENS_ZH}(?P<a>{_CLAUSE_ZH})[，,](?P<so>所以|因此|因而|从而|于是)(?P<b>{_CLAUSE_ZH}){_END}")
_DUE_ZH = re.compile(rf"{_OPENS_ZH}(?P<because>因为|由于)(?P<a>{_CLAUSE_ZH})[，,](?P<b>{_CLAUSE_ZH}){_END}")
_CAUSE_EN_BECAUSE = re.compile(rf"(?P<a>\b[A-Z]{_CLAUSE_EN}) because (?!of\b)(?P<b>{_CLAUSE_EN}){_END_EN}")
_CAUSE_EN_SO = re.compile(
    rf"(?P<a>\b[A-Z]{_CLAUSE_EN})(?P<so>, so (?!that\b)|; therefore,? |, therefore,? |; thus,? |, which is why )"
    rf"(?P<b>{_CLAUSE_EN}){_END_EN}"
)


def _declarative(clause: str) -> bool:
    """Whether an English clause starts as a statement does: with a subject word or a name."""
    first = clause.strip().split(" ", 1)[0]
    return first.casefold() in _SUBJECTS_EN or (first[:1].isupper() and first.casefold() not in _IMPERATIVES_EN)


_IMPERATIVES_EN = _words("please do don't call contact visit see check make let feel go try use click read")


def causal(text: str, lang: str) -> str | None:
    """Cause and effect swapped."""
    if lang == "zh":
        return (
            _swap_clauses(_CAUSE_ZH, text, lambda m: f"{m['because']}{m['b']}，{m['so']}{m['a']}{m['end']}")
            or _swap_clauses(
                _SO_ZH,
                text,
                lambda m: f"{m['b']}，{m['so']}{m['a']}{m['end']}",
                both=lambda m: not re.search("因为|由于", m["a"]),  # "也因为A，所以B" is not "A，所以B"
            )
            or _swap_clauses(_DUE_ZH, text, lambda m: f"{m['because']}{m['b']}，{m['a']}{m['end']}")
        )
    swapped = _swap_clauses(
        _CAUSE_EN_BECAUSE,
        text,
        lambda m: f"{_upper_first(m['b'].strip())} because {_lower_first(m['a'].strip())}{m['end']}",
        both=lambda m: _declarative(m["b"]),
    )
    if swapped is not None:
        return swapped
    return _swap_clauses(
        _CAUSE_EN_SO,
        text,
        lambda m: f"{_upper_first(m['b'].strip())}{m['so']}{_lower_first(m['a'].strip())}{m['end']}",
        both=lambda m: _declarative(m["b"]),
    )


_THEN_JIU = r"就(?!业|是|算|像|职|读|诊|医|餐|近|地)"  # 就 as "then", not the start of 就业, 就是, 就读 ...
_IF_ZH = re.compile(
    rf"{_OPENS_ZH}(?P<if>如果|假如|若)(?P<a>{_CLAUSE_ZH})[，,](?P<then>那么|{_THEN_JIU}|则)?(?P<b>{_CLAUSE_ZH}){_END}"
)
_ONLY_ZH = re.compile(r"只有(?P<a>[^，,。！？]+?)[，,]?才")
_IF_EN = re.compile(
    rf"(?<!as )(?<!even )\b(?P<if>If|if) (?P<a>{_CLAUSE_EN}), (?P<then>then )?(?P<b>{_CLAUSE_EN}){_END_EN}"
)
_ONLY_EN = re.compile(r"\bonly if\b")


def condition(text: str, lang: str) -> str | None:
    """A necessary condition made sufficient, or the two sides of a condition swapped."""
    if lang == "zh":
        made = _ONLY_ZH.sub(lambda m: f"只要{m['a']}，就", text, count=1)
        if made != text:
            return made
        return _swap_clauses(
            _IF_ZH,
            text,
            lambda m: f"{m['if']}{re.sub(_THEN_JIU, '', m['b'], count=1)}，{m['then'] or '就'}{m['a']}{m['end']}",
            both=lambda m: "就" not in m["a"] and len(m["a"]) >= 2 and len(m["b"]) >= 2,
        )
    made = _ONLY_EN.sub("if", text, count=1)
    if made != text:
        return made
    return _swap_clauses(
        _IF_EN,
        text,
        lambda m: f"{m['if']} {m['b'].strip()}, {m['then'] or ''}{m['a'].strip()}{m['end']}",
        both=lambda m: _declarative(m["a"]) and _declarative(m["b"]),
    )


_ALTHOUGH_ZH = re.compile(
    rf"{_OPENS_ZH}(?P<though>虽然|尽管)(?P<a>{_CLAUSE_ZH})[，,](?P<but>但是|但|却|可是)(?P<b>{_CLAUSE_ZH}){_END}"
)
# At the start of a sentence only: a mid-sentence "though" ("the animation, though not inspired, is colourful")
# is no concession of two clauses.
_ALTHOUGH_EN = re.compile(
    rf"(?:^|(?<=[.!?] ))(?P<though>Although|Though|Even though) (?P<a>{_CLAUSE_EN}), (?P<b>{_CLAUSE_EN}){_END_EN}"
)


def concession(text: str, lang: str) -> str | None:
    """The two sides of a concession swapped."""
    if lang == "zh":
        return _swap_clauses(_ALTHOUGH_ZH, text, lambda m: f"{m['though']}{m['b']}，{m['but']}{m['a']}{m['end']}")
    return _swap_clauses(
        _ALTHOUGH_EN,
        text,
        lambda m: f"{m['though']} {m['b'].strip()}, {m['a'].strip()}{m['end']}",
        both=lambda m: _declarative(m["a"]) and _declarative(m["b"]),
    )


# (hedge, its universal form): a regular expression each, matched in lower case only (a capital "May" is a month),
# or capitalised at the start of a sentence. Where a hedge would not read as a sentence widened ("a few", "the most
# important", "how many", "some 200 people", "不少于", "可能性"), it does not match.
# Words after a hedge that make it a count or a time ("several hundred", "many years ago", "some more"): no claim
# to widen.
_NOT_COUNTED = (
    r"(?! (?:hundreds?|thousands?|millions?|dozens?|more|times|ways|years?|months?|weeks?|days?|hours?|minutes?"
    r"|decades?)\b)"
)
_WIDER_EN = (
    (rf"some(?= (?:of )?[a-z])(?! (?:time|way|one|thing|how|what|where)\b){_NOT_COUNTED}", "all"),
    (rf"(?<!how )(?<!so )(?<!too )(?<!as )(?<!the )many(?= (?:of )?[a-z]){_NOT_COUNTED}", "all"),
    (r"most(?= of\b)", "all"),
    (r"(?<!more )(?<!how )(?<!How )(?<!so )(?<!as )often", "always"),
    (r"usually", "always"),
    (r"sometimes", "always"),
    (r"may(?= (?:be|have|not|also|\w+)\b)(?! \d)", "will"),
    (r"might", "will"),
    (rf"several{_NOT_COUNTED}", "all"),
)
_WIDER_ZH = (
    (r"大部分", "全部"),
    (r"一部分", "全部"),
    (r"(?<![一大二三四五六七八九十第成])部分(?!地)", "全部"),
    (r"(?<![有了点])一些", "所有"),
    (r"大多数", "所有"),
    (r"大多(?!数)", "全都"),
    (r"有些(?=人|地方|时候|国家|公司|学生|患者|专家|企业|城市|情况)", "所有"),
    (r"(?<![所现拥具特固原已只没还独共持占])有的", "所有的"),
    (r"不少(?!于)", "所有"),
    (r"经常(?!性)", "总是"),
    (r"往往", "总是"),
    (r"通常(?!性)", "总是"),
    (r"(?:很|极|有|非常)可能(?!性)", "一定"),
    (r"(?<![不很极有常尽])可能(?!性)", "一定"),
)
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")


def overgeneralise(text: str, lang: str) -> str | None:
    """A limited claim made universal: the first hedge of the answer widened."""
    found = []
    for narrow, wide in _WIDER_EN if lang == "en" else _WIDER_ZH:
        if lang == "zh":
            match = re.search(narrow, text)
            if match:
                found.append((match.start(), match.end(), wide))
            continue
        for match in re.finditer(rf"\b{narrow}\b", text, re.IGNORECASE):
            word = match[0]
            if word.islower():
                found.append((match.start(), match.end(), wide))
                break
            at_start = word[0].isupper() and word[1:].islower() and _SENTENCE_START.search(text[: match.start()])
            if at_start and word.casefold() not in ("may", "might"):
                found.append((match.start(), match.end(), wide.title()))
                break
    if not found:
        return None
    start, end, wide = min(found)
    return text[:start] + wide + text[end:]


_NEGATABLE_EN = re.compile(r"\b(is|was|are|were|can|could|will|would|does|did|has|have|had|should)(?! not\b)(?=\s)")
_NEGATED_EN = re.compile(r"\b(is|was|are|were|can|could|will|would|does|did|has|have|had|should) not\b|\bcannot\b")
_NEGATED_ZH = re.compile(r"不是|没有|不能|不会|并非")
_POSITIVE_ZH = {"不是": "是", "没有": "有", "不能": "能", "不会": "会", "并非": "是"}
_IS_ZH = re.compile(r"(?<![不没但于还就总只凡可要若倒真正或也])是(?!否)")


def negate(text: str, lang: str) -> str | None:
    """The first statement negated, or its negation removed."""
    if lang == "zh":
        negated = _NEGATED_ZH.search(text)
        if negated:
            return text[: negated.start()] + _POSITIVE_ZH[negated[0]] + text[negated.end() :]
        match = _IS_ZH.search(text)
        return None if match is None else text[: match.start()] + "不是" + text[match.end() :]
    negated = _NEGATED_EN.search(text)
    if negated:
        positive = "can" if negated[0] == "cannot" else negated[1]
        return text[: negated.start()] + positive + text[negated.end() :]
    for match in _NEGATABLE_EN.finditer(text):
        following = (
            text[match.end() :].split(None, 1)[0].strip(",.;:!?").casefold() if text[match.end() :].strip() else ""
        )
        if not _negates_well(match[1].casefold(), following):
            continue
        word = "cannot" if match[1] == "can" else f"{match[1]} not"
        return text[: match.start()] + word + text[match.end() :]
    return None


# "has to", "had a", "did the work", "is to": a "not" after them would not read as the statement negated.
_NOT_AFTER = _words(
    "to a an the his her its their our my your this that these those some any no so in on at for with by from of as "
    "well it they he she we you i there here then now than not"
)


def _negates_well(verb: str, following: str) -> bool:
    """Whether "not" after `verb`, before the word `following`, negates the statement as English says it: "has",
    "have" and "had" only as auxiliaries (before a participle), "does" and "did" before a verb."""
    if not following or following in _NOT_AFTER:
        return False
    if verb in ("has", "have", "had"):
        return following.endswith("ed") or following in _PARTICIPLES
    return True


_PARTICIPLES = _words(
    "been done made gone seen won lost built brought held led left kept found told paid sold sent spent begun run "
    "become come got put set cut hit read said thought bought caught taught meant met struck stood understood "
    "taken given written eaten fallen forgotten gotten hidden known shown grown thrown drawn driven risen spoken "
    "stolen chosen broken frozen woken beaten bitten proven shaken sworn torn worn born borne flown blown"
)


def invert(text: str, lang: str) -> str | None:
    """Two numbers, dates or names of the answer, of one kind and different values, swapped."""
    mentions = [m for m in answer_mentions(text, lang) if not m.weak]
    for kind in ("number", "date", "percent", "money", "quantity", "entity"):
        same = [m for m in mentions if m.kind == kind and _alone(text, m, mentions)]
        for n, first in enumerate(same):
            second = next(
                (
                    m
                    for m in same[n + 1 :]
                    if m.value != first.value and m.text != first.text and _apart(text, first, m)
                ),
                None,
            )
            if second is not None:
                return (
                    text[: first.start] + second.text + text[first.end : second.start] + first.text + text[second.end :]
                )
    return None


def _alone(text: str, mention: Any, mentions: list[Any]) -> bool:
    """Whether no other mention touches this one (only spaces or punctuation between) and it is not quoted:
    "William T. Anderson" read as two names is one, and "Step Back in Time" is a title; no part of either is
    swapped."""
    before = text[: mention.start]
    if before.count('"') % 2 or before.count("“") > before.count("”"):
        return False
    for other in mentions:
        if other is mention:
            continue
        gap = text[other.end : mention.start] if other.end <= mention.start else text[mention.end : other.start]
        if len(gap) <= 3 and not re.search(r"\w", gap):
            return False
    return True


def _apart(text: str, first: Any, second: Any) -> bool:
    """Whether two mentions are two things of the sentence, not parts of one name or title ("William T.
    Anderson", "Step Back in Time"): a word of three letters or more, or a Chinese character, stands between."""
    between = text[first.end : second.start]
    return bool(re.search(r"[^\W\d_]{3,}|[\u4e00-\u9fff]", between))


INJECTORS: dict[str, Callable[[str, str], str | None]] = {
    "LCaus.": causal,
    "LConf.": condition,
    "LOthe.": concession,
    "LOver.": overgeneralise,
    "KCont.": negate,
    "KInve.": invert,
}


def inject(row: dict) -> list[dict]:
    """Every injection whose rule applies to the row's answer, one row each."""
    lang = detect_lang(row["answer"])
    made = []
    for error_type, injector in INJECTORS.items():
        changed = injector(row["answer"], lang)
        if changed is None or changed == row["answer"]:
            continue
        made.append(
            {
                **row,
                "id": f"{row['id']}:{error_type.rstrip('.')}",
                "answer": changed,
                "label": "inconsistent",
                "error_type": error_type,
                "injected_into": row["id"],
            }
        )
    return made


LOGIC_TYPES = ("LCaus.", "LConf.", "LOthe.", "LOver.")
MINED_PER_TYPE = 150  # pairs mined from references, per file, language and type


def mined(row: dict, taken: Counter[tuple[str, str]]) -> list[dict]:
    """Pairs cut from the reference where faithful answers rarely hold the structure a logic error needs: a reference
    sentence with a cause, a condition, a concession or a hedge is a faithful answer as it stands, and the same
    sentence with that structure broken is the flawed one."""
    made = []
    for number, sentence in enumerate(split_sentences(row["reference"])):
        lang = detect_lang(sentence)
        if not 12 <= len(sentence) <= 300:
            continue
        for error_type in LOGIC_TYPES:
            if taken[(lang, error_type)] >= MINED_PER_TYPE:
                continue
            changed = INJECTORS[error_type](sentence, lang)
            if changed is None or changed == sentence:
                continue
            taken[(lang, error_type)] += 1
            base = {**row, "id": f"{row['id']}:s{number}", "answer": sentence, "question": None}
            made.append({**base, "label": "consistent", "error_type": None, "mined_for": error_type})
            made.append(
                {
                    **base,
                    "id": f"{row['id']}:s{number}:{error_type.rstrip('.')}",
                    "answer": changed,
                    "label": "inconsistent",
                    "error_type": error_type,
                    "injected_into": base["id"],
                }
            )
            break  # one type a sentence
    return made


# Fields that describe the original answer alone (its sentences' labels and votes, its length): not an injection's.
_OF_THE_ORIGINAL = frozenset(("sentences", "votes", "reference_chars"))


DEV_SHARE = 20  # percent of the train plan's reference groups whose injections make the dev file


def split_of(name: str, row: dict) -> str:
    """`test` for the test plan; for the train plan, `dev` for about DEV_SHARE% of the reference groups (by a
    stable hash of the group), else `train`. A trainer drops the train rows of a dev group (benchmarks/train_head.py
    does), so dev's injected answers, their faithful twins and their originals' references are not trained on."""
    if name == "test":
        return "test"
    group = str(row.get("group") or row["reference"])
    return "dev" if hashlib.sha256(group.encode()).digest()[0] * 100 < DEV_SHARE * 256 else "train"


def build() -> dict[str, list[dict]]:
    files: dict[str, list[dict]] = {"train": [], "dev": [], "test": []}
    for path, name in PLAN:
        counts: Counter[tuple[str, str]] = Counter()
        taken: Counter[tuple[str, str]] = Counter()
        seen_references: set[str] = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            row = {key: value for key, value in json.loads(line).items() if key not in _OF_THE_ORIGINAL}
            if row["label"] != "consistent":
                continue
            split = split_of(name, row)
            for injected in inject(row):
                counts[(detect_lang(row["answer"]), injected["error_type"])] += 1
                files[split].append(injected)
            if row["reference"] not in seen_references:
                seen_references.add(row["reference"])
                files[split].extend(mined(row, taken))
        print(
            f"{path.relative_to(ROOT)}: {dict(sorted(counts.items()))}; mined {dict(sorted(taken.items()))}",
            file=sys.stderr,
        )
    return files


def main() -> int:
    return rebuild_rows(__doc__, build, OUT, "injections")


if __name__ == "__main__":
    sys.exit(main())
