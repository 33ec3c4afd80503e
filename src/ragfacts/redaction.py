"""Secrets never reach a file, a log or the terminal: one redaction step for every text ragfacts stores or prints.

The secrets of a process are registered where they are read: the API key (`api_key_from_env`), the credentials
and secret-looking query values of a base URL, the `${VAR}` values and header values of an endpoint template,
the service's token. `redact(text)` replaces each of them by "[redacted]": as written, as escaped inside JSON
and as URL-quoted, and also any run of 8 or more of a long secret's characters (a server that echoes part of a
key: "Incorrect API key provided: sk-abc123…"). Whatever the values, it also blanks a URL's userinfo
(`https://user:pass@host`), secret-looking query parameters (`?api-key=…`, `token=`, `sig=`…) and bearer tokens.

Every place that writes text out goes through it: the run directory's files (results, manifest, ledger,
answers), the response cache, `--json` on stdout, the CLI's messages on stderr, the service's responses and logs,
and the failure messages kept in results.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import ahocorasick_rs

REDACTED = "[redacted]"
_MIN_SECRET = 4  # shorter "secrets" would redact ordinary words
_LONG = 12  # secrets this long are also redacted by fragments
_FRAGMENT = 8  # a run of this many characters of a long secret counts as the secret
_SECRET_QUERY = re.compile(
    r"^(api[-_]?key|key|token|access[-_]?token|auth|authorization|secret|client[-_]?secret|password|passwd|pwd|"
    r"sig|signature|code|session|x-api-key)$",
    re.IGNORECASE,
)
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`]+")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_WORD = re.compile(r"[A-Za-z0-9_.~+/=-]{8,}")

_AUTH_WORDS = ("bearer", "basic")  # the schemes _BEARER looks after, in every case (bEaRer), for the scan


def _casings(word: str) -> list[str]:
    return ["".join(letters) for letters in itertools.product(*((c.lower(), c.upper()) for c in word))]


class _Scan(NamedTuple):
    """What is known, and one pass over a text that finds every pattern calling for a rewrite: a known secret in any
    of its forms, an 8-character run of a long secret, a scheme of _BEARER. An Aho-Corasick automaton
    (ahocorasick_rs): its time does not grow with the number of patterns, where a regular expression alternating a
    56-character key's 49 runs scanned 12-15 MB/s (benchmarks/redaction_speed.py). One object, replaced whole on each
    registration, so a text is redacted against one registration's state whatever another thread registers."""

    forms: list[str]  # every form of every known secret, longest first
    grams: frozenset[str]  # every 8-character run of the long secrets
    automaton: ahocorasick_rs.AhoCorasick  # its patterns: the forms, then the runs, then the schemes

    @classmethod
    def of(cls, forms: list[str], grams: frozenset[str]) -> _Scan:
        auth = [casing for word in _AUTH_WORDS for casing in _casings(word)]
        patterns = [*forms, *sorted(grams), *auth]  # a few hundred at most: a DFA is small and the fastest to run
        return cls(forms, grams, ahocorasick_rs.AhoCorasick(patterns, implementation=ahocorasick_rs.Implementation.DFA))

    def kinds(self, text: str) -> tuple[bool, bool, bool]:
        """Whether `text` holds a form, a run, a scheme."""
        found = {index for index, _, _ in self.automaton.find_matches_as_indexes(text, overlapping=True)}
        forms, runs = len(self.forms), len(self.forms) + len(self.grams)
        return any(i < forms for i in found), any(forms <= i < runs for i in found), any(i >= runs for i in found)

    def is_fragment(self, word: str) -> bool:
        """Whether `word` holds 8+ consecutive characters of a long known secret (a partial echo of a key)."""
        return any(word[i : i + _FRAGMENT] in self.grams for i in range(len(word) - _FRAGMENT + 1))


_lock = threading.Lock()
_known: set[str] = set()
_scan = _Scan.of([], frozenset())


def register(*values: str | None) -> None:
    """Remember secrets this process holds; too-short values are ignored (they would redact ordinary words)."""
    global _scan
    added = {v for v in values if v and len(v) >= _MIN_SECRET and v not in _known}
    if not added:
        return
    with _lock:
        _known.update(added)
        forms = set()
        for secret in _known:
            forms.update({secret, json.dumps(secret)[1:-1], quote(secret, safe=""), quote(secret)})
        long = [s for s in _known if len(s) >= _LONG]
        _scan = _Scan.of(
            sorted((f for f in forms if len(f) >= _MIN_SECRET), key=len, reverse=True),
            frozenset(s[i : i + _FRAGMENT] for s in long for i in range(len(s) - _FRAGMENT + 1)),
        )


def reset() -> None:
    """Forget every registered secret (a process that changes its keys; tests)."""
    global _scan
    with _lock:
        _known.clear()
        _scan = _Scan.of([], frozenset())


def register_url(url: str | None) -> None:
    """Remember a URL's credentials and secret-looking query values."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return
    register(username, password, unquote(username or ""), unquote(password or ""))
    if username or password:  # what an HTTP client sends for them: Authorization: Basic base64(user:password)
        pair = f"{unquote(username or '')}:{unquote(password or '')}"
        register(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
    register(*(value for key, value in parse_qsl(parts.query) if _SECRET_QUERY.match(key)))


def redact_url(url: str) -> str:
    """The URL without its userinfo and with secret-looking query values blanked (for manifests and messages).

    Parsed by hand: an already-redacted URL ("https://[redacted]@host") is not one `urlsplit` accepts."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    netloc, tail = rest[:end], rest[end:]
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    path, qmark, query = tail.partition("?")
    query, hash_, fragment = query.partition("#")
    if qmark:
        pairs = (pair.partition("=") for pair in query.split("&") if pair)
        query = "&".join(
            f"{key}={REDACTED}" if sep and _SECRET_QUERY.match(unquote(key)) else f"{key}{sep}{value}"
            for key, sep, value in pairs
        )
    return f"{scheme}://{netloc}{path}{qmark}{query}{hash_}{fragment}"


def redact(text: str) -> str:
    """`text` with every known secret, URL credential, secret query value and bearer token replaced."""
    if not text:
        return text
    scan = _scan  # one registration's state, whatever another thread registers meanwhile
    has_form, has_run, has_scheme = scan.kinds(text)
    if has_form:
        for form in scan.forms:
            if form in text:
                text = text.replace(form, REDACTED)
    if has_run:  # the words are looked at only on a find
        text = _WORD.sub(lambda m: REDACTED if scan.is_fragment(m.group(0)) else m.group(0), text)
    if "://" in text:
        text = _URL.sub(lambda m: redact_url(m.group(0)) if _needs(m.group(0)) else m.group(0), text)
    if has_scheme:
        text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return text


def redact_data(value: Any) -> Any:
    """A JSON-like value with every string redacted (dict keys too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v) for v in value]
    return value


def _needs(url: str) -> bool:
    netloc = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]
    if "@" in netloc and not netloc.startswith(REDACTED + "@"):
        return True
    query = url.partition("?")[2].partition("#")[0]
    return any(
        _SECRET_QUERY.match(unquote(k)) and v != REDACTED for k, _, v in (p.partition("=") for p in query.split("&"))
    )
