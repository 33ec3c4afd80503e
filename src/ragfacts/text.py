"""Language-aware text helpers: language detection, sentence splitting, quote normalisation, delimiting.

Delimiting untrusted text. Every untrusted text (answer, reference, question, segment, ...) enters a prompt
between `<tag>` and `</tag>` lines (`delimit`). It must not be able to close its block or open another, so in
EVERY text EVERY tag name a prompt uses (`PROMPT_TAGS`) is neutralised: its brackets become `[` and `]` and
the rest is kept, so the judge still reads what the text says (`</answer>` becomes `[/answer]`). Caught:
any case; whitespace, invisible characters, attributes or a self-closing slash inside the brackets; a missing
closing bracket; fullwidth, small and CJK angle brackets (`＜＞ ﹤﹥ 〈〉 ⟨⟩`) and other angle lookalikes;
fullwidth letters and Cyrillic/Greek lookalike letters in the name; `-` for `_`; HTML entities (`&lt;`,
`&#60;`, `&#x3c;`), which models read as brackets; chat-template special tokens of the `<|im_end|>` form, which
a model's server may tokenize as the end of the user's turn. The quotation-mark brackets `‹› «» 《》` count only with a
slash (`‹/answer›`, `《answer/》`): without one they are quotation marks (French « question », Chinese
《书名》), and an opening tag cannot end a block. Text that spells none of our tags is never touched:
`a < b > c`, `<b>bold</b>` and `《红楼梦》` stay as they are.

A model's own special tokens (`</s>`, `[INST]`, `<end_of_turn>`) are known only to the backend that loads it: the
local backend neutralises their texts in every message it sends (`neutralise_special_tokens`), in the same way.

Why neutralising rather than random delimiters (`<answer-7f3a>`): prompts are laid out for prefix reuse (the
reference block is byte-identical in every call for one answer) and the response cache is keyed by the prompt
text, so delimiters would have to be derived from the text anyway; neutralising gives one fixed, readable
layout, keeps every cached reply valid for texts without tags, and leaves nothing to guess: a text cannot
contain our delimiter at all. `delimit` refuses a tag that is not in `PROMPT_TAGS`, so a new prompt cannot use
a tag that other texts are not neutralised against.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_SENTENCE_END = re.compile(
    r"(?<=[。！？；])(?![”’」』）)\]])"  # Chinese end, unless a closing quote/bracket follows
    r"|(?<=[。！？][”’」』])"  # ... in which case after that quote
    r"|(?<=[.!?;])(?=\s)"  # English end followed by a space (keeps 3.5 and e.g.)
    r"|(?<=[.!?][”’\"'])(?=\s)"
    r"|\n+"
)


def detect_lang(text: str) -> str:
    """Return "zh" when Chinese characters dominate the letters of `text`, else "en"."""
    cjk = len(_CJK.findall(text))
    latin_words = len(re.findall(r"[A-Za-z]+", text))
    return "zh" if cjk > 0 and cjk >= latin_words else "en"


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate of a text's tokens: one per CJK character, one per 4 other characters.

    Close enough (±25% on our prompts) for budgeting runs before they start; real counts come from the
    model's replies.
    """
    cjk = 0 if text.isascii() else len(_CJK.findall(text))
    return cjk + -(-(len(text) - cjk) // 4)


# A period that ends these is no sentence end: a title before a name, an initial, a dotted abbreviation ("U.S.",
# "e.g.") unless what follows starts a sentence, a number sign ("No. 5").
_TITLE = re.compile(
    r"(?:^|\s)(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|Gen|Gov|Sen|Rep|Lt|Col|Capt|Mt|Ft|No|Nos|Fig|Vol|pp|approx)\.$"
)
_INITIAL = re.compile(r"(?:^|[\s(])[A-Z]\.$")
_DOTTED = re.compile(r"(?:^|[\s(])(?:[A-Za-z]\.){2,}$")
_STARTER = re.compile(
    r"(?:The|A|An|He|She|It|They|We|I|You|This|That|These|Those|There|His|Her|Its|Their|In|On|At|After|Before|"
    r"But|However|And|So|As|When|While|If|Since|Although|Today|Yet|Also|Then|Other|Some|Many|Most|Both)\b"
)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; knows 。！？； as well as . ! ? ; and line breaks, and that the period of "Dr.",
    of an initial ("J. K. Rowling") or of "U.S. Army" ends no sentence."""
    sentences: list[str] = []
    start, joined = 0, False  # joined: the part before this one ended at a period inside its line
    for boundary in [*_SENTENCE_END.finditer(text), None]:
        end = len(text) if boundary is None else boundary.start()
        part = text[start:end].strip()
        if part:
            if joined and sentences and _continues(sentences[-1], part):
                sentences[-1] = f"{sentences[-1]} {part}"
            else:
                sentences.append(part)
        if boundary is not None:
            start, joined = boundary.end(), boundary.end() == boundary.start()
    return sentences


def _continues(previous: str, part: str) -> bool:
    """Whether `part` goes on the sentence `previous`, which ended at an abbreviation's period, not its own."""
    if not previous.endswith("."):
        return False
    if _TITLE.search(previous):
        return True
    return bool(_INITIAL.search(previous) or _DOTTED.search(previous)) and not _STARTER.match(part)


def clip(text: str, limit: int) -> str:
    """`text` on one line (whitespace runs made one space), cut to `limit` characters with "…" where longer."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def normalise(text: str) -> str:
    """Fold width and case, drop whitespace and punctuation: for matching quotes leniently."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_DROPPED)


class _Dropped(dict[int, int | None]):
    """`str.translate`'s table for `normalise`: whitespace and punctuation map to None (dropped), other characters to
    themselves; each character is classified the first time it is met, then looked up in C."""

    def __missing__(self, code: int) -> int | None:
        char = chr(code)
        value = None if char.isspace() or unicodedata.category(char).startswith("P") else code
        self[code] = value
        return value


_DROPPED = _Dropped()


def quote_found(quote: str, source: str) -> str | None:
    """Return "exact" or "normalised" if `quote` occurs in `source`, else None."""
    quote = quote.strip()
    if not quote:
        return None
    if quote in source:
        return "exact"
    needle = normalise(quote)
    return "normalised" if needle and needle in _normalised(source) else None


@lru_cache(maxsize=256)
def _normalised(source: str) -> str:
    # A reference is searched for every quote of every segment: normalise it once.
    return normalise(source)


# Every tag a prompt wraps untrusted text in: the names passed to `delimit`, which are the prompt templates'
# placeholders (`prompting.render`) and the tags a method delimits by hand (e.g. "reference_answer").
PROMPT_TAGS = frozenset(
    {
        "answer",
        "claim",
        "fact",
        "facts",
        "ground_truth",
        "passage",
        "preceding_sentences",
        "question",
        "reference",
        "reference_answer",
        "segment",
        "segments",
        "sentence",
        "statement",
        "statements",
    }
)

# Texts are matched on a same-length skeleton: each character folded (NFKC, case) and lookalikes mapped to
# the ASCII they imitate, so one plain pattern finds every variant, at the original text's positions.
_ANGLE_OPEN = "<\uff1c\ufe64\u2329\u3008\u27e8\u276e\u276c\u29fc\u02c2\u1438"  # < ＜ ﹤ 〈 〈 ⟨ ❮ ❬ ⧼ ˂ ᐸ
_ANGLE_CLOSE = ">\uff1e\ufe65\u232a\u3009\u27e9\u276f\u276d\u29fd\u02c3\u1433"
_QUOTE_OPEN = "\u2039\u00ab\u300a"  # ‹ « 《
_QUOTE_CLOSE = "\u203a\u00bb\u300b"
_SLASHES = "/\uff0f\u2044\u2215\u29f8\\\uff3c"  # / ／ ⁄ ∕ ⧸ \ ＼
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f"
    "\u2060\u2061\u2062\u2063\u2064\u3164\ufeff\uffa0"
)
_LOOKALIKE_LETTERS = {  # Cyrillic, Greek and IPA letters that pass for the Latin ones of our tag names
    "a": "аɑα",
    "c": "сϲ",
    "d": "ԁ",
    "e": "еҽ",
    "g": "ɡ",
    "h": "һ",
    "i": "іıɩι",
    "j": "ј",
    "l": "ӏ",
    "n": "ո",
    "o": "оοօ",
    "p": "рρ",
    "q": "ԛ",
    "s": "ѕ",
    "u": "սυ",
    "w": "ԝѡ",
    "x": "хχ",
    "y": "уγ",
}
_SKELETON = {
    **{ch: "<" for ch in _ANGLE_OPEN},
    **{ch: ">" for ch in _ANGLE_CLOSE},
    **{ch: "«" for ch in _QUOTE_OPEN},
    **{ch: "»" for ch in _QUOTE_CLOSE},
    **{ch: "/" for ch in _SLASHES},
    **{ch: "\u200b" for ch in _INVISIBLE},
    **{ch: latin for latin, lookalikes in _LOOKALIKE_LETTERS.items() for ch in lookalikes},
}
# A text without any of these (ampersands included, for entities) cannot spell a tag: returned as it is.
_MAY_OPEN = re.compile(f"[{re.escape(_ANGLE_OPEN + _QUOTE_OPEN)}&\uff06\ufe60]")


