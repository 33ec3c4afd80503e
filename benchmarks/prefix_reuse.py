"""Prefix reuse: what llama.cpp's KV prefix match saves on one answer in paper mode, and what a provider could cache.

Measured (the model part): one answer judged by `lface4rag:strategy=paper` (1 decomposition + a fact and a logic
call per segment) on the embedded model, with llama.cpp reusing the KV cache of the prefix shared with the
previous request, and without (`Llama.reset()` before every request, done here in the benchmark). Per run:
calls, prompt tokens, prompt tokens really evaluated, prompt-evaluation time, generated tokens, generation time,
sampling time, total time; whether both runs gave the same segments and verdicts; the speed-ups. Runs alternate
(with, without, without, with, ...) after one warm-up request, so neither mode always goes first.

Computed (no model, the GGUF's vocabulary only): for the calls of one answer in paper mode, the share of prompt
tokens in a prefix identical to an earlier call's. Prompts are rendered by the product's own path
(`ChatModel.complete` on a model that records requests and sends none); the stand-in segments are the answer's
sentences, or the segments of the timed run for its item. Rules, per call i of one answer, in sending order:
  - local (llama.cpp): the common prefix with call i-1 only (one KV sequence, any length);
  - any earlier call: the longest common prefix with any call j < i;
  - provider (OpenAI's published rule): that prefix counts only from 1,024 tokens, in whole steps of 128
    (cached = floor(prefix / 128) * 128 if prefix >= 1024, else 0); an upper bound: it assumes each call is
    sent after the previous one finished (concurrent requests miss a cache that is not written yet).
Two layouts: `schema_last` is what ragfacts sends when the schema is in the prompt (llama.cpp grammar,
json_text, `-M schema_in_prompt=true`): the schema text closes the user message. `schema_first` is OpenAI's
structured outputs (json_schema or tools), whose schema "serves as a prefix to the system message": the schema
JSON comes before the messages, so calls of different stages (fact, logic) share nothing. A third layout is a
what-if, not what ragfacts sends: `what_if_segment_last_by_stage` moves each call's segment after the schema
text and sends the calls grouped by stage (decomposition, every fact call, every logic call), so consecutive
calls share everything but their segment. Token counts are the embedded model's (Qwen2.5), a proxy for a
provider's tokenizer.

What-if, timed (unless --no-replay): the requests of the first run with reuse are sent again to the model, from an
empty KV cache with reuse on, once as sent and once with each segment moved last and the calls grouped by
stage; the prompt evaluation of the two is compared (the moved segment may change the replies, so not totals).

    python benchmarks/prefix_reuse.py                    # both parts, ~25 min on 2 cores
    python benchmarks/prefix_reuse.py --no-model         # the cacheable shares only, ~1 min
    python benchmarks/prefix_reuse.py --repeats 2 --item faithbench-en-110008
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llama_cpp
from _llama_timing import CallTimer, chat_tokens, common_prefix, totals
from _provenance import elapsed, files, provenance

from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.methods.base import create_method
from ragfacts.methods.lface4rag import CheckResult
from ragfacts.models import (
    ChatModel,
    Message,
    ModelOptions,
    RawReply,
    Request,
    StructuredMode,
    UsageLedger,
    build_model,
    parse_spec,
)
from ragfacts.models.local.embedded import ensure_default_model
from ragfacts.models.spec import ragfacts_home
from ragfacts.models.structured import strict_schema
from ragfacts.text import detect_lang, split_sentences

DATA = Path(__file__).parent / "data" / "quality" / "dev.jsonl"
METHOD = "lface4rag:strategy=paper"
CACHE_MIN, CACHE_STEP = 1024, 128  # OpenAI: prompts of 1,024 tokens or more, cache hits in steps of 128
_SEGMENT = re.compile(r"<segment>\n.*?\n</segment>", re.DOTALL)


class PromptRecorder(ChatModel):
    """Renders each request exactly as ragfacts would send it, and sends none.

    It answers the decomposition with `segments` (so the per-segment calls follow) and every other request
    with an empty object, which fails validation: with no re-asks, each call is recorded once.
    """

    backend = "recorder"
    default_mode = StructuredMode.JSON_TEXT

    def __init__(self, schema_in_prompt: bool) -> None:
        super().__init__("recorder", ModelOptions(schema_in_prompt=schema_in_prompt, reasks=0, max_retries=0))
        self.segments: list[str] = []
        self.sent: list[Sent] = []

    async def _send(self, request: Request) -> RawReply:
        name = request.schema_name
        self.sent.append(Sent(name, [m.model_dump() for m in request.messages], request.schema or {}))
        return RawReply(text=json.dumps({"segments": self.segments}) if name == "Decomposition" else "{}")


@dataclass
class Sent:
    """One request as sent: the schema's name (the stage), the messages, the JSON schema."""

    schema_name: str
    messages: list[dict[str, str]]
    schema: dict[str, Any]


