"""Numeric features of an (answer, reference) pair for a classifier, bounded and in a fixed order."""

from __future__ import annotations

import math
import re

from ragfacts.evidence._check import check_mentions
from ragfacts.text import approx_tokens, content_units, split_sentences  # content_units: what share_found_in counts

FEATURE_NAMES: tuple[str, ...] = (
    "n_numbers_answer",
    "n_numbers_unsupported",
    "share_numbers_unsupported",
    "any_number_unsupported",
    "any_date_unsupported",
    "any_amount_unsupported",
    "n_entities_answer",
    "n_entities_unsupported",
    "share_entities_unsupported",
    "any_entity_unsupported",
    "answer_novel_token_share",
    "max_sentence_novel_share",
    "share_sentences_novel",
    "negation_only_in_answer",
    "answer_len_ratio",
    "answer_len_log",
)
_NUMERIC = frozenset({"number", "date", "percent", "quantity", "money"})
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|cannot|without)\b|n't\b|不|没|未|无|非|否|别",
    re.IGNORECASE,
)


def evidence_features(
    answer: str, reference: str, lang: str | None = None, *, chinese_names: bool = False
) -> dict[str, float]:
    """Return the features named in FEATURE_NAMES, in that order: shares and flags in [0, 1], counts as log1p.

    "Numbers" are all numeric mentions (numbers, dates, percentages, quantities, money); "unsupported" are
    those `find_unsupported` reports; a share is 0 when there is nothing to share out. Content is what
    `ragfacts.text.share_found_in` counts: words (function words aside), Chinese character pairs, numbers.

    - n_numbers_answer, n_numbers_unsupported: log1p of the answer's numeric mentions, and of those unsupported.
    - share_numbers_unsupported: the second count over the first.
    - any_number_unsupported, any_date_unsupported, any_amount_unsupported: 1 if a numeric mention, a date,
      or a percentage, quantity or amount of money is unsupported.
    - n_entities_answer, n_entities_unsupported, share_entities_unsupported, any_entity_unsupported: the same
      for names.
    - answer_novel_token_share: the share of the answer's content absent from the reference.
    - max_sentence_novel_share: that share for the answer's most novel sentence.
    - share_sentences_novel: the share of the answer's sentences with more than half their content absent.
    - negation_only_in_answer: 1 if the answer has a negation (not, never, 不, 没 ...) and the reference none.
    - answer_len_ratio: the answer's length over the answer's and the reference's (estimated tokens).
    - answer_len_log: log1p of the answer's length in estimated tokens.

    `chinese_names` is find_unsupported's: keep it the same for every pair a classifier sees.
    """
    checked = check_mentions(answer, reference, lang, chinese_names)
    numbers = [mismatch for mention, mismatch in checked if mention.kind in _NUMERIC]
    entities = [mismatch for mention, mismatch in checked if mention.kind == "entity"]
    bad_numbers = [mismatch for mismatch in numbers if mismatch]
    bad_entities = [mismatch for mismatch in entities if mismatch]
    found = set(content_units(reference))  # once, not once per sentence as share_found_in would
    novel = [_novel_share(sentence, found) for sentence in split_sentences(answer)]
    answer_tokens, reference_tokens = approx_tokens(answer), approx_tokens(reference)
    features = {
        "n_numbers_answer": math.log1p(len(numbers)),
        "n_numbers_unsupported": math.log1p(len(bad_numbers)),
        "share_numbers_unsupported": _share(len(bad_numbers), len(numbers)),
        "any_number_unsupported": float(bool(bad_numbers)),
        "any_date_unsupported": float(any(m.kind == "date" for m in bad_numbers)),
        "any_amount_unsupported": float(any(m.kind in ("percent", "quantity", "money") for m in bad_numbers)),
        "n_entities_answer": math.log1p(len(entities)),
        "n_entities_unsupported": math.log1p(len(bad_entities)),
        "share_entities_unsupported": _share(len(bad_entities), len(entities)),
        "any_entity_unsupported": float(bool(bad_entities)),
        "answer_novel_token_share": _novel_share(answer, found),
        "max_sentence_novel_share": max(novel, default=0.0),
        "share_sentences_novel": _share(sum(share > 0.5 for share in novel), len(novel)),
        "negation_only_in_answer": float(bool(_NEGATION.search(answer)) and not _NEGATION.search(reference)),
        "answer_len_ratio": _share(answer_tokens, answer_tokens + reference_tokens),
        "answer_len_log": math.log1p(answer_tokens),
    }
    return {name: features[name] for name in FEATURE_NAMES}


def feature_vector(answer: str, reference: str, lang: str | None = None, *, chinese_names: bool = False) -> list[float]:
    """Return `evidence_features` as a list in FEATURE_NAMES order."""
    features = evidence_features(answer, reference, lang, chinese_names=chinese_names)
    return [features[name] for name in FEATURE_NAMES]


def _novel_share(text: str, found: set[str]) -> float:
    """The share of `text`'s content absent from the reference: 1 - text.share_found_in(text, reference)."""
    units = content_units(text)
    return sum(unit not in found for unit in units) / len(units) if units else 0.0


def _share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0
