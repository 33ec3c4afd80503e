"""Which records a build takes, and in what order: the references it may not share with held-out files, seeded
samples capped per group, label-balanced samples, and an order in which every prefix of a file is a proportional mix.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from corpus_records import LABELS
from pinned import SourceError

# A reference line (paragraph) of at least this many characters that also occurs in a held-out reference marks a
# shared document even when the references differ (e.g. one evidence passage of several).
MIN_SHARED_SEGMENT_CHARS = 40

_Held = TypeVar("_Held", bound="HeldOut")


def reference_lines(reference: str) -> set[str]:
    """The lines of ``reference`` of at least MIN_SHARED_SEGMENT_CHARS characters, stripped."""
    return {s.strip() for s in reference.split("\n") if len(s.strip()) >= MIN_SHARED_SEGMENT_CHARS}


def read_records(paths: Iterable[Path]) -> list[dict]:
    """The records of JSONL files, in order; fails naming a missing file."""
    records: list[dict] = []
    for path in paths:
        if not path.is_file():
            raise SourceError(f"{path} is missing: the build is defined against it")
        records.extend(json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip())
    return records


class HeldOut:
    """Reference texts, reference lines and ids of records (e.g. the quality corpus's dev and test) that new records
    may not share."""

    def __init__(self, records: Iterable[dict]) -> None:
        self.records = list(records)
        self.references = {r["reference"] for r in self.records}
        self.segments: set[str] = set()
        for r in self.records:
            self.segments |= reference_lines(r["reference"])
        self.ids = {r["id"] for r in self.records}
        self._long = sorted(r for r in self.references if len(r) >= MIN_SHARED_SEGMENT_CHARS)

    @classmethod
    def of_files(cls: type[_Held], paths: Iterable[Path]) -> _Held:
        """The held-out records of JSONL files (``read_records``)."""
        return cls(read_records(paths))

    def shares_text(self, reference: str) -> bool:
        """True if ``reference`` is a held reference or has a line of one."""
        return reference in self.references or bool(reference_lines(reference) & self.segments)

    def overlaps(self, reference: str) -> bool:
        """True if a held reference of at least MIN_SHARED_SEGMENT_CHARS characters contains ``reference`` or is
        contained in it (e.g. one passage of several)."""
        return any(ref in reference or reference in ref for ref in self._long)

    def shares(self, reference: str) -> bool:
        """True if ``reference`` is, has a line of, contains or is contained in a held reference."""
        return self.shares_text(reference) or self.overlaps(reference)


def capped_sample(
    pool: list[dict], rng: random.Random, n: int, cap: int, taken: Counter[str] | None = None
) -> list[dict]:
    """Up to ``n`` items of ``pool`` (sorted by id, then shuffled), at most ``cap`` per group.

    ``taken`` counts the items already taken per group, across calls that share it; it is updated.
    """
    taken = Counter() if taken is None else taken
    pool = sorted(pool, key=lambda it: it["id"])
    rng.shuffle(pool)
    chosen: list[dict] = []
    for item in pool:
        if len(chosen) == n:
            break
        if taken[item["group"]] >= cap:
            continue
        taken[item["group"]] += 1
        chosen.append(item)
    return chosen


def available(pool: list[dict], cap: int) -> int:
    """How many items of ``pool`` a sample capped at ``cap`` per group can take."""
    return sum(min(cap, k) for k in Counter(item["group"] for item in pool).values())


def balanced(pools: dict[str, list[dict]], rng: random.Random, per_label: int, cap: int) -> list[dict]:
    """Equal numbers of consistent and inconsistent items (up to ``per_label``, as many as both pools allow), at
    most ``cap`` per group and label."""
    n = min(per_label, *(available(pools[label], cap) for label in LABELS))
    chosen: list[dict] = []
    for label in LABELS:
        chosen.extend(capped_sample(pools[label], rng, n, cap))
    return chosen


def interleave(items: list[dict], stratum: Callable[[dict], str], seed: str) -> list[dict]:
    """Order so that every prefix is a proportional mix of the (stratum, label) strata: a weighted round robin.

    Each stratum, sorted by id, is shuffled with ``random.Random(f"{seed}:{stratum}:{label}")``; item j of a stratum
    of n items gets the position key (j + 0.5) / n, and the items are sorted by that key (ties by stratum, then id).
    Any prefix therefore holds every stratum in proportion to its size, within one item.
    """
    strata: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for item in items:
        strata[(stratum(item), item["label"])].append(item)
    keyed = []
    for key in sorted(strata):
        members = sorted(strata[key], key=lambda it: it["id"])
        random.Random(f"{seed}:{key[0]}:{key[1]}").shuffle(members)
        keyed.extend(((j + 0.5) / len(members), key, item["id"], item) for j, item in enumerate(members))
    keyed.sort(key=lambda k: k[:3])
    return [k[3] for k in keyed]
