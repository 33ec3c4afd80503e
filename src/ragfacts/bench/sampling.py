"""A stratified sample of a labelled dataset: every (label, error type, language) stratum represented, a fixed seed.

The language is the row's `lang` column when it has one, else detected from the answer: small samples of
mixed-language sets keep both languages, so per-language figures have items to stand on.

Each stratum first gets one item (while the sample has room), then the rest is shared in proportion to what
the strata have left (Hamilton's method: whole shares, then the largest remainders); items are drawn within a
stratum with `random.Random(seed)`.
The same data, size and seed always give the same sample.
"""

from __future__ import annotations

import random
from collections import defaultdict

from ragfacts.bench.metrics import error_type_name
from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.text import detect_lang

DEFAULT_SEED = 0


def stratified_sample(dataset: Dataset, size: int, seed: int = DEFAULT_SEED) -> Dataset:
    """`dataset` restricted to a stratified sample of `size` items (all of them if it has no more)."""
    strata: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for item in dataset.items():
        label = item.label or "(unlabelled)"
        kind = error_type_name(item.error_type) if item.label == "inconsistent" else "-"
        strata[(label, kind, _language(item))].append(item.id or "")
    keys = sorted(strata)
    quota = dict.fromkeys(keys, 0)
    left = min(size, sum(len(ids) for ids in strata.values()))
    for key in sorted(keys, key=lambda k: -len(strata[k])):
        if left and quota[key] < len(strata[key]):
            quota[key] += 1
            left -= 1
    room = {k: len(strata[k]) - quota[k] for k in keys}
    total = sum(room.values())
    if left and total:
        shares = {k: left * room[k] / total for k in keys}
        for k in keys:
            quota[k] += int(shares[k])
        rest = left - sum(int(shares[k]) for k in keys)
        by_remainder = sorted(keys, key=lambda k: (-(shares[k] - int(shares[k])), -room[k], k))
        for k in [k for k in by_remainder if quota[k] < len(strata[k])][:rest]:
            quota[k] += 1
    chooser = random.Random(seed)
    chosen = {item_id for key in keys for item_id in chooser.sample(sorted(strata[key]), quota[key])}
    how = {"sample": size, "seed": seed, "strata": {" / ".join(key): quota[key] for key in keys}}
    return dataset.select(chosen, how)


def _language(item: Item) -> str:
    """The item's language: its `lang` column, else detected from the answer."""
    return str(item.meta.get("lang") or detect_lang(item.answer))
