"""Secret values (API keys, `${…}` header values, URL credentials) that must never reach an artifact or a log line.

A secret is masked in every form GitHub's runner masks (`ValueEncoders` in actions/runner): as it is, JSON-escaped,
URL-encoded (`Uri.EscapeDataString`), and base64-encoded at its three byte alignments (the whole UTF-8 value, and
the value without its first one or two bytes, so `base64("user:" + secret)` is caught too). JSON-escaped means both
as Python writes it (`ensure_ascii` on and off) and with `/` written `\\/`, as some servers do; URL-encoded also as
Python's `quote()` (which keeps `/`) and `quote_plus()` (`urlencode`'s: a space is `+`) write it. Only the raw value
goes to `::add-mask::`: the runner derives the encoded forms itself.

Masking runs on every string of every artifact, so it is a plain substring search per form (which CPython runs far
faster than one regular expression of all forms), and only for a text that holds some form are the occurrences
found and merged, overlapping ones into one `***`, as the runner does.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from typing import Any

from .github.environment import in_github_actions
from .github.log import add_mask

MASK = "***"
_MIN_LENGTH = 4   # masking "a" or "12" would mangle ordinary text
# A JSON number is masked when it equals a secret of at least this many digits. Shorter ones would collide with the
# durations, token counts and case counts agenttest writes itself (a 4-digit PIN equals some token total of a run
# of a few thousand calls), turning them into "***", which report readers (`merge`, `--baseline`) refuse. Booleans
# and null are never masked: a secret spelt `true` hides nothing, and would turn every verdict into "***".
_MIN_NUMBER_DIGITS = 6
_SECRETS: set[str] = set()
_NUMBERS: frozenset[float] = frozenset()    # the secrets that are numbers
_FORMS: tuple[str, ...] = ()          # every form of every secret, longest first
_JSON_FORMS: tuple[str, ...] = ()     # …and each as it shows inside a JSON string
_JSON_FORMS_UTF8: tuple[bytes, ...] = ()
_LONGEST = 0                          # length of the longest form
_lock = threading.Lock()


def encoded_forms(value: str) -> list[str]:
    """`value` in every form a log or an artifact may show it: raw, JSON-escaped, URL-encoded, base64 (3 ways)."""
    data = value.encode("utf-8", errors="surrogatepass")
    json_forms = {json.dumps(value, ensure_ascii=ascii)[1:-1] for ascii in (False, True)}
    forms = {value, *json_forms, *(form.replace("/", "\\/") for form in json_forms),
             urllib.parse.quote(data, safe=""), urllib.parse.quote(data), urllib.parse.quote_plus(data, safe="")}
    for shift in (0, 1, 2):   # the runner encodes the whole value when it has no more than `shift` bytes
        forms.add(base64.b64encode(data[shift:] if len(data) > shift else data).decode("ascii"))
    return sorted(forms, key=len, reverse=True)


def register_secret(value: str) -> None:
    """Remember `value` for masking; in GitHub Actions also ask the runner to mask it (once, before any use),
    outside the run's stop-commands block, where the runner would ignore the request (see github.log)."""
    global _FORMS, _JSON_FORMS, _JSON_FORMS_UTF8, _LONGEST, _NUMBERS
    if len(value) < _MIN_LENGTH:
        return
    with _lock:
        if value in _SECRETS:
            return
        _SECRETS.add(value)
        number = _as_number(value)
        if number is not None:
            _NUMBERS = _NUMBERS | {number}
        forms = {form for secret in _SECRETS for form in encoded_forms(secret)}
        _FORMS = tuple(sorted(forms, key=len, reverse=True))
        _JSON_FORMS = tuple({json.dumps(form, ensure_ascii=False)[1:-1] for form in _FORMS})
        _JSON_FORMS_UTF8 = tuple(form.encode("utf-8", errors="surrogatepass") for form in _JSON_FORMS)
        _LONGEST = len(_FORMS[0])
    if in_github_actions():
        add_mask(value)


def secret_count() -> int:
    """How many secrets are registered (what was shown masked before a new one may need masking again)."""
    return len(_SECRETS)


def registered_secrets() -> list[str]:
    """The registered values (raw), longest first."""
    return sorted(_SECRETS, key=len, reverse=True)


def _spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds a form of a secret: sorted, overlapping and touching occurrences merged."""
    found = []
    for form in _FORMS:
        if form in text:
            start = text.find(form)
            while start >= 0:
                found.append((start, start + len(form)))
                start = text.find(form, start + 1)
    if not found:
        return []
    found.sort()
    merged = [found[0]]
    for start, end in found[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    pieces = []
    done = 0
    for start, end in spans:
        pieces += [text[done:start], MASK]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def mask(text: str) -> str:
    """`text` with every form of every registered secret replaced by ***."""
    if not _FORMS:
        return text
    spans = _spans(text)
    return _masked(text, spans) if spans else text


def mask_head(text: str, limit: int) -> tuple[str, bool]:
    """The masked form of a head of `text` at least `limit` characters long once masked (or of all of it), and
    whether that head is the whole text. The head never ends inside a secret, so cutting the result anywhere
    shows no part of one; only the head is searched, so a 100 MB reply costs no more than its preview."""
    size = limit + _LONGEST
    while size < len(text):
        head = text[:size]
        spans = _spans(head)
        end = size - _LONGEST + 1     # a secret starting before `end` ends inside the head: it was found whole
        kept = [(start, stop) for start, stop in spans if start < end]
        if kept and kept[-1][1] > end:
            end = kept[-1][1]
        shown = _masked(head[:end], kept)
        if len(shown) >= limit:
            return shown, False
        size *= 2
    return mask(text), True


def shorten(text: str, limit: int, ellipsis: str = "…") -> str:
    """`text` masked, then cut to `limit` characters (and `ellipsis`) when longer: how text is cut for display."""
    head, whole = mask_head(text, limit)
    return head if whole and len(head) <= limit else head[:limit] + ellipsis


def appears_in_json(text: str | bytes) -> bool:
    """Whether JSON text (as `json.dumps(ensure_ascii=False)` or orjson writes it, or its UTF-8) may hold a secret
    in one of its strings: JSON escapes character by character, so a string holding a form holds its escaped form
    once written (and UTF-8 encodes character by character too)."""
    if isinstance(text, bytes):
        return any(form in text for form in _JSON_FORMS_UTF8)
    return any(form in text for form in _JSON_FORMS)


def redacts_nothing(text: str | bytes) -> bool:
    """Whether `redact` leaves the value whose JSON `text` is (see `appears_in_json`) as it is, to its JSON: none
    of its strings holds a form of a secret, and no secret is a number."""
    return not _NUMBERS and not appears_in_json(text)


def redact(value: Any) -> Any:
    """A JSON-like structure with every secret masked in its strings (keys included), and every number that equals a
    secret which is a number (an account number an agent echoed as `{"pin": 98765432}`) replaced by `"***"`."""
    if not _FORMS:
        return value
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {redact(k): redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value in _NUMBERS:
        return MASK
    return value


def _as_number(value: str) -> float | None:
    """The number a secret is, when it is one written as JSON writes it with at least _MIN_NUMBER_DIGITS digits."""
    if sum(char.isdigit() for char in value) < _MIN_NUMBER_DIGITS:
        return None
    try:
        number = json.loads(value)
    except (ValueError, RecursionError):
        return None
    if isinstance(number, bool) or not isinstance(number, (int, float)) or json.dumps(number) != value:
        return None
    return number
