"""The trained_head strategy: a logistic head over the model's hidden state at the verdict, plus evidence checks.

The maths is checked on numbers; the strategy for real on a tiny GGUF (SmolLM2-135M): states are extracted, a
head is trained on a few pairs, written, read back, and decides verdicts; a head for another model is refused.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from ragfacts.evidence import FEATURE_NAMES
from ragfacts.items import Item
from ragfacts.methods.lface4rag import AnswerLabel, CheckOptions, check_item, default_strategy
from ragfacts.methods.precision.calibration import fit_logistic
from ragfacts.methods.precision.costs import estimate_check
from ragfacts.methods.precision.head import Head, log_odds, shipped_head
from ragfacts.methods.precision.scored import holistic_request
from ragfacts.models import ConfigurationError, ModelProfile
from ragfacts.models.local.embedded import DEFAULT_MODEL
from ragfacts.models.options import LocalModelOptions
from ragfacts.usage import Usage
from tests.models.local.test_llamacpp import SMOLLM2, needs_model

PAIRS = [  # (reference, answer, faithful)
    ("The bridge opened in 1932 and is 503 metres long.", "The bridge opened in 1932.", True),
    ("The bridge opened in 1932 and is 503 metres long.", "The bridge opened in 1958.", False),
    ("Marie Curie was born in Warsaw in 1867.", "Marie Curie was born in Warsaw.", True),
    ("Marie Curie was born in Warsaw in 1867.", "Marie Curie was born in Paris.", False),
    ("Peking University was founded in 1898 as the Imperial University.", "It was founded in 1898.", True),
    ("Peking University was founded in 1898 as the Imperial University.", "It was founded in 1949.", False),
]  # English only: SmolLM2 knows no Chinese Yes/No


def _head(weights: np.ndarray, bias: float = 0.0, sha256: str = "a" * 64, threshold: float = 0.5) -> Head:
    return Head(
        model_sha256=sha256,
        model_size=1,
        prompts={"en": "holistic_score/en@2", "zh": "holistic_score/zh@2"},
        state_weights=weights,
        baseline_weight=0.0,
        evidence_weights=np.zeros(len(FEATURE_NAMES)),
        bias=bias,
        thresholds={"en": threshold, "zh": threshold},
    )


def test_logistic_fit_reaches_the_penalised_optimum():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(200, 3))
    labels = (features @ np.array([2.0, -1.0, 0.0]) + rng.normal(scale=0.5, size=200) > 0).astype(float)
    penalty = np.array([0.01, 0.01, 0.0])
    weights, bias = fit_logistic(features, labels, penalty)
    p = 1 / (1 + np.exp(-(features @ weights + bias)))
    gradient = features.T @ (p - labels) / len(labels) + penalty * weights
    assert np.abs(gradient).max() < 1e-6 and abs(float(np.mean(p - labels))) < 1e-6
    assert weights[0] > 1.0 and weights[1] < -0.5  # the signal's directions


def test_a_strong_penalty_shrinks_the_penalised_weights_only():
    features = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    labels = np.array([1.0, 0.0, 1.0, 0.0])
    weights, _ = fit_logistic(features, labels, np.array([1e4, 0.0]), iterations=100)
    assert abs(weights[0]) < 1e-3 and abs(weights[1]) < 1e-6  # the second carries no signal at all


def test_a_penalty_matrix_penalises_a_direction_and_a_diagonal_one_is_the_vector():
    rng = np.random.default_rng(1)
    features = rng.normal(size=(300, 2))
    labels = (features @ np.array([1.5, 1.5]) + rng.normal(scale=0.5, size=300) > 0).astype(float)
    vector = np.array([0.01, 0.02])
    assert np.allclose(fit_logistic(features, labels, vector)[0], fit_logistic(features, labels, np.diag(vector))[0])
    # penalising the difference of the two weights strongly makes them equal, whatever else the data say
    difference = np.array([1.0, -1.0])
    weights, _ = fit_logistic(features * np.array([1.0, 0.5]), labels, 1e4 * np.outer(difference, difference))
    assert abs(weights[0] - weights[1]) < 1e-3 and weights[0] > 0.5


def test_log_odds_counts_an_unseen_label_as_minus_thirty():
    assert log_odds({"Yes": math.log(0.8), "No": math.log(0.2)}, "Yes", "No") == pytest.approx(math.log(4))
    assert log_odds({"Yes": -0.1, "No": None}, "Yes", "No") == pytest.approx(29.9)


def test_a_head_file_round_trips_and_gives_the_same_probability(tmp_path):
    head = _head(np.array([0.5, -0.25, 1.0]), bias=0.1)
    head.save(tmp_path / "head.json")
    again = Head.load(tmp_path / "head.json")
    state = np.array([1.0, 2.0, 3.0])
    assert again.probability(state, 0.0, "a", "a", "en") == pytest.approx(head.probability(state, 0.0, "a", "a", "en"))
    assert again.digest == head.digest and again.thresholds == {"en": 0.5, "zh": 0.5}


def test_a_head_that_reads_sentences_combines_the_answers_logit_with_its_sentences(tmp_path):
    from ragfacts.methods.precision.head import encode_weights

    head = _head(np.array([1.0, 0.0, 0.0]), bias=0.0)
    combine = {"answer": 0.5, "min": 1.0, "mean": 0.25, "share": -2.0, "bias": 0.1, "cut": 0.0}
    head.sentences = {"combine": combine, "thresholds": {"en": 0.6}}
    # answer logit 2, sentences 3, -1 and 1: 0.5*2 + 1*(-1) + 0.25*1 - 2*(1/3) + 0.1
    expected = 1 / (1 + math.exp(-(1.0 - 1.0 + 0.25 - 2 / 3 + 0.1)))
    assert head.combined_probability(2.0, [3.0, -1.0, 1.0]) == pytest.approx(expected)
    assert head.combined_probability(2.0, []) == pytest.approx(1 / (1 + math.exp(-(1.0 + 2.0 + 0.5 + 0.1))))
    assert head.threshold("en") == 0.6 and head.answer_threshold("en") == 0.5  # the combined one decides
    state = np.array([2.0, 5.0, 7.0])
    assert head.sentence_logit(state, 0.0, "a", "a", "en") == pytest.approx(2.0)  # the answer's weights
    head.sentences |= {"state_f32_base64": encode_weights(np.array([0.0, 1.0, 0.0])), "bias": -1.0}
    assert head.sentence_logit(state, 0.0, "a", "a", "en") == pytest.approx(4.0)  # its own weights
    head.save(tmp_path / "head.json")
    again = Head.load(tmp_path / "head.json")
    assert again.sentences == head.sentences and again.digest == head.digest
    assert again.digest != _head(np.array([1.0, 0.0, 0.0])).digest
    # A language the block names no threshold for is decided by the answer head alone, as before
    assert head.reads_sentences("en") and not head.reads_sentences("zh") and head.threshold("zh") == 0.5


def test_a_sentences_block_without_thresholds_only_marks_the_sentences_of_its_languages(tmp_path):
    """A head whose sentence weights were fitted on labelled English sentences, to show which sentences of a
    flagged answer are unsupported: verdicts stay the answer head's; a Chinese sentence is read as an answer."""
    from ragfacts.methods.precision.head import encode_weights

    head = _head(np.array([1.0, 0.0, 0.0]), bias=0.0)
    head.sentences = {
        "state_f32_base64": encode_weights(np.array([0.0, 1.0, 0.0])),
        "bias": -1.0,
        "sentence_threshold": {"en": 0.4},
    }
    head.save(tmp_path / "head.json")
    again = Head.load(tmp_path / "head.json")
    assert again.sentences == head.sentences and again.digest != _head(np.array([1.0, 0.0, 0.0])).digest
    assert not again.reads_sentences("en") and again.threshold("en", 5) == 0.5  # it decides nothing
    state = np.array([2.0, 5.0, 7.0])
    assert again.sentence_logit(state, 0.0, "a", "a", "en") == pytest.approx(4.0)  # its own weights
    assert again.sentence_logit(state, 0.0, "一", "一", "zh") == pytest.approx(2.0)  # the answer's weights
    assert again.sentence_threshold("en") == 0.4 and again.sentence_threshold("zh") == 0.5
    # how the weights were made is recorded beside them and is not what they do: the digest stays
    again.sentences = again.sentences | {"training": {"provenance": {"commit": "abc"}}}
    assert again.digest == head.digest