@cache
def _tag_pattern(tags: frozenset[str]) -> re.Pattern[str]:
    """The pattern of every spelling of `tags` in a skeleton; the groups are the brackets to replace. Compiled when
    a text first may hold a tag (about 10 ms: most runs never need it)."""
    hidden = "\u200b*"
    gap = "[\\s\u200b]*"
    spelled = ("[_-]".join(hidden.join(map(re.escape, word)) for word in tag.split("_")) for tag in tags)
    name = f"(?:{'|'.join(sorted(spelled, key=len, reverse=True))})(?![\\w-])"
    opening = "(?:<|&(?:lt|#0*60|#x0*3c);?)"
    closing = "(?:>|&(?:gt|#0*62|#x0*3e);?)"
    rest = "[^<>«»]{0,100}?"  # attributes, spaces, a self-closing slash
    return re.compile(
        f"(?P<open>{opening}){gap}(?:/{gap})?{name}{rest}(?P<close>{closing})"
        f"|(?P<qopen>«){gap}(?:/{gap}{name}{rest}|{name}{rest}/{gap})(?P<qclose>»)"
        # No closing bracket: only when nothing but invisibles separates bracket and name ("x < answer" is prose).
        f"|(?P<bare>{opening}){hidden}(?:/{hidden})?{name}"
        f"|(?P<qbare>«){hidden}/{hidden}{name}"
        # A chat template's special tokens (<|im_end|>, <|start_header_id|>): a local backend that tokenizes the
        # rendered chat with special tokens on would read them as the end of the user's turn.
        "|(?P<sopen><)\\|[^|<>\\s]{1,40}\\|(?P<sclose>>)"
    )


