"""Extract what a trained head reads: the embedded model's final hidden state at the whole-answer verdict.

For every (reference, answer) pair of the given JSONL files, the holistic_score prompt (the very messages the
strategy sends, `holistic_request`) is evaluated once by the local model with `hidden_state=True`: the
1,536-number state at the position where the reply starts, and the log-probabilities of Yes/No there.
With `--sentences`, each sentence of a multi-sentence answer is then scored alone the same way (the sentence as
the answer, as the trained head localises a flagged answer), stored under the id `<id>#s<n>` (a sentence that
another answer holds too is read once, under the first one's id).

Pairs are taken grouped by reference (files in turn, one reference's pairs each), and sentences right after
their answer, so that the reference's KV cache is reused: only the first prompt of a reference pays for it.
`--cost` prints the tokens the pending extraction will really evaluate (and the hours at `--rate` tokens/s,
measured beforehand with bare llama.cpp) without loading the weights.

Resumable and incremental: results are stored in chunks under `--store` (default benchmarks/features/<first 12
hex of the model's SHA-256>/), each row keyed by SHA-256 of (model SHA-256, prompt id, rendered prompt), so a
pair is extracted once whatever file or order it comes in, and a killed run loses at most one chunk. States are
float16 (3 KB a pair), which is how they are committed.

    python benchmarks/judge_features.py benchmarks/data/quality/dev.jsonl [more.jsonl ...] [--limit N]
        [--sentences] [--source PREFIX ...] [--cost --rate 65]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragfacts.items import Item
from ragfacts.methods.precision.scored import holistic_request
from ragfacts.models import LocalModelOptions, build_model, parse_spec
from ragfacts.models.local.embedded import DEFAULT_MODEL
from ragfacts.text import detect_lang, split_sentences

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 20


def store_dir(model_sha256: str) -> Path:
    return ROOT / "benchmarks" / "features" / model_sha256[:12]


def row_key(model_sha256: str, prompt_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_sha256}\n{prompt_id}\n{text}".encode()).hexdigest()


def load_store(directory: Path) -> dict[str, dict[str, Any]]:
    """key -> {state (float16), lp_yes, lp_no, p_yes, tokens, seconds, id, dataset} over every chunk."""
    rows: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.npz")):
        if path.name.endswith(".partial.npz"):  # a chunk being written when a run was killed
            continue
        with np.load(path, allow_pickle=False) as data:
            for n, key in enumerate(data["keys"].tolist()):
                rows[key] = {
                    "state": data["states"][n],
                    "lp_yes": float(data["lp"][n, 0]),
                    "lp_no": float(data["lp"][n, 1]),
                    "p_yes": float(data["p_yes"][n]),
                    "tokens": int(data["tokens"][n]),
                    "seconds": float(data["seconds"][n]),
                    "id": str(data["ids"][n]),
                }
    return rows


def read_items(path: Path) -> list[tuple[Item, str]]:
    """(item, lang) of every labelled row; lang as the strategy resolves it (the answer's language)."""
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        item = Item(id=row["id"], question=row.get("question"), reference=row["reference"], answer=row["answer"])
        items.append((item, detect_lang(item.answer)))
    return items


def read_sources(path: Path) -> list[str]:
    """The `source` of every row, in order ("" where a row names none)."""
    return [json.loads(line).get("source") or "" for line in path.read_text(encoding="utf-8").splitlines()]


def request_key(item: Item, lang: str, model_sha256: str) -> tuple[str, Any]:
    messages, labels, prompt_id = holistic_request(item, lang)
    return row_key(model_sha256, prompt_id, messages[0].content), (messages, labels, prompt_id)


def sentence_requests(item: Item, lang: str, model_sha256: str) -> list[tuple[str, str, Any]]:
    """(id, key, request) of each sentence of a multi-sentence answer, as the trained head's localisation of a
    flagged answer scores it (`trained._localise`: the whole-answer prompt with the sentence alone as the answer);
    none for a one-sentence answer."""
    sentences = split_sentences(item.answer) or [item.answer]
    if len(sentences) < 2:
        return []
    requests = []
    for n, sentence in enumerate(sentences):
        key, request = request_key(item.model_copy(update={"answer": sentence}), lang, model_sha256)
        requests.append((f"{item.id}#s{n}", key, request))
    return requests


def plan(
    paths: list[Path], limit: int | None, sentences: bool, done: set[str], sha: str, sources: tuple[str, ...] = ()
) -> list[tuple[str, str, Any]]:
    """(id, key, request) of every pending call in the order they run: files in turn, one reference's pairs from
    each (KV reuse; a reference several files share runs once), every answer's sentences right after it; what is
    stored already is left out. With `sources`,
    only the rows whose `source` starts with one of them (then `limit` counts those rows)."""
    queues = []
    for path in paths:
        groups: dict[str, list[tuple[str, str, Any]]] = {}
        pending = 0
        chosen = [
            pair
            for pair, source in zip(read_items(path), read_sources(path), strict=True)
            if not sources or source.startswith(sources)
        ]
        for item, lang in chosen[:limit]:
            key, request = request_key(item, lang, sha)
            calls = [(item.id, key, request)]
            if sentences:
                calls += sentence_requests(item, lang, sha)
            calls = [call for call in calls if call[1] not in done]
            done.update(call[1] for call in calls)
            pending += len(calls)
            if calls:
                groups.setdefault(item.reference or "", []).extend(calls)
        print(f"{path}: {pending} calls to make", file=sys.stderr, flush=True)
        queues.append(list(groups.items()))
    # Files in turn, one reference each; a reference that several files share runs once, all its pairs together.
    merged: dict[str, list[tuple[str, str, Any]]] = {}
    for turn in itertools.zip_longest(*queues):
        for group in turn:
            if group:
                merged.setdefault(group[0], []).extend(group[1])
    return [call for calls in merged.values() for call in calls]


def cost(order: list[tuple[str, str, Any]], rate: float) -> None:
    """The tokens the planned calls evaluate with the KV prefix reused, from the GGUF's tokenizer alone."""
    import llama_cpp
    from _llama_timing import chat_tokens, common_prefix

    from ragfacts.models.local.embedded import ensure_default_model
    from ragfacts.models.spec import ragfacts_home

    gguf = ensure_default_model(ragfacts_home() / "models")
    llama = llama_cpp.Llama(str(gguf), vocab_only=True, verbose=False)
    total = evaluated = 0
    previous: list[int] = []
    for _, _, (messages, _, _) in order:
        tokens = chat_tokens(llama, [m.model_dump() for m in messages])
        total += len(tokens)
        evaluated += len(tokens) - min(common_prefix(previous, tokens), len(tokens) - 1)
        previous = tokens
    hours = evaluated / rate / 3600
    print(f"{len(order)} calls: {total} prompt tokens, {evaluated} evaluated with reuse, {hours:.2f} h at {rate} tok/s")


def save_chunk(directory: Path, stem: str, rows: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    existing = sorted(directory.glob(f"{stem}-*.npz"))
    number = int(existing[-1].stem.rsplit("-", 1)[1]) + 1 if existing else 0
    path = directory / f"{stem}-{number:05d}.npz"
    partial = path.with_suffix(".partial.npz")
    np.savez(
        partial,
        keys=np.array([r["key"] for r in rows]),
        ids=np.array([r["id"] for r in rows]),
        states=np.stack([r["state"] for r in rows]).astype(np.float16),
        lp=np.array([[r["lp_yes"], r["lp_no"]] for r in rows], dtype=np.float32),
        p_yes=np.array([r["p_yes"] for r in rows], dtype=np.float32),
        tokens=np.array([r["tokens"] for r in rows], dtype=np.int32),
        seconds=np.array([r["seconds"] for r in rows], dtype=np.float32),
    )
    os.replace(partial, path)
    return path


async def extract(
    paths: list[Path],
    limit: int | None,
    threads: int | None,
    sentences: bool,
    rate: float | None,
    sources: tuple[str, ...] = (),
) -> None:
    sha = DEFAULT_MODEL.sha256
    directory = store_dir(sha)
    order = plan(paths, limit, sentences, set(load_store(directory)), sha, sources)
    if rate is not None:
        cost(order, rate)
        return
    options = LocalModelOptions(n_threads=threads, max_retries=0)
    model = build_model(parse_spec("local"), options)
    try:
        stem = "+".join(path.stem for path in paths)
        rows: list[dict[str, Any]] = []
        started = time.perf_counter()
        for n, (row_id, key, (messages, labels, prompt_id)) in enumerate(order, 1):
            completion = await model.score_labels(messages, labels, prompt_version=prompt_id, hidden_state=True)
            if not completion.ok:
                print(f"  {row_id}: failed ({completion.failure.message})", file=sys.stderr, flush=True)
                continue
            scores = completion.parsed
            yes, no = labels
            rows.append(
                {
                    "key": key,
                    "id": row_id,
                    "state": scores.state_vector(),
                    "lp_yes": scores.logprobs[yes] if scores.logprobs[yes] is not None else -30.0,
                    "lp_no": scores.logprobs[no] if scores.logprobs[no] is not None else -30.0,
                    "p_yes": scores.probabilities[yes],
                    "tokens": completion.usage.prompt_tokens,
                    "seconds": completion.usage.model_s,
                }
            )
            if len(rows) >= CHUNK:
                save_chunk(directory, stem, rows)
                rate_now = (time.perf_counter() - started) / n
                print(f"  {n}/{len(order)} · {rate_now:.2f} s a call", file=sys.stderr, flush=True)
                rows = []
        if rows:  # the last chunk, even where the last call failed
            save_chunk(directory, stem, rows)
    finally:
        await model.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="at most this many rows of each file")
    parser.add_argument(
        "--source", nargs="+", default=[], help="only the rows whose source starts with one of these (e.g. MTRAG)"
    )
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--sentences", action="store_true", help="also each sentence of a multi-sentence answer")
    parser.add_argument("--cost", action="store_true", help="print what the pending calls cost; extract nothing")
    parser.add_argument("--rate", type=float, default=65.0, help="prompt tokens/s for --cost (measure it first)")
    args = parser.parse_args()
    rate = args.rate if args.cost else None
    asyncio.run(extract(args.paths, args.limit, args.threads, args.sentences, rate, tuple(args.source)))


if __name__ == "__main__":
    main()