@pytest.mark.parametrize(
    "block",
    [
        {"thresholds": {"en": 0.5}},  # no combine weights
        {"state_f32_base64": "AAAAAAAAAAAAAAAA", "bias": 0.0},  # decides nothing and marks nothing
        {  # marks only, yet carries combine weights it would never use
            "state_f32_base64": "AAAAAAAAAAAAAAAA",
            "bias": 0.0,
            "sentence_threshold": {"en": 0.4},
            "combine": dict.fromkeys(("answer", "min", "mean", "share", "bias", "cut"), 0.0),
        },
        {"state_f32_base64": "AAAAAAAAAAAAAAAA", "bias": 0.0, "sentence_threshold": {"en": 1.5}},  # no probability
        {  # decides zh with sentence weights it applies only to en
            "combine": dict.fromkeys(("answer", "min", "mean", "share", "bias", "cut"), 0.0),
            "thresholds": {"en": 0.5, "zh": 0.5},
            "state_f32_base64": "AAAAAAAAAAAAAAAA",
            "bias": 0.0,
            "sentence_threshold": {"en": 0.4},
        },
        {"combine": {"answer": 1.0}, "thresholds": {"en": 0.5}},  # some of them
        {"combine": dict.fromkeys(("answer", "min", "mean", "share", "bias", "cut"), 0.0), "thresholds": {}},
        {  # sentence weights over another state size
            "combine": dict.fromkeys(("answer", "min", "mean", "share", "bias", "cut"), 0.0),
            "thresholds": {"en": 0.5},
            "state_f32_base64": "AACAPw==",
            "bias": 0.0,
        },
    ],
)
def test_a_head_file_with_a_malformed_sentences_block_is_refused_when_read(tmp_path, block):
    data = _head(np.array([1.0, 0.0, 0.0])).to_json() | {"sentences": block}
    (tmp_path / "head.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"not a readable head file.*sentences block"):
        Head.load(tmp_path / "head.json")


def test_a_long_answer_is_judged_against_the_long_answers_threshold_where_the_head_has_one(tmp_path):
    head = _head(np.array([1.0, 0.0, 0.0]), threshold=0.5)
    head.long_answers = {"from_sentences": 3, "thresholds": {"en": 0.3}}
    assert head.answer_threshold("en", 2) == 0.5 and head.answer_threshold("en", 3) == 0.3
    assert head.threshold("en", 7) == 0.3 and head.threshold("en") == 0.5  # one sentence unless told
    assert head.answer_threshold("zh", 7) == 0.5  # a language it names no threshold for keeps its own
    head.save(tmp_path / "head.json")
    again = Head.load(tmp_path / "head.json")
    assert again.long_answers == head.long_answers and again.digest == head.digest
    assert again.digest != _head(np.array([1.0, 0.0, 0.0])).digest  # it changes verdicts, so it is in the digest


@pytest.mark.parametrize(
    "block",
    [
        {"thresholds": {"en": 0.3}},  # from how many sentences?
        {"from_sentences": 1, "thresholds": {"en": 0.3}},  # every answer is long
        {"from_sentences": 3, "thresholds": {}},
        {"from_sentences": 3, "thresholds": {"en": 1.5}},  # not a probability
    ],
)
def test_a_head_file_with_a_malformed_long_answers_block_is_refused_when_read(tmp_path, block):
    data = _head(np.array([1.0, 0.0, 0.0])).to_json() | {"long_answers": block}
    (tmp_path / "head.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"not a readable head file.*long_answers block"):
        Head.load(tmp_path / "head.json")


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "too large"])
def test_a_head_is_read_only_from_a_regular_file_of_bounded_size(tmp_path, kind):
    """Nothing but a regular file of at most MAX_BYTES is read: a FIFO is refused without waiting for a writer,
    /dev/zero without reading it until memory runs out."""
    from ragfacts.methods.precision import head as head_module

    path = tmp_path / "head.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(b" " * (head_module.MAX_BYTES + 1))
    refused = concurrent.futures.ThreadPoolExecutor(1).submit(Head.load, path)
    with pytest.raises(ValueError, match="not a readable head file"):
        refused.result(timeout=10)


