"""Redaction's throughput: what every written text costs (results lines, `--json`, the cache, messages).

Every text ragfacts writes passes `ragfacts.redaction.redact`, which looks for each registered secret, every
8-character run of a long one (a server echoing part of a key) and bearer tokens. It finds them in one pass of an
Aho-Corasick automaton. Beside it, in the same run, the scan it replaced: a regular expression alternating the runs,
then the text lowered to look for "bearer"/"basic". Both on the same 2,000 results-like lines (about 10 MB, English
and Chinese), with a short key (12 characters, as the suite's server key) and an OpenAI-style project key
(56 characters, 49 runs). Best of 3; the output of both is checked to be equal.

    python benchmarks/redaction_speed.py     # about 20 s; writes benchmarks/results/redaction_speed.json
"""

from __future__ import annotations

import json
import random
import re
import string
import sys
import time
from pathlib import Path
from typing import Any

from ragfacts import redaction

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance

ROOT = Path(__file__).resolve().parents[1]
LINES = 2_000
KEYS = {
    "short key (12 characters)": "sk-benchmark",
    "project key (56 characters)": "sk-proj-"
    + "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=48)),
}
TEXT_EN = (
    "The Nile flows north through Egypt into the Mediterranean Sea. Heavy rain in the Ethiopian highlands swells "
    "the river every summer, so the valley used to flood in August and September. "
)
TEXT_ZH = "尼罗河向北流经埃及，注入地中海。埃塞俄比亚高原的夏季降雨使河水上涨，河谷因此在八月和九月泛滥。"


def lines() -> list[str]:
    """Results-like lines: an item, a reasoning per stage, hashes and numbers, about 5 kB each."""
    rows = []
    for n in range(LINES):
        text = TEXT_ZH if n % 3 == 0 else TEXT_EN
        row = {
            "v": 1,
            "id": f"a{n}",
            "content_hash": f"{n:032x}",
            "item": {"answer": text * 2, "reference": text * 8, "question": f"Why did it flood (case {n})?"},
            "result": {"segments": [{"reasoning": text * 2, "verdict": "consistent"} for _ in range(4)]},
            "usage": {"calls": 5, "prompt_tokens": 2566, "completion_tokens": 369},
        }
        rows.append(json.dumps(row, ensure_ascii=False))
    return rows


class RegexScan:
    """The scan `redact` used before: forms by `in`, the runs by one alternation, the text lowered for the schemes."""

    def __init__(self, secret: str) -> None:
        forms = {secret, json.dumps(secret)[1:-1]}
        self.forms = sorted(forms, key=len, reverse=True)
        self.grams = frozenset(secret[i : i + 8] for i in range(len(secret) - 7))
        self.any_gram = re.compile("|".join(map(re.escape, sorted(self.grams))))
        self.word = re.compile(r"[A-Za-z0-9_.~+/=-]{8,}")
        self.bearer = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")

    def redact(self, text: str) -> str:
        for form in self.forms:
            if form in text:
                text = text.replace(form, "[redacted]")
        if self.any_gram.search(text):
            text = self.word.sub(lambda m: "[redacted]" if self._fragment(m.group(0)) else m.group(0), text)
        lowered = text.lower()
        if "bearer" not in lowered and "basic" not in lowered:
            return text
        return self.bearer.sub(lambda m: f"{m.group(1)} [redacted]", text)

    def _fragment(self, word: str) -> bool:
        return any(word[i : i + 8] in self.grams for i in range(len(word) - 7))


def best(function: Any, texts: list[str]) -> tuple[float, list[str]]:
    times, out = [], []
    for _ in range(3):
        started = time.perf_counter()
        out = [function(text) for text in texts]
        times.append(time.perf_counter() - started)
    return min(times), out


def main() -> None:
    texts = lines()
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    found = []
    for name, key in KEYS.items():
        redaction.reset()
        redaction.register(key)
        echoed = [
            f'{t[:-1]}, "error": "Incorrect API key provided: {key[:14]}****"}}' if i % 50 == 0 else t
            for i, t in enumerate(texts)
        ]  # a few lines with a partial echo of the key
        ours, ours_out = best(redaction.redact, echoed)
        regex, regex_out = best(RegexScan(key).redact, echoed)
        assert ours_out == regex_out, "the two scans disagree"
        assert sum("[redacted]" in t for t in ours_out) == LINES // 50
        found.append(
            {
                "key": name,
                "runs": len(key) - 7,
                "megabytes": round(megabytes, 1),
                "automaton_s": round(ours, 3),
                "regex_s": round(regex, 3),
                "automaton_mb_per_s": round(megabytes / ours),
                "regex_mb_per_s": round(megabytes / regex),
                "speed_up": round(regex / ours, 1),
            }
        )
        print(json.dumps(found[-1]), flush=True)
    redaction.reset()
    out = ROOT / "benchmarks" / "results" / "redaction_speed.json"
    out.write_text(
        json.dumps(
            {
                "provenance": provenance(data={"lines (redaction_speed.lines)": "\n".join(texts).encode()}),
                "command": "python benchmarks/redaction_speed.py",
                "lines": LINES,
                "rows": found,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
