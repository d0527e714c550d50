"""The masking core: the forms of a secret (as GitHub's runner computes them), overlapping secrets, and cutting
text for display without ever showing part of a secret."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agenttest.agents.replies import snippet
from agenttest.bounds import DEPTH_MARKER, MAX_DEPTH, depth
from agenttest.files import json_chunks, json_line, json_record, json_text
from agenttest.report.escape import one_line, preview
from agenttest.secrets import appears_in_json, encoded_forms, mask, mask_head, shorten
from isolation import fresh_registries


def test_forms_are_the_runners() -> None:
    """actions/runner `ValueEncoders`: JsonStringEscape, UriDataEscape (RFC 3986 unreserved kept), and
    Base64StringEscape plus Shift1/Shift2 (the UTF-8 bytes without their first one or two; padding kept); and the
    URL encodings of Python's `quote()`, which keeps `/`, and `quote_plus()`, which writes a space `+`."""
    value = 'ab"c/d-é f'
    data = value.encode()
    assert set(encoded_forms(value)) == {
        value, 'ab\\"c/d-é f', 'ab\\"c\\/d-é f', 'ab\\"c/d-\\u00e9 f', 'ab\\"c\\/d-\\u00e9 f',
        "ab%22c%2Fd-%C3%A9%20f", "ab%22c/d-%C3%A9%20f", "ab%22c%2Fd-%C3%A9+f",
        base64.b64encode(data).decode(), base64.b64encode(data[1:]).decode(), base64.b64encode(data[2:]).decode()}
    # No more bytes than the shift: all of them (never the empty string, which every text holds).
    assert set(encoded_forms("ab")) == {"YWI=", "Yg==", "ab"}
    forms = encoded_forms("sk-\ud800-x")                              # a lone surrogate is encoded as it stands
    assert base64.b64encode("sk-\ud800-x".encode("utf-8", "surrogatepass")).decode() in forms
    assert [len(form) for form in forms] == sorted(map(len, forms), reverse=True)     # longest first


def test_a_number_that_equals_a_secret_of_six_digits_or_more_is_masked_and_nothing_else_is() -> None:
    with fresh_registries("98765432", "3.14159265", "123456x", "12345", "true"):
        data = {"pin": 98765432, "as_float": 98765432.0, "pi": 3.14159265, "near": 98765433, "short": 12345,
                "bool": True, "text": "pin 98765432", "list": [98765432, None]}
        for written in (json_line(data), json_text(data), b"".join(json_chunks(data)).decode()):
            assert json.loads(written) == {"pin": "***", "as_float": "***", "pi": "***", "near": 98765433,
                                           "short": 12345, "bool": True, "text": "pin ***", "list": ["***", None]}


def test_a_secret_with_a_lone_surrogate_is_masked_in_text_and_in_json() -> None:
    secret = "pass\ud800word"
    with fresh_registries(secret):
        assert mask(f"<{secret}>") == "<***>"
        written = json.dumps({"k": secret}, ensure_ascii=False)         # as the artifacts write it
        assert mask(written) == '{"k": "***"}'
        assert appears_in_json(written) and appears_in_json(written.encode("utf-8", "surrogatepass"))


def test_a_cut_never_ends_inside_the_longest_form_of_a_secret() -> None:
    secret = "sk-" + "q" * 30
    encoded = base64.b64encode(secret.encode()).decode()                # the longest form: longer than the secret
    text = "x" * 50 + encoded + "y" * 200
    with fresh_registries(secret):
        for limit in range(0, 120):
            head, _ = mask_head(text, limit)
            assert not any(head.endswith(encoded[:n]) for n in range(1, len(encoded) + 1)), limit


def test_a_head_says_whether_it_is_the_whole_text_and_shorten_cuts_only_what_is_longer() -> None:
    with fresh_registries("sk-" + "q" * 30):
        for length in range(0, 150):
            text = "x" * length
            head, whole = mask_head(text, 40)
            assert whole == (head == text) and text.startswith(head) and (whole or len(head) >= 40), length
        assert shorten("x" * 5, 5) == "xxxxx" and shorten("abc", 10) == "abc"
        assert shorten("x" * 10, 5) == "xxxxx…" and shorten("x" * 100, 5, "...") == "xxxxx..."
        assert not appears_in_json('{"k": "nothing to hide"}') and not appears_in_json(b'{"k": "nothing"}')


