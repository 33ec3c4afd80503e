"""Build benchmarks/data/injections/: flawed answers made by rules from faithful ones, one Face4RAG error type each.

Face4RAG builds its benchmark by injecting each error type of its typology into faithful answers (§3.2). Where a
rule makes the error exactly, it is made here, in English and in Chinese, on the faithful answers of the train
split (training data) and of the test split (to measure, per type, the share a judge catches). Each injected
answer keeps its original's reference, question, source, licence and task, and says its `error_type`:

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

import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

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
    (DATA / "quality" / "test.jsonl", "test"),
)

_END = r"(?P<end>[。！？.!?]|$)"
_CLAUSE_ZH = r"[^，,。！？；;]+?"
_CLAUSE_EN = r"[^,.;!?]+?"


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lower_first(text: str) -> str:
    """The first word lower-cased, unless it is a name or an acronym (a capital after its first letter, or a word
    other than the common sentence openers)."""
    first = text.split(" ", 1)[0]
    openers = {"The", "A", "An", "It", "This", "That", "These", "Those", "There", "They", "He", "She", "We", "Its"}
    return text[:1].lower() + text[1:] if first in openers else text


def _swap_clauses(pattern: re.Pattern[str], text: str, build: Callable[[re.Match[str]], str]) -> str | None:
    match = pattern.search(text)
    if match is None:
        return None
    changed = text[: match.start()] + build(match) + text[match.end() :]
    return changed if changed != text else None


_CAUSE_ZH = re.compile(
    rf"(?P<because>因为|由于)(?P<a>{_CLAUSE_ZH})[，,](?P<so>所以|因此|因而|从而)(?P<b>{_CLAUSE_ZH}){_END}"
)
_SO_ZH = re.compile(rf"(?P<a>{_CLAUSE_ZH})[，,](?P<so>所以|因此|因而|从而|于是)(?P<b>{_CLAUSE_ZH}){_END}")
_DUE_ZH = re.compile(rf"(?P<because>因为|由于)(?P<a>{_CLAUSE_ZH})[，,](?P<b>{_CLAUSE_ZH}){_END}")
_CAUSE_EN_BECAUSE = re.compile(rf"(?P<a>\b[A-Z]{_CLAUSE_EN}) because (?P<b>{_CLAUSE_EN})(?P<end>[.!?])")
_CAUSE_EN_SO = re.compile(
    rf"(?P<a>\b[A-Z]{_CLAUSE_EN})(?P<so>, so |; therefore,? |, therefore,? |; thus,? |, which is why )"
    rf"(?P<b>{_CLAUSE_EN})(?P<end>[.!?])"
)


def causal(text: str, lang: str) -> str | None:
    """Cause and effect swapped."""
    if lang == "zh":
        return (
            _swap_clauses(_CAUSE_ZH, text, lambda m: f"{m['because']}{m['b']}，{m['so']}{m['a']}{m['end']}")
            or _swap_clauses(_SO_ZH, text, lambda m: f"{m['b']}，{m['so']}{m['a']}{m['end']}")
            or _swap_clauses(_DUE_ZH, text, lambda m: f"{m['because']}{m['b']}，{m['a']}{m['end']}")
        )
    swapped = _swap_clauses(
        _CAUSE_EN_BECAUSE,
        text,
        lambda m: f"{_upper_first(m['b'].strip())} because {_lower_first(m['a'].strip())}{m['end']}",
    )
    if swapped is not None:
        return swapped
    return _swap_clauses(
        _CAUSE_EN_SO,
        text,
        lambda m: f"{_upper_first(m['b'].strip())}{m['so']}{_lower_first(m['a'].strip())}{m['end']}",
    )


_IF_ZH = re.compile(rf"(?P<if>如果|假如|若)(?P<a>{_CLAUSE_ZH})[，,](?P<then>那么|就|则)?(?P<b>{_CLAUSE_ZH}){_END}")
_ONLY_ZH = re.compile(r"只有(?P<a>[^，,。！？]+?)[，,]?才")
_IF_EN = re.compile(rf"\b(?P<if>If|if) (?P<a>{_CLAUSE_EN}), (?P<then>then )?(?P<b>{_CLAUSE_EN})(?P<end>[.!?])")
_ONLY_EN = re.compile(r"\bonly if\b")


def condition(text: str, lang: str) -> str | None:
    """A necessary condition made sufficient, or the two sides of a condition swapped."""
    if lang == "zh":
        made = _ONLY_ZH.sub(lambda m: f"只要{m['a']}，就", text, count=1)
        if made != text:
            return made
        return _swap_clauses(
            _IF_ZH, text, lambda m: f"{m['if']}{m['b'].replace('就', '', 1)}，{m['then'] or '就'}{m['a']}{m['end']}"
        )
    made = _ONLY_EN.sub("if", text, count=1)
    if made != text:
        return made
    return _swap_clauses(
        _IF_EN, text, lambda m: f"{m['if']} {m['b'].strip()}, {m['then'] or ''}{m['a'].strip()}{m['end']}"
    )


_ALTHOUGH_ZH = re.compile(
    rf"(?P<though>虽然|尽管)(?P<a>{_CLAUSE_ZH})[，,](?P<but>但是|但|却|可是)(?P<b>{_CLAUSE_ZH}){_END}"
)
_ALTHOUGH_EN = re.compile(
    rf"\b(?P<though>Although|Though|although|though) (?P<a>{_CLAUSE_EN}), (?P<b>{_CLAUSE_EN})(?P<end>[.!?])"
)


def concession(text: str, lang: str) -> str | None:
    """The two sides of a concession swapped."""
    if lang == "zh":
        return _swap_clauses(_ALTHOUGH_ZH, text, lambda m: f"{m['though']}{m['b']}，{m['but']}{m['a']}{m['end']}")
    return _swap_clauses(_ALTHOUGH_EN, text, lambda m: f"{m['though']} {m['b'].strip()}, {m['a'].strip()}{m['end']}")


_WIDER_EN = (
    ("some", "all"),
    ("many", "all"),
    ("most", "all"),
    ("often", "always"),
    ("usually", "always"),
    ("sometimes", "always"),
    ("may", "will"),
    ("might", "will"),
    ("several", "all"),
    ("few", "no"),
)
_WIDER_ZH = (
    ("部分", "全部"),
    ("一些", "所有"),
    ("有些", "所有"),
    ("有的", "所有的"),
    ("不少", "所有"),
    ("经常", "总是"),
    ("往往", "总是"),
    ("通常", "总是"),
    ("可能", "一定"),
    ("大多", "全都"),
    ("大部分", "全部"),
)


def overgeneralise(text: str, lang: str) -> str | None:
    """A limited claim made universal: the first hedge of the answer widened."""
    pairs = _WIDER_EN if lang == "en" else _WIDER_ZH
    found = []
    for narrow, wide in pairs:
        pattern = re.compile(rf"\b{narrow}\b", re.IGNORECASE) if lang == "en" else re.compile(re.escape(narrow))
        match = pattern.search(text)
        if match:
            found.append((match.start(), match.end(), wide if match[0][0].islower() or lang == "zh" else wide.title()))
    if not found:
        return None
    start, end, wide = min(found)
    return text[:start] + wide + text[end:]


_NEGATABLE_EN = re.compile(r"\b(is|was|are|were|can|could|will|would|does|did|has|have|had|should)(?! not\b)(?=\s)")
_NEGATED_EN = re.compile(r"\b(is|was|are|were|can|could|will|would|does|did|has|have|had|should) not\b|\bcannot\b")
_NEGATED_ZH = re.compile(r"不是|没有|不能|不会|并非")
_POSITIVE_ZH = {"不是": "是", "没有": "有", "不能": "能", "不会": "会", "并非": "是"}
_IS_ZH = re.compile(r"(?<![不没但于还就总只凡可要若倒真正或也])是")


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
    match = _NEGATABLE_EN.search(text)
    if match is None:
        return None
    word = "cannot" if match[1] == "can" else f"{match[1]} not"
    return text[: match.start()] + word + text[match.end() :]


def invert(text: str, lang: str) -> str | None:
    """Two numbers, dates or names of the answer, of one kind and different values, swapped."""
    mentions = [m for m in answer_mentions(text, lang) if not m.weak]
    for kind in ("number", "date", "percent", "money", "quantity", "entity"):
        same = [m for m in mentions if m.kind == kind]
        for n, first in enumerate(same):
            second = next((m for m in same[n + 1 :] if m.value != first.value and m.text != first.text), None)
            if second is not None:
                return (
                    text[: first.start] + second.text + text[first.end : second.start] + first.text + text[second.end :]
                )
    return None


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


def build() -> dict[str, list[dict]]:
    files: dict[str, list[dict]] = {"train": [], "test": []}
    for path, name in PLAN:
        counts: Counter[tuple[str, str]] = Counter()
        taken: Counter[tuple[str, str]] = Counter()
        seen_references: set[str] = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["label"] != "consistent":
                continue
            for injected in inject(row):
                counts[(detect_lang(row["answer"]), injected["error_type"])] += 1
                files[name].append(injected)
            if row["reference"] not in seen_references:
                seen_references.add(row["reference"])
                files[name].extend(mined(row, taken))
        print(
            f"{path.relative_to(ROOT)}: {dict(sorted(counts.items()))}; mined {dict(sorted(taken.items()))}",
            file=sys.stderr,
        )
    return files


def main() -> int:
    return rebuild_rows(__doc__, build, OUT, "injections")


if __name__ == "__main__":
    sys.exit(main())
