"""A stratified sample of a labelled dataset: labels and languages in their proportions, error types spread.

Two levels. First the sample is shared among the (label, language) groups in proportion to their sizes, each
group getting at least one item while there is room; then each group's share is spread over its error types
the same way: one item per type first (the largest types first), the rest in proportion. Shares are whole
numbers by Hamilton's method (whole parts, then the largest remainders). Items are drawn within a stratum with
`random.Random(seed)`; the same data, size and seed always give the same sample.

Why two levels: spreading the whole sample over (label, error type) strata at once gives every one of a
set's many error types a seat first, so a small sample of a set with twenty error types comes out almost all
inconsistent, and its accuracy on consistent answers rests on a handful. The language is the row's `lang`
column when it has one, else detected from the answer, so small samples of mixed sets keep both languages.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import TypeVar

from ragfacts.bench.metrics import error_type_name
from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.text import detect_lang

DEFAULT_SEED = 0

K = TypeVar("K", bound=Hashable)  # a group's key


def stratified_sample(dataset: Dataset, size: int, seed: int = DEFAULT_SEED) -> Dataset:
    """`dataset` restricted to a stratified sample of `size` items (all of them if it has no more)."""
    groups: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for item in dataset.items():
        label: str = item.label or "(unlabelled)"
        kind = error_type_name(item.error_type) if item.label == "inconsistent" else "-"
        groups[(label, _language(item))][kind].append(item.id or "")
    sizes = {group: sum(map(len, kinds.values())) for group, kinds in groups.items()}
    chooser = random.Random(seed)
    chosen: set[str] = set()
    strata: dict[str, int] = {}
    for (label, lang), share in sorted(_shares(sizes, size).items()):
        kinds = groups[(label, lang)]
        for kind, quota in sorted(_shares({k: len(ids) for k, ids in kinds.items()}, share).items()):
            chosen.update(chooser.sample(sorted(kinds[kind]), quota))
            strata[f"{label} / {kind} / {lang}"] = quota
    return dataset.select(chosen, {"sample": size, "seed": seed, "strata": strata})


def _shares(sizes: Mapping[K, int], total: int) -> dict[K, int]:
    """`total` shared among groups of these sizes: one each first (largest groups first), the rest in proportion."""
    keys = sorted(sizes, key=str)
    share = dict.fromkeys(keys, 0)
    left = min(total, sum(sizes.values()))
    for key in sorted(keys, key=lambda k: (-sizes[k], str(k))):
        if left and sizes[key]:
            share[key] += 1
            left -= 1
    room = {k: sizes[k] - share[k] for k in keys}
    if left and sum(room.values()):
        exact = {k: left * room[k] / sum(room.values()) for k in keys}
        for k in keys:
            share[k] += int(exact[k])
        rest = left - sum(int(exact[k]) for k in keys)
        by_remainder = sorted(keys, key=lambda k: (-(exact[k] - int(exact[k])), -room[k], str(k)))
        for k in [k for k in by_remainder if share[k] < sizes[k]][:rest]:
            share[k] += 1
    return share


def _language(item: Item) -> str:
    """The item's language: its `lang` column, else detected from the answer."""
    return str(item.meta.get("lang") or detect_lang(item.answer))