def test_a_head_refuses_another_model_and_another_prompt_version():
    head = _head(np.zeros(2))
    with pytest.raises(ValueError, match="SHA-256 aaaaaaaaaaaa"):
        head.check(sha256="b" * 64, prompt_ids={})
    with pytest.raises(ValueError, match="holistic_score/en@1"):
        head.check(sha256="a" * 64, prompt_ids={"en": "holistic_score/en@1"})


def test_auto_picks_the_head_only_where_one_ships_and_the_state_can_be_read():
    shipped = shipped_head(DEFAULT_MODEL.sha256)
    embedded = ModelProfile(parameters_b=1.5, label_scores=True, hidden_state=True, sha256=DEFAULT_MODEL.sha256)
    assert default_strategy(embedded) == ("trained_head" if shipped else "holistic_score")
    assert default_strategy(embedded.model_copy(update={"sha256": "f" * 64})) == "holistic_score"
    assert default_strategy(embedded.model_copy(update={"hidden_state": False})) == "holistic_score"


async def test_an_endpoint_has_no_shipped_head_and_cannot_use_a_head_over_hidden_states(make_model, tmp_path):
    with pytest.raises(ConfigurationError, match="ragfacts train-head"):
        await check_item(make_model(), Item(reference="r", answer="a"), CheckOptions(strategy="trained_head"))
    _head(np.array([0.5, -0.25])).save(tmp_path / "state-head.json")
    options = CheckOptions(strategy="trained_head", head=str(tmp_path / "state-head.json"))
    with pytest.raises(ConfigurationError, match="hidden state"):
        await check_item(make_model(), Item(reference="r", answer="a"), options)