_REPLACEMENTS = (
    *((opening, "[") for opening in ("open", "qopen", "bare", "qbare", "sopen")),
    *((closing, "]") for closing in ("close", "qclose", "sclose")),
)


@cache
def _fold(ch: str) -> str:
    folded = unicodedata.normalize("NFKC", ch).casefold()
    return _SKELETON.get(folded, folded) if len(folded) == 1 else _SKELETON.get(ch, ch)


@lru_cache(maxsize=256)
def neutralise_tags(text: str) -> str:
    """Return `text` with every spelling of a prompt tag made inert: its brackets replaced by `[` and `]`.

    Cached: a reference is delimited once per stage call of every segment of its answer.
    """
    if not _MAY_OPEN.search(text):
        return text
    skeleton = "".join(map(_fold, text))
    pieces: list[str] = []
    done = 0
    for match in _tag_pattern(PROMPT_TAGS).finditer(skeleton):
        for group, bracket in _REPLACEMENTS:
            start, end = match.span(group)
            if start >= 0:
                pieces += [text[done:start], bracket]
                done = end
    return "".join(pieces) + text[done:] if pieces else text


def delimit(tag: str, text: str) -> str:
    """Wrap untrusted text in <tag>...</tag>, every prompt tag inside it neutralised (see the module docstring).

    Raises:
        ValueError: `tag` is not in PROMPT_TAGS (add it there, so that every text is neutralised against it).
    """
    if tag not in PROMPT_TAGS:
        raise ValueError(f"delimit: unknown tag {tag!r}; add it to ragfacts.text.PROMPT_TAGS")
    return f"<{tag}>\n{neutralise_tags(text)}\n</{tag}>"