async def rendered_calls(item: Item, segments: list[str], *, schema_in_prompt: bool) -> list[Sent]:
    """The requests of one answer in paper mode, in sending order, with `segments` as its decomposition."""
    recorder = PromptRecorder(schema_in_prompt)
    recorder.segments = segments
    await create_method(METHOD).evaluate(item, recorder)
    return recorder.sent


def shares(prompts: list[list[int]]) -> dict[str, Any]:
    """Prompt tokens and the shares reusable under each rule (see the module docstring)."""
    total = sum(len(p) for p in prompts)
    local = any_earlier = provider = 0
    for i, tokens in enumerate(prompts):
        if i == 0:
            continue
        local += common_prefix(prompts[i - 1], tokens)
        longest = max(common_prefix(p, tokens) for p in prompts[:i])
        any_earlier += longest
        provider += (longest // CACHE_STEP) * CACHE_STEP if longest >= CACHE_MIN else 0
    return {
        "calls": len(prompts),
        "prompt_tokens": total,
        "local_share": round(local / total, 3),
        "any_earlier_share": round(any_earlier / total, 3),
        "provider_share": round(provider / total, 3),
    }


def segment_last(request: Sent) -> Sent:
    """The request with its delimited segment moved to the very end of the prompt (after the schema text)."""
    last = request.messages[-1]
    moved = {**last, "content": segment_moved_last(last["content"])}
    return Sent(request.schema_name, [*request.messages[:-1], moved], request.schema)


def segment_moved_last(content: str) -> str:
    found = _SEGMENT.search(content)
    if found is None:
        return content
    return content[: found.start()] + content[found.end() :].lstrip("\n") + "\n\n" + found.group(0)


async def answer_shares(vocab: Any, item: Item, segments: list[str]) -> dict[str, Any]:
    """The shares of one answer for each layout (see the module docstring)."""
    last = await rendered_calls(item, segments, schema_in_prompt=True)
    first = await rendered_calls(item, segments, schema_in_prompt=False)
    stage_order = {name: i for i, name in enumerate(dict.fromkeys(r.schema_name for r in last))}
    regrouped = sorted((segment_last(r) for r in last), key=lambda r: stage_order[r.schema_name])
    return {
        "schema_last": shares([chat_tokens(vocab, r.messages) for r in last]),
        "schema_first": shares(
            [
                vocab.tokenize(json.dumps(strict_schema(r.schema), ensure_ascii=False).encode(), add_bos=False)
                + chat_tokens(vocab, r.messages)
                for r in first
            ]
        ),
        "what_if_segment_last_by_stage": shares([chat_tokens(vocab, r.messages) for r in regrouped]),
    }


async def cacheable(vocab: Any, items: list[Item]) -> dict[str, Any]:
    """Mean shares per language over `items`, the sentences standing in for the decomposition."""
    per_item = [(item, await answer_shares(vocab, item, split_sentences(item.answer))) for item in items]
    report: dict[str, Any] = {}
    for lang in sorted({detect_lang(item.answer) for item, _ in per_item}):
        rows = [s for item, s in per_item if detect_lang(item.answer) == lang]
        report[lang] = {"answers": len(rows)}
        for layout in rows[0]:
            report[lang][layout] = {
                key: round(statistics.mean(r[layout][key] for r in rows), 3)
                for key in ("calls", "prompt_tokens", "local_share", "any_earlier_share", "provider_share")
            }
            report[lang][layout]["answers_with_provider_hits"] = sum(r[layout]["provider_share"] > 0 for r in rows)
    return report


async def timed_runs(gguf: Path, item: Item, repeats: int, max_tokens: int | None, *, replay: bool) -> dict[str, Any]:
    """Judge `item` in paper mode `repeats` times with prefix reuse and as many without."""
    options = ModelOptions() if max_tokens is None else ModelOptions(max_tokens=max_tokens)
    model = build_model(parse_spec(f"local:{gguf}"), options)
    started = time.perf_counter()
    timer = CallTimer(model)  # type: ignore[arg-type]
    load_s = time.perf_counter() - started
    await model.complete([Message(role="user", content="Hi")], max_tokens=1)  # warm-up: first-touch page faults
    runs: list[dict[str, Any]] = []
    first_reuse_run: tuple[list[dict[str, Any]], list[str]] | None = None  # its requests and their stages
    for repeat in range(repeats):
        for reuse in (True, False) if repeat % 2 == 0 else (False, True):
            timer.reuse_prefix = reuse
            timer.calls = []
            model.ledger = UsageLedger()
            started = time.perf_counter()
            result: CheckResult = await create_method(METHOD).evaluate(item, model)
            wall = time.perf_counter() - started
            runs.append(
                {
                    "reuse_prefix": reuse,
                    "wall_s": round(wall, 2),
                    **totals(timer.calls),
                    "by_stage": {s: totals([c for c in timer.calls if c.stage == s]) for s in _stages(timer.calls)},
                    "calls_detail": [c.record() for c in timer.calls],
                    "label": result.label.value,
                    "segments": [s.text for s in result.segments],
                    "verdicts": [[s.fact.verdict, s.logic.verdict if s.logic else None] for s in result.segments],
                    "failures": result.usage.failures,
                }
            )
            print(f"reuse={reuse}: {runs[-1]['wall_s']} s, {runs[-1]['calls']} calls", file=sys.stderr, flush=True)
            if reuse and first_reuse_run is None:
                first_reuse_run = (timer.requests[-len(timer.calls) :], [c.stage for c in timer.calls])
    report = {"load_s": round(load_s, 2), "runs": runs, "comparison": _compare(runs)}
    if replay and first_reuse_run is not None:
        report["what_if_replay"] = replayed(timer, *first_reuse_run)
    await model.aclose()
    return report


def replayed(timer: CallTimer, requests: list[dict[str, Any]], stages: list[str]) -> dict[str, Any]:
    """The requests of one reuse run sent again in their order and layout, then segment last and grouped by stage.

    Both sequences start from an empty KV cache with prefix reuse on. The second changes the prompts (the
    segment moves), so its replies, and their lengths, may differ: compare prompt evaluation, not total time.
    """
    order = {stage: i for i, stage in enumerate(dict.fromkeys(stages))}
    regrouped = sorted(zip(requests, stages, strict=True), key=lambda pair: order[pair[1]])
    layouts = {
        "as_sent": list(zip(requests, stages, strict=True)),
        "segment_last_by_stage": [(_with_segment_last(r), stage) for r, stage in regrouped],
    }
    report = {}
    timer.reuse_prefix = True
    for name, sequence in layouts.items():
        timer.llama.reset()
        timer.calls = []
        for request, stage in sequence:
            timer.llama.create_chat_completion(**request)
            timer.calls[-1].stage = stage
        report[name] = {**totals(timer.calls), "calls_detail": [c.record() for c in timer.calls]}
        print(f"replay {name}: {report[name]['prompt_eval_s']} s prompt evaluation", file=sys.stderr, flush=True)
    return report


def _with_segment_last(request: dict[str, Any]) -> dict[str, Any]:
    messages = request["messages"]
    moved = {**messages[-1], "content": segment_moved_last(messages[-1]["content"])}
    return {**request, "messages": [*messages[:-1], moved]}


def _stages(calls: list[Any]) -> list[str]:
    return list(dict.fromkeys(c.stage for c in calls))


def _compare(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(reuse: bool, key: str) -> float:
        return statistics.mean(r[key] for r in runs if r["reuse_prefix"] is reuse)

    same = {json.dumps([r["segments"], r["verdicts"], r["label"]]) for r in runs}
    return {
        "prompt_eval_speedup": round(mean(False, "prompt_eval_s") / mean(True, "prompt_eval_s"), 2),
        "total_speedup": round(mean(False, "wall_s") / mean(True, "wall_s"), 2),
        "evaluated_prompt_tokens": {
            "with_reuse": mean(True, "evaluated_prompt_tokens"),
            "without": mean(False, "evaluated_prompt_tokens"),
        },
        "prompt_eval_share_of_time_without_reuse": round(mean(False, "prompt_eval_s") / mean(False, "wall_s"), 3),
        "same_segments_and_verdicts_in_every_run": len(same) == 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None, help="cacheable shares over the first N rows only")
    parser.add_argument("--item", default="faithbench-en-110008", help="the id of the answer to time (5 sentences)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per mode")
    parser.add_argument("--gguf", type=Path, default=None, help="default: the embedded model")
    parser.add_argument("--no-model", action="store_true", help="compute the cacheable shares only")
    parser.add_argument("--no-replay", action="store_true", help="skip the replay in the what-if layout")
    parser.add_argument("--max-tokens", type=int, default=None, help="default: the product's (for smoke tests)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="default: results/prefix_reuse.json (prefix_cacheable.json with --no-model)",
    )
    args = parser.parse_args()
    name = "prefix_cacheable.json" if args.no_model else "prefix_reuse.json"
    out = args.out or Path(__file__).parent / "results" / name
    gguf = args.gguf or ensure_default_model(ragfacts_home() / "models")
    items = list(Dataset.open(args.data).items())
    chosen = next((item for item in items if item.id == args.item), None)
    if chosen is None:
        raise SystemExit(f"no item {args.item!r} in {args.data}")
    made_from = provenance(data=files(args.data))
    report = {"provenance": made_from, **asyncio.run(measure(gguf, items, chosen, args, timed=not args.no_model))}
    made_from["wall_s"] = elapsed()
    report["data"] = str(args.data)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    summary = {k: v for k, v in report.items() if k != "timed"}
    if "timed" in report:
        summary["timed"] = {k: v for k, v in report["timed"].items() if k != "runs"}
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    print(f"written: {out}", file=sys.stderr)


async def measure(
    gguf: Path, items: list[Item], chosen: Item, args: argparse.Namespace, *, timed: bool
) -> dict[str, Any]:
    """The report: the shares over `items`, and with `timed` the runs on `chosen` and its own shares."""
    vocab = llama_cpp.Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    report: dict[str, Any] = {"model": gguf.name, "method": METHOD, "item": chosen.id}
    shares_of: dict[str, Any] = {"rules": {"provider_min_tokens": CACHE_MIN, "provider_step_tokens": CACHE_STEP}}
    shares_of["dataset_segments_are_sentences"] = await cacheable(vocab, items[: args.limit])
    shares_of["timed_answer_sentences"] = await answer_shares(vocab, chosen, split_sentences(chosen.answer))
    if timed:
        report["timed"] = await timed_runs(gguf, chosen, args.repeats, args.max_tokens, replay=not args.no_replay)
        segments = report["timed"]["runs"][0]["segments"]
        shares_of["timed_answer_its_segments"] = await answer_shares(vocab, chosen, segments)
    report["cacheable_share"] = shares_of
    return report


if __name__ == "__main__":
    main()