@pytest.fixture(scope="module")
def tiny():
    from ragfacts.models.local.llamacpp import LlamaCppModel

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(n_ctx=1024))
    yield model
    asyncio.run(model.aclose())


async def _state(model, reference: str, answer: str) -> tuple[np.ndarray, float, dict]:
    item = Item(reference=reference, answer=answer)
    messages, (yes, no), prompt_id = holistic_request(item, "en")
    completion = await model.score_labels(messages, [yes, no], prompt_version=prompt_id, hidden_state=True)
    assert completion.ok, completion.failure
    plain = await model.score_labels(messages, [yes, no], prompt_version=prompt_id)
    return completion.parsed.state_vector(), log_odds(completion.parsed.logprobs, yes, no), plain.parsed.probabilities


@needs_model
async def test_the_state_is_read_in_the_same_forward_pass_as_the_verdict(tiny):
    state, odds, plain = await _state(tiny, *PAIRS[0][:2])
    other, _, _ = await _state(tiny, *PAIRS[1][:2])
    assert state.shape == (576,) and np.isfinite(state).all()  # SmolLM2-135M's hidden size
    assert not np.allclose(state, other)
    assert 1 / (1 + math.exp(-odds)) == pytest.approx(plain["Yes"], abs=0.02)  # the same verdict as without it