# A special token's text made inert: angle brackets become square ones, as `neutralise_tags` does, and square brackets
# round ones; a text without either gets a zero-width space after its first character.
_INERT_BRACKETS = str.maketrans("<>[]", "[]()")


def _inert(match: re.Match[str]) -> str:
    special = match.group()
    inert = special.translate(_INERT_BRACKETS)
    return inert if inert != special else f"{special[0]}\u200b{special[1:]}"


@cache
def _specials_pattern(specials: frozenset[str]) -> re.Pattern[str] | None:
    texts = sorted((text for text in specials if len(text) > 1 and not text.isspace()), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, texts))) if texts else None


def neutralise_special_tokens(text: str, specials: frozenset[str]) -> str:
    """Return `text` with every occurrence of a model's special-token texts (`specials`, e.g. `</s>`, `[INST]`,
    `<end_of_turn>`) made inert, so that a tokenizer reading special tokens in text reads plain characters there.

    Brackets change as in `neutralise_tags` (`</s>` becomes `[/s]`, `<|im_end|>` `[|im_end|]`) and square ones
    become round (`[INST]` becomes `(INST)`); a text without brackets gets a zero-width space after its first
    character. Matching is exact, as a tokenizer's is. Replaced until none is left, for a vocabulary that holds an
    inert form too (`<eos>` and `[eos]`). Blank and one-character texts are not looked for: they cannot be broken
    without breaking the text.
    """
    pattern = _specials_pattern(specials)
    while pattern is not None and pattern.search(text):
        text = pattern.sub(_inert, text)
    return text


# English words that carry no content: a segment made of the answer's content words plus these is still the
# answer's text (pronoun substitution and atomic rewriting add "is", "the", "has", ...).
_FUNCTION_WORDS_LIST = (
    "a an the and or but if so as of in on at to for from by with about into over under than then that this these"
    " those it its is are was were be been being has have had do does did not no can could will would shall should"
    " may might must which who whom whose what when where why how there here also very just only such each every"
    " all any some more most other"
)
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_LIST.split())
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")


def content_units(text: str) -> list[str]:
    """A text's content: Chinese character pairs, other words but function words (first 5 letters), numbers."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    units = [run[i : i + 2] for run in _CJK_RUN.findall(folded) for i in range(max(len(run) - 1, 1))]
    for word in _WORD.findall(_CJK_RUN.sub(" ", folded)):
        if word[0].isdigit():
            units.append(word)
        elif word not in FUNCTION_WORDS and len(word) > 1:
            units.append(word[:5])  # a crude stem: desert/deserts, brew/brewing
    return units


def share_found_in(text: str, source: str) -> float:
    """Return the share of `text`'s content (words, Chinese character pairs, numbers) that `source` contains.

    Order and function words are ignored, so a rewording of `source`'s own words scores high and text from
    elsewhere low. A text with no content (function words and single letters only) scores 1: it asserts nothing
    that `source` could lack.
    """
    units = content_units(text)
    if not units:
        return 1.0
    found = set(content_units(source))
    return sum(unit in found for unit in units) / len(units)
