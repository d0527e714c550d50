"""The masking core: the forms of a secret (as GitHub's runner computes them), overlapping secrets, and cutting
text for display without ever showing part of a secret."""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agenttest import secrets
from agenttest.agents.replies import snippet
from agenttest.report.escape import one_line, preview
from agenttest.secrets import encoded_forms, mask, mask_head, register_secret, shorten


@contextmanager
def registry(*values: str) -> Iterator[None]:
    """A registry holding only `values` for the block (the real one is process-wide)."""
    saved = secrets._SECRETS, secrets._FORMS, secrets._LONGEST
    secrets._SECRETS, secrets._FORMS, secrets._LONGEST = set(), (), 0
    try:
        for value in values:
            register_secret(value)
        yield
    finally:
        secrets._SECRETS, secrets._FORMS, secrets._LONGEST = saved


def test_forms_are_the_runners() -> None:
    """actions/runner `ValueEncoders`: JsonStringEscape, UriDataEscape (RFC 3986 unreserved kept), and
    Base64StringEscape plus Shift1/Shift2 (the UTF-8 bytes without their first one or two; padding kept)."""
    value = 'ab"c/d-é'
    data = value.encode()
    assert set(encoded_forms(value)) == {
        value, 'ab\\"c/d-é', 'ab\\"c\\/d-é', 'ab\\"c/d-\\u00e9', 'ab\\"c\\/d-\\u00e9', "ab%22c%2Fd-%C3%A9",
        base64.b64encode(data).decode(), base64.b64encode(data[1:]).decode(), base64.b64encode(data[2:]).decode()}
    assert base64.b64encode(b"ab").decode() in encoded_forms("ab")      # no more bytes than the shift: all of them


def test_every_form_is_masked_and_only_the_raw_value_is_announced(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    key = "sk-a/b+c=d\"e'f"
    with registry(key):
        assert capsys.readouterr().out == f"::add-mask::{key}\n"
        for text in (json.dumps({"k": key}), urllib.parse.quote(key, safe=""),
                     base64.b64encode(key.encode()).decode(), base64.b64encode(b"user:" + key.encode()).decode(),
                     base64.b64encode(b"u:" + key.encode()).decode(), base64.b64encode(b"up:" + key.encode()).decode()):
            assert key not in mask(text)
            assert all(form not in mask(text) for form in encoded_forms(key)), text


def test_overlapping_secrets_are_masked_as_one() -> None:
    with registry("abcdef", "defghi"):
        assert mask("x abcdefghi y") == "x *** y"
        assert mask("abcdef defghi") == "*** ***"
    with registry("aaaa"):
        assert mask("aaaaaaa!") == "***!"


def test_a_head_never_ends_inside_a_secret() -> None:
    secret = "sk-" + "q" * 20
    with registry(secret):
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
    with registry(secret):
        shown = [shorten(text, limit), snippet(text), one_line(text, max(limit, 2)), preview(text, limit),
                 mask_head(text, limit)[0][:limit], mask(text)[:limit]]
    for out in shown:
        for form in encoded_forms(secret):
            if len(form) > 1:
                assert form[:-1] not in out and form[1:] not in out, (form, out)