@needs_model
async def test_a_head_trained_on_a_few_pairs_decides_verdicts_and_is_refused_for_another_model(tiny, tmp_path):
    rows = [await _state(tiny, reference, answer) for reference, answer, _ in PAIRS]
    features = np.stack([state for state, _, _ in rows])
    labels = np.array([1.0 if faithful else 0.0 for *_, faithful in PAIRS])
    mean, scale = features.mean(axis=0), features.std(axis=0) + 1e-3
    weights, bias = fit_logistic((features - mean) / scale, labels, np.full(features.shape[1], 1e-4))
    state_weights = weights / scale
    head = _head(state_weights, bias - float(state_weights @ mean), sha256=tiny.weights_sha256())
    path = tmp_path / "head.json"
    head.save(path)

    options = CheckOptions(strategy="trained_head", head=str(path), explain_failures=False)
    for reference, answer, faithful in PAIRS:
        result = await check_item(tiny, Item(reference=reference, answer=answer), options)
        assert result.label is (AnswerLabel.CONSISTENT if faithful else AnswerLabel.INCONSISTENT), answer
        assert result.holistic.probability is not None and "trained head" in result.holistic.explanation
        assert '"state":null' in result.holistic.call.text  # results keep the log-probabilities, not 3 KB of state
    flagged = await check_item(tiny, Item(reference=PAIRS[5][0], answer=PAIRS[5][1]), options)
    assert any("1949" in problem and "1898" in problem for problem in flagged.holistic.problems)

    flipped = _head(-head.state_weights, -head.bias, sha256=head.model_sha256)
    flipped.save(path.with_name("flipped.json"))
    options = options.model_copy(update={"head": str(path.with_name("flipped.json"))})
    result = await check_item(tiny, Item(reference=PAIRS[0][0], answer=PAIRS[0][1]), options)
    assert result.label is AnswerLabel.INCONSISTENT  # the weights, not the prompt, decide

    lenient = _head(np.zeros_like(head.state_weights), bias=5.0, sha256=head.model_sha256)  # P = 0.99 for all
    lenient.evidence_veto = True
    lenient.save(path.with_name("veto.json"))
    options = options.model_copy(update={"head": str(path.with_name("veto.json"))})
    faithful, changed = [await check_item(tiny, Item(reference=r, answer=a), options) for r, a, _ in PAIRS[4:6]]
    assert faithful.label is AnswerLabel.CONSISTENT
    assert changed.label is AnswerLabel.INCONSISTENT and changed.holistic.probability > 0.9  # the evidence decides
    assert "1949" in changed.reason and "evidence check" in changed.holistic.explanation

    _head(head.state_weights, sha256="0" * 64).save(path.with_name("other.json"))
    with pytest.raises(ConfigurationError, match="trained for the model"):
        options = options.model_copy(update={"head": str(path.with_name("other.json"))})
        await check_item(tiny, Item(reference=PAIRS[0][0], answer=PAIRS[0][1]), options)


@needs_model
async def test_a_head_that_reads_sentences_flags_a_long_answer_for_its_one_unsupported_sentence(tiny, tmp_path):
    reference = "The bridge opened in 1932. It is 503 metres long. It cost 4 million dollars. It carries 6 lanes."
    answer = "The bridge opened in 1932. It is 503 metres long. It cost 9 million dollars. It carries 6 lanes."
    weights = np.zeros(576)
    answer_only = _head(weights, bias=3.0, sha256=tiny.weights_sha256())
    answer_only.evidence_weights[FEATURE_NAMES.index("share_numbers_unsupported")] = -8.0  # 1 of 4: logit 1
    answer_only.save(tmp_path / "answer.json")
    options = CheckOptions(strategy="trained_head", head=str(tmp_path / "answer.json"))
    passed = await check_item(tiny, Item(reference=reference, answer=answer), options)
    assert passed.label is AnswerLabel.CONSISTENT and len(passed.calls()) == 1  # the diluted answer passes

    reading = Head.from_json(answer_only.to_json())  # the same weights; each sentence's logit, the lowest decides
    combine = {"answer": 0.0, "min": 1.0, "mean": 0.0, "share": 0.0, "bias": 0.0, "cut": 0.0}
    reading.sentences = {"combine": combine, "thresholds": {"en": 0.5}}
    reading.save(tmp_path / "sentences.json")
    assert Head.load(tmp_path / "sentences.json").digest == reading.digest != answer_only.digest
    options = options.model_copy(update={"head": str(tmp_path / "sentences.json")})
    flagged = await check_item(tiny, Item(reference=reference, answer=answer), options)
    assert flagged.label is AnswerLabel.INCONSISTENT and "read with its 4 sentences" in flagged.holistic.explanation
    assert flagged.holistic.probability == pytest.approx(1 / (1 + math.exp(5.0)), abs=1e-6)  # 3 - 8 * 1
    carrying = [s for s in flagged.segments if s.label is AnswerLabel.INCONSISTENT]
    assert [s.index for s in carrying] == [2] and "9 million" in carrying[0].text
    assert len(flagged.calls()) == 5  # the answer and its 4 sentences, each once: localising them costs nothing more
    assert sum(1 for call, _ in flagged.calls() if call.usage.prompt_tokens) == 5  # each sentence read once, paid once
    estimated = estimate_check(tiny, Item(reference=reference, answer=answer), options, "en")  # --dry-run's figure
    real = Usage.sum(call.usage for call, _ in flagged.calls())
    assert estimated.calls == real.calls == 5
    assert abs(estimated.prompt_tokens - real.prompt_tokens) <= 0.25 * real.prompt_tokens, (estimated, real)

    short = await check_item(tiny, Item(reference=reference, answer="It cost 9 million dollars."), options)
    assert short.label is AnswerLabel.INCONSISTENT and len(short.calls()) == 1  # one sentence: its own logit


