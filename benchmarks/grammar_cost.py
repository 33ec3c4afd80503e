"""Where generation time goes on the embedded model: the model's forward passes vs the grammar-constrained sampler.

Representative calls (the decomposition, the fact and the logic check of one segment, the holistic judgement;
on an English and a Chinese item) are each run twice on one loaded model, from an empty KV cache: with the
grammar (the local backend's default mode: `response_format` carrying the schema) and without it (mode
json_text: the same prompt, schema text included, free decoding). Per call, from llama.cpp's own counters:
prompt-evaluation time, generation-evaluation time (the forward passes of the generated tokens); from timing
each `Llama.sample` call: the sampler chain (repeat penalty, grammar, greedy choice); the rest of the wall time
(Python, detokenising, chat formatting, building the grammar). Also, per schema: the time to convert it to a
GBNF grammar (`json_schema_to_gbnf`, which llama-cpp-python's chat handler runs on every request), the time
llama.cpp takes to parse that grammar into a sampler (also on every request), and the grammar's size.

A third way is a prototype of a cut, run here and not in ragfacts: `grammar_check_first` decodes the grammar
call's exact prompt greedily with the same repeat penalty, but checks the grammar against the best token only,
and applies it to the whole vocabulary only when that token is rejected (what llama.cpp's own common sampler
does; llama-cpp-python applies it to all 151,936 candidates at every step). At temperature 0 this picks the same
tokens: the best token, when the grammar allows it, is also the best allowed token. The report says whether
its text equals the grammar call's, and how often the best token was rejected.

    python benchmarks/grammar_cost.py                      # ~15 min on 2 cores
    python benchmarks/grammar_cost.py --max-tokens 8       # a smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
from _llama_timing import CallTimer, CallTiming, chat_tokens, totals
from _provenance import files, provenance
from llama_cpp import _internals
from llama_cpp.llama_grammar import LLAMA_GRAMMAR_DEFAULT_ROOT, LlamaGrammar, json_schema_to_gbnf
from pydantic import BaseModel

from ragfacts.datasets.dataset import Dataset
from ragfacts.items import Item
from ragfacts.methods.bilingual import in_language
from ragfacts.methods.precision.schemas import Decomposition, FactCheck, HolisticJudgement, LogicCheck
from ragfacts.methods.prompting import ask
from ragfacts.models import ModelOptions, StructuredMode, build_model, parse_spec
from ragfacts.models.local.embedded import ensure_default_model
from ragfacts.models.spec import ragfacts_home
from ragfacts.models.structured import json_schema_of, parse_reply
from ragfacts.text import detect_lang, split_sentences

DATA = Path(__file__).parent / "data"
ITEMS = ((DATA / "quality" / "dev.jsonl", "faithbench-en-110008"), (DATA / "precision_probe.jsonl", "zh-tea-x"))
STAGES: tuple[tuple[str, type[BaseModel], str], ...] = (
    ("decompose", Decomposition, "answer"),
    ("fact_consistency", FactCheck, "segment"),
    ("logic_consistency", LogicCheck, "segment"),
    ("holistic", HolisticJudgement, "answer"),
)
MODES = (StructuredMode.GRAMMAR, StructuredMode.JSON_TEXT)
CHECK_FIRST = "grammar_check_first"  # the prototype


def grammar_costs(llama: Any, repeats: int = 20) -> dict[str, Any]:
    """Per schema and language: GBNF size, and the time to build it from the schema and to parse it in llama.cpp."""
    costs: dict[str, Any] = {}
    for _, schema, _ in STAGES:
        for lang in ("en", "zh"):
            schema_json = json.dumps(json_schema_of(in_language(schema, lang)))
            started = time.perf_counter()
            for _ in range(repeats):
                gbnf = json_schema_to_gbnf(schema_json)
            convert_ms = (time.perf_counter() - started) / repeats * 1000
            started = time.perf_counter()
            for _ in range(repeats):
                sampler = llama_cpp.llama_sampler_init_grammar(
                    llama._model.vocab, gbnf.encode(), LLAMA_GRAMMAR_DEFAULT_ROOT.encode()
                )
                llama_cpp.llama_sampler_free(sampler)
            parse_ms = (time.perf_counter() - started) / repeats * 1000
            costs[f"{schema.__name__}/{lang}"] = {
                "schema_chars": len(schema_json),
                "gbnf_chars": len(gbnf),
                "gbnf_rules": sum(1 for line in gbnf.splitlines() if "::=" in line),
                "json_schema_to_gbnf_ms": round(convert_ms, 2),
                "llama_grammar_parse_ms": round(parse_ms, 2),
            }
    return costs


async def measure(gguf: Path, max_tokens: int | None) -> dict[str, Any]:
    options = ModelOptions(reasks=0, **({} if max_tokens is None else {"max_tokens": max_tokens}))
    model = build_model(parse_spec(f"local:{gguf}"), options)
    timer = CallTimer(model, reuse_prefix=False)  # type: ignore[arg-type]
    report: dict[str, Any] = {"model": gguf.name, "max_tokens": options.max_tokens, "calls": []}
    for path, item_id in ITEMS:
        item = next(i for i in Dataset.open(path).items() if i.id == item_id)
        lang = detect_lang(item.answer)
        for stage, schema, text_field in STAGES:
            for mode in MODES:
                model.options = options.model_copy(update={"mode": mode})
                completion = await ask(model, stage, schema, lang, question=item.question, **_texts(item, text_field))
                call = timer.calls[-1]
                row = {"item": item.id, "lang": lang, "mode": mode.value, "valid": completion.ok, **call.record()}
                report["calls"].append(row)
                _print(row)
                if mode is StructuredMode.GRAMMAR:
                    request = timer.last_request
                    grammar_schema = request["response_format"]["schema"]
                    text, timing, rejected = check_first(
                        timer.llama, request["messages"], grammar_schema, options.max_tokens, stage
                    )
                    timer.calls.append(timing)
                    row = {"item": item.id, "lang": lang, "mode": CHECK_FIRST, "valid": _valid(text, schema, lang)}
                    row.update(
                        timing.record(), same_text_as_grammar=text == completion.text, best_token_rejected=rejected
                    )
                    report["calls"].append(row)
                    _print(row)
    report["grammar_build"] = grammar_costs(timer.llama)
    report["summary"] = summarise(report["calls"], timer)
    await model.aclose()
    return report


def check_first(
    llama: Any, messages: list[dict[str, str]], schema: dict[str, Any], max_tokens: int, stage: str
) -> tuple[str, CallTiming, int]:
    """Greedy grammar decoding that checks the best token first; returns the text, its timing, the rejections."""
    tokens = chat_tokens(llama, messages)
    n_vocab = llama.n_vocab()
    vocab = llama._model.vocab
    candidates = _internals.LlamaTokenDataArray(n_vocab=n_vocab)
    best = (llama_cpp.llama_token_data * 1)()
    best_array = llama_cpp.llama_token_data_array(data=best, size=1, selected=-1, sorted=False)
    penalties, grammar = _internals.LlamaSampler(), _internals.LlamaSampler()
    # As Llama._init_sampler for a chat completion: repeat penalty 1.1 over the last 64 generated tokens.
    penalties.add_penalties(n_vocab, llama.last_n_tokens_size, 1.1, 0.0, 0.0)
    grammar.add_grammar(llama._model, LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False))
    llama.reset()
    llama_cpp.llama_synchronize(llama._ctx.ctx)
    llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
    started = time.perf_counter()
    llama.eval(tokens)
    generated: list[int] = []
    sample_s, rejected = 0.0, 0
    finish = "length"
    for _ in range(max_tokens):
        sampling = time.perf_counter()
        candidates.copy_logits(np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(n_vocab,)))
        llama_cpp.llama_sampler_apply(penalties.sampler, ctypes.byref(candidates.candidates))
        token = int(np.argmax(candidates.candidates_data.logit))
        best[0].id, best[0].logit, best_array.size = token, float(candidates.candidates_data.logit[token]), 1
        llama_cpp.llama_sampler_apply(grammar.sampler, ctypes.byref(best_array))
        if best[0].logit == -np.inf:
            rejected += 1
            llama_cpp.llama_sampler_apply(grammar.sampler, ctypes.byref(candidates.candidates))
            token = int(np.argmax(candidates.candidates_data.logit))
        llama_cpp.llama_sampler_accept(penalties.sampler, token)
        llama_cpp.llama_sampler_accept(grammar.sampler, token)
        sample_s += time.perf_counter() - sampling
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            finish = "stop"
            break
        generated.append(token)
        llama.eval([token])
    llama_cpp.llama_synchronize(llama._ctx.ctx)
    wall = time.perf_counter() - started
    perf = llama_cpp.llama_perf_context(llama._ctx.ctx)
    timing = CallTiming(
        stage=stage,
        prompt_tokens=len(tokens),
        evaluated_prompt_tokens=perf.n_p_eval,
        prompt_eval_s=perf.t_p_eval_ms / 1000,
        completion_tokens=len(generated),
        generation_eval_s=perf.t_eval_ms / 1000,
        sample_s=sample_s,
        samples=len(generated) + (finish == "stop"),
        wall_s=wall,
        finish_reason=finish,
        grammar=True,
    )
    text = llama.detokenize(generated).decode("utf-8", errors="replace")
    return text, timing, rejected


def _valid(text: str, schema: type[BaseModel], lang: str) -> bool:
    try:
        parse_reply(text, in_language(schema, lang))
    except ValueError:
        return False
    return True


def _print(row: dict[str, Any]) -> None:
    print(
        f"{row['item']} {row['stage']} {row['mode']}: {row['completion_tokens']} tokens, {row['wall_s']:.1f} s, "
        f"sampler {row['sample_s']:.2f} s"
        + (f", same text {row['same_text_as_grammar']}" if row["mode"] == CHECK_FIRST else ""),
        file=sys.stderr,
        flush=True,
    )


def _texts(item: Item, field: str) -> dict[str, str]:
    texts = {"answer": item.answer} if field == "answer" else {"segment": split_sentences(item.answer)[0]}
    if field == "segment" or item.reference is not None:
        texts = {"reference": item.reference or "", **texts}
    return texts


def summarise(calls: list[dict[str, Any]], timer: CallTimer) -> dict[str, Any]:
    """Per mode: generation time split into forward passes, sampler and the rest, per generated token."""
    summary: dict[str, Any] = {}
    for mode in (*(m.value for m in MODES), CHECK_FIRST):
        rows = [row for row in calls if row["mode"] == mode]
        chosen = [c for c, row in zip(timer.calls, calls, strict=True) if row["mode"] == mode]
        total = totals(chosen)
        generated = max(total["completion_tokens"], 1)
        generation_s = total["generation_eval_s"] + total["sample_s"] + total["other_s"]
        summary[mode] = {
            **total,
            "valid_replies": sum(bool(row["valid"]) for row in rows),
            "truncated": sum(row["finish_reason"] == "length" for row in rows),
            "ms_per_token": {
                "forward_pass": round(total["generation_eval_s"] / generated * 1000, 2),
                "sampler": round(total["sample_s"] / generated * 1000, 2),
                "other": round(total["other_s"] / generated * 1000, 2),
            },
            "sampler_share_of_generation": round(total["sample_s"] / generation_s, 3) if generation_s else None,
            "median_completion_tokens": statistics.median(c.completion_tokens for c in chosen),
        }
    prototype = [row for row in calls if row["mode"] == CHECK_FIRST]
    summary[CHECK_FIRST]["same_text_as_grammar"] = (
        f"{sum(r['same_text_as_grammar'] for r in prototype)}/{len(prototype)}"
    )
    summary[CHECK_FIRST]["best_token_rejected"] = sum(r["best_token_rejected"] for r in prototype)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, default=None, help="default: the embedded model")
    parser.add_argument("--max-tokens", type=int, default=None, help="default: the product's (for smoke tests)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "grammar_cost.json")
    args = parser.parse_args()
    gguf = args.gguf or ensure_default_model(ragfacts_home() / "models")
    report = asyncio.run(measure(gguf, args.max_tokens))
    report = {"provenance": provenance(data=files(*dict(ITEMS))), **report}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"grammar_build": report["grammar_build"], "summary": report["summary"]}, indent=2))
    print(f"written: {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
