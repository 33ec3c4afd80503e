"""The one redaction step: every form of a registered secret, partial echoes of long ones, URL credentials,
secret query values and bearer tokens, whatever text they are in."""

from __future__ import annotations

import base64
import json

from ragfacts import redaction
from ragfacts.models import Failure, FailureKind

KEY = "sk-proj-Abc123Def456Ghi789"


def test_a_registered_secret_is_redacted_as_written_as_escaped_in_json_and_as_url_quoted():
    redaction.register(KEY, 'pa"ss/wörd')
    assert redaction.redact(f"key {KEY}.") == "key [redacted]."
    assert redaction.redact(json.dumps({"m": 'x pa"ss/wörd y'})) == '{"m": "x [redacted] y"}'
    assert redaction.redact("q=pa%22ss%2Fw%C3%B6rd") == "q=[redacted]"


def test_eight_characters_of_a_long_secret_are_a_leak_too():
    redaction.register(KEY)
    assert (
        redaction.redact("Incorrect API key provided: sk-proj-Abc1****9.")
        == "Incorrect API key provided: [redacted]****9."
    )
    assert redaction.redact("an ordinary sentence about projects") == "an ordinary sentence about projects"


def test_short_values_are_not_secrets_so_ordinary_words_stay():
    redaction.register("abc", "")
    assert redaction.redact("abc def") == "abc def"


def test_url_credentials_secret_query_values_and_bearer_tokens_are_blanked_without_registration():
    text = "POST https://bob:hunter22@llm.example/v1?api-key=zzz&model=m failed; Authorization: Bearer tok_12345678"
    assert redaction.redact(text) == (
        "POST https://[redacted]@llm.example/v1?api-key=[redacted]&model=m failed; Authorization: Bearer [redacted]"
    )
    once = redaction.redact_url("https://bob:pw@h/v1?token=t&x=1")
    assert once == "https://[redacted]@h/v1?token=[redacted]&x=1" and redaction.redact_url(once) == once


def test_a_base_urls_credentials_are_registered_with_the_basic_header_they_make():
    redaction.register_url("https://gateway-user:p%40ss-word@h/v1?api-key=q-secret-1&v=2024-01-01")
    basic = base64.b64encode(b"gateway-user:p@ss-word").decode()
    for secret in ("gateway-user", "p@ss-word", "p%40ss-word", "q-secret-1", basic):
        assert redaction.redact(f"[{secret}]") == "[[redacted]]", secret
    assert redaction.redact("2024-01-01") == "2024-01-01"  # not a secret-looking parameter


def test_a_failure_message_is_redacted_when_it_is_made():
    redaction.register(KEY)
    failure = Failure(kind=FailureKind.REQUEST, message=f"401: Incorrect API key provided: {KEY}", last_text=KEY)
    assert KEY not in failure.model_dump_json() and failure.message == "401: Incorrect API key provided: [redacted]"


def test_a_scheme_in_any_case_has_its_token_blanked_and_a_text_without_one_is_left_as_it_is():
    for scheme in ("bearer", "BEARER", "bEaReR", "Basic", "bASIC"):
        assert redaction.redact(f"Authorization: {scheme} tok_12345678") == f"Authorization: {scheme} [redacted]"
    plain = "the basic idea: a bearer of news (短句，无令牌)"
    assert redaction.redact(plain) == plain


def test_a_fragment_is_found_anywhere_in_a_long_text_and_in_any_secret_registered_since():
    redaction.register(KEY)
    filler = "回答与参考一致。The Nile flows north. " * 2_000
    assert redaction.redact(f"{filler}echo: sk-proj-Abc1…{filler}") == f"{filler}echo: [redacted]…{filler}"
    later = "gsk_9fJ2kLm4Np6Qr8St0Uv"
    assert redaction.redact(f"x {later[3:14]} y") == f"x {later[3:14]} y"  # not a secret yet
    redaction.register(later)
    assert redaction.redact(f"x {later[3:14]} y") == "x [redacted] y"
    assert redaction.redact(f"{later}/{KEY}") == "[redacted]/[redacted]"