@needs_model
async def test_a_long_answer_passes_or_fails_by_the_long_answers_threshold_and_says_so(tiny, tmp_path):
    reference = "The bridge opened in 1932. It is 503 metres long. It cost 4 million dollars. It carries 6 lanes."
    head = _head(np.zeros(576), bias=0.0, sha256=tiny.weights_sha256(), threshold=0.6)  # P(faithful) = 0.5
    head.long_answers = {"from_sentences": 3, "thresholds": {"en": 0.4}}
    head.save(tmp_path / "long.json")
    options = CheckOptions(strategy="trained_head", head=str(tmp_path / "long.json"), explain="none")
    long = await check_item(tiny, Item(reference=reference, answer=reference), options)
    assert long.label is AnswerLabel.CONSISTENT and long.holistic.threshold == pytest.approx(0.4)
    assert "the threshold for English answers of 3+ sentences, chosen on dev" in long.holistic.explanation
    short = await check_item(tiny, Item(reference=reference, answer="It is 503 metres long."), options)
    assert short.label is AnswerLabel.INCONSISTENT and short.holistic.threshold == pytest.approx(0.6)
    assert "sentences" not in short.holistic.explanation


@needs_model
async def test_a_head_whose_sentence_head_only_marks_scores_a_flagged_answers_sentences_with_it(tiny, tmp_path):
    """The verdict is the answer head's alone; the sentences of the flagged answer are each scored by the sentence
    weights against the sentence threshold, and marked where they fall under it."""
    from ragfacts.methods.precision.head import encode_weights

    reference = "The bridge opened in 1932. It is 503 metres long. It cost 4 million dollars."
    answer = "The bridge opened in 1932. It is 503 metres long. It cost 4 million dollars."
    head = _head(np.zeros(576), bias=-3.0, sha256=tiny.weights_sha256())  # P(faithful) 0.047: flagged
    head.sentences = {
        "state_f32_base64": encode_weights(np.zeros(576)),
        "bias": 2.0,  # every sentence P 0.88, under a sentence threshold of 0.9
        "sentence_threshold": {"en": 0.9},
    }
    head.save(tmp_path / "marks.json")
    options = CheckOptions(strategy="trained_head", head=str(tmp_path / "marks.json"))
    flagged = await check_item(tiny, Item(reference=reference, answer=answer), options)
    assert flagged.label is AnswerLabel.INCONSISTENT
    assert flagged.holistic.probability == pytest.approx(1 / (1 + math.exp(3.0)), abs=1e-6)  # the answer alone
    assert "sentences" not in flagged.holistic.explanation
    scored = [s.score for s in flagged.segments if s.score is not None and s.score.probability is not None]
    assert len(scored) == 3 and all(s.probability == pytest.approx(1 / (1 + math.exp(-2.0))) for s in scored)
    assert all(s.label is AnswerLabel.INCONSISTENT for s in flagged.segments)  # each under 0.9
    assert len(flagged.calls()) == 4  # the answer, then its 3 sentences to show which fail
