"""Matching candidate first tokens to verdict labels, for log-probability scoring."""

from __future__ import annotations

from collections.abc import Iterable


def match_label_logprobs(labels: list[str], candidates: Iterable[tuple[str, float]]) -> dict[str, float | None]:
    """Return, per label, the best log-probability among first tokens that begin it ("Y" or "Yes" for "Yes").

    Tokenisers differ ("Yes", " Yes", "yes"); a candidate counts for a label when its stripped text is
    a non-empty, case-sensitive prefix of the label. Unseen labels get None.
    """
    found: dict[str, float | None] = dict.fromkeys(labels)
    for token, logprob in candidates:
        text = token.strip()
        if not text:
            continue
        for label in labels:
            best = found[label]
            if label.startswith(text) and (best is None or logprob > best):
                found[label] = logprob
    return found