def test_every_form_is_masked_and_only_the_raw_value_is_announced(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    key = "sk-a/b+c=d\"e'f"
    with fresh_registries(key):
        assert capsys.readouterr().out == f"::add-mask::{key}\n"
        for text in (json.dumps({"k": key}), urllib.parse.quote(key, safe=""), urllib.parse.quote(key),
                     urllib.parse.urlencode({"key": key}),
                     base64.b64encode(key.encode()).decode(), base64.b64encode(b"user:" + key.encode()).decode(),
                     base64.b64encode(b"u:" + key.encode()).decode(), base64.b64encode(b"up:" + key.encode()).decode()):
            assert key not in mask(text)
            assert all(form not in mask(text) for form in encoded_forms(key)), text


def test_overlapping_and_touching_secrets_are_masked_as_one() -> None:
    with fresh_registries("abcdef", "defghi"):
        assert mask("x abcdefghi y") == "x *** y"
        assert mask("abcdef defghi") == "*** ***"
        assert mask("x abcdefdefghi y") == "x *** y"              # one ends where the next begins: the runner's one
    with fresh_registries("aaaa"):
        assert mask("aaaaaaa!") == "***!"


def test_a_head_never_ends_inside_a_secret() -> None:
    secret = "sk-" + "q" * 20
    with fresh_registries(secret):
        text = (secret + " ") * 20 + "tail"
        for limit in range(0, 120):
            head, whole = mask_head(text, limit)
            assert "q" not in head and (len(head) >= limit or whole)
        assert mask_head("short", 100) == ("short", True)
        # Many secrets before the cut shrink the text: the old fixed margin let a cut secret into the preview.
        assert "qqq" not in preview("x" * 1990 + (secret + " ") * 40 + "y" * 10_000, 2000)


_SECRET = st.text(st.characters(blacklist_categories=("Cs",)), min_size=4, max_size=40).filter(lambda s: s.strip())
_FILLER = st.text(alphabet="·¦ \n", max_size=400)


@given(secret=_SECRET, before=_FILLER, after=_FILLER, limit=st.integers(0, 500))
def test_no_cut_reveals_a_secret_less_one_character(secret: str, before: str, after: str, limit: int) -> None:
    assume(not set(secret) & set("·¦ \n"))
    text = f"{before}{secret}{after}"
    with fresh_registries(secret):
        shown = [shorten(text, limit), snippet(text), one_line(text, max(limit, 2)), preview(text, limit),
                 mask_head(text, limit)[0][:limit], mask(text)[:limit]]
    for out in shown:
        out = _OUR_WORDS.sub("\0", out)    # a secret `ter0` is not revealed by the `ter` of "characters"
        for form in encoded_forms(secret):
            if len(form) > 1:
                assert form[:-1] not in out and form[1:] not in out, (form, out)


# What the cuts and the mask write themselves (report/escape.truncate's note, the mask): no part of a secret.
_OUR_WORDS = re.compile(r"… \[truncated \d+ characters[^\]]*\]|\*\*\*")


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=20)


@given(value=_JSON_VALUES, secret=st.text(min_size=4, max_size=12),
       where=st.sampled_from(["value", "key", "list", "deep key"]), before=st.text(max_size=3),
       after=st.text(max_size=3))
def test_artifacts_hold_no_secret_in_any_string_or_key(value: object, secret: str, where: str, before: str,
                                                       after: str) -> None:
    """JSON artifacts are written by orjson and searched for the secrets' escaped forms: a secret anywhere — with
    quotes, backslashes, control or non-ASCII characters — is masked in both layouts, and the JSON is the same
    data otherwise."""
    held = before + secret + after
    data = {"value": held, "other": value} if where == "value" else \
        {held: value} if where == "key" else {"items": [value, [held]]} if where == "list" else \
        {"results": [value, {held: [held]}], "summary": {held: value}}
    with fresh_registries(secret):
        for text in (json_line(data), json_record(data), json_text(data), b"".join(json_chunks(data))):
            strings = _strings(json.loads(text))
            assert not [s for s in strings if secret in s]
            assert [s for s in strings if "***" in s]


@given(value=_JSON_VALUES)
def test_artifacts_without_a_secret_are_the_data_as_written(value: object) -> None:
    with fresh_registries("sk-never-in-there"):
        assert json.loads(json_line({"v": value})) == {"v": value}
        assert json_record({"v": value}) == json_line({"v": value}).encode("utf-8")
        assert json.loads(json_text({"v": value})) == {"v": value}
        for data in ({"v": value}, value, [value, {"results": [value, value]}], {"a": {"b": [value]}}):
            assert b"".join(json_chunks(data)) == json_text(data).encode("utf-8")   # written in pieces, the same
        for items in ([], [value], [value, value]):     # an array from an iterator (CTRF's tests) as its list
            lazy = {"results": {"tests": iter(items)}}
            assert b"".join(json_chunks(lazy)) == json_text({"results": {"tests": items}}).encode("utf-8")
        assert _floats_spelt_alike(json_text({"v": value})) == \
            _floats_spelt_alike(json.dumps({"v": value}, ensure_ascii=False, indent=2) + "\n")


def _strings(value: object) -> list[str]:
    """Every string of a JSON value, keys included."""
    if isinstance(value, dict):
        return [*value, *(s for child in value.values() for s in _strings(child))]
    if isinstance(value, list):
        return [s for child in value for s in _strings(child)]
    return [value] if isinstance(value, str) else []


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')      # a JSON string or number


def _floats_spelt_alike(text: str) -> str:
    """JSON text with every float written as Python's repr writes it (orjson writes 0.00001 where json writes 1e-05);
    strings and integers as they are."""
    def respell(token: re.Match[str]) -> str:
        word = token.group()
        return word if word.startswith('"') or not set(word) & set(".eE") else repr(float(word))
    return _TOKEN.sub(respell, text)


def test_a_lone_surrogate_and_a_very_deep_value_still_make_strict_json() -> None:
    deep: object = "bottom"
    for _ in range(3000):                # deeper than orjson writes: the json module and the depth cut take over
        deep = [deep]
    with fresh_registries("sk-secret-value"):
        line = json_line({"s": "\ud800 sk-secret-value", "deep": deep})
    assert "\\ud800" in line and "sk-secret-value" not in line and "***" in line
    assert DEPTH_MARKER in line and depth(json.loads(line)) <= MAX_DEPTH + 1
