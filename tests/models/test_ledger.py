"""The usage ledger: every completion counted per stage; a sink told of paid calls at once, of cache hits in sums."""

from __future__ import annotations

from ragfacts.models.ledger import UsageLedger
from ragfacts.usage import Usage

PAID = Usage(completions=1, calls=1, prompt_tokens=10, completion_tokens=2)
FAILED = Usage(completions=1, failures=1)
HIT = Usage(completions=1, cache_hits=1)


def test_a_paid_call_and_a_failure_reach_the_sink_at_once():
    told: list[tuple[str, Usage]] = []
    ledger = UsageLedger()
    ledger.attach(lambda stage, usage: told.append((stage, usage)))
    ledger.add("fact", PAID)
    ledger.add("logic", FAILED)
    assert told == [("fact", PAID), ("logic", FAILED)]


def test_cache_hits_reach_the_sink_summed_per_stage_and_all_of_them_by_the_time_it_is_detached():
    told: list[tuple[str, Usage]] = []
    ledger = UsageLedger()
    ledger.attach(lambda stage, usage: told.append((stage, usage)))
    for _ in range(UsageLedger.HITS_PER_LINE + 3):
        ledger.add("fact", HIT)
    ledger.add("logic", HIT)
    ledger.add("fact", PAID)
    assert [(stage, usage.cache_hits) for stage, usage in told] == [("fact", UsageLedger.HITS_PER_LINE), ("fact", 0)]
    ledger.attach(None)
    assert [(stage, usage.cache_hits) for stage, usage in told[2:]] == [("fact", 3), ("logic", 1)]
    told_total = Usage.sum(usage for _, usage in told)
    assert told_total == ledger.total() and told_total.cache_hits == UsageLedger.HITS_PER_LINE + 4


def test_a_sink_attached_later_is_told_what_was_counted_before_it_once():
    told: list[tuple[str, Usage]] = []
    ledger = UsageLedger()
    ledger.add("fact", PAID)
    ledger.add("fact", HIT)
    ledger.attach(lambda stage, usage: told.append((stage, usage)))
    ledger.attach(None)
    ledger.attach(lambda stage, usage: told.append((stage, usage)))
    assert len(told) == 1 and told[0][1] == Usage.sum([PAID, HIT])
