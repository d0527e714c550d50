"""extract_json: the port of Yao's gou/text.ExtractJSON, quirks and deliberate divergences."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenttest.extract import extract_json

FENCE = "```"


@pytest.mark.parametrize(("text", "expected"), [
    ('{"passed": true, "reason": "ok"}', {"passed": True, "reason": "ok"}),
    ('  [1, 2, {"a": null}]  ', [1, 2, {"a": None}]),
    (f'{FENCE}json\n{{"message": "hi", "goal_achieved": false}}\n{FENCE}', {"message": "hi", "goal_achieved": False}),
    (f'Sure! Here it is:\n\n{FENCE}json\n{{"a": 1}}\n{FENCE}\n\nAnything else?', {"a": 1}),
    (f'{FENCE}JSON\n{{"a": 1}}\n{FENCE}', {"a": 1}),                      # the fence language is lower-cased
    (f'{FENCE}\n{{"a": 1}}\n{FENCE}', {"a": 1}),                          # no language: detected from the content
    (f'{FENCE}json {{"inline": true}}{FENCE}', {"inline": True}),
    (f'{FENCE}json\n42\n{FENCE}', 42),                                    # any JSON value in an explicit json fence
], ids=["bare-object", "bare-array", "fenced", "fenced-in-prose", "upper-case-lang", "unlabelled-fence",
        "one-line-fence", "fenced-scalar"])
def test_json_found(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
    ("{'name': 'Ann', 'ok': True}", {"name": "Ann", "ok": True}),
    ('{name: "Ann"}', {"name": "Ann"}),
    ('{"items": [1, 2', {"items": [1, 2]}),                              # truncated output
    ('{\n  // the answer\n  "a": 1, /* inline */ "b": "http://x.org"\n}', {"a": 1, "b": "http://x.org"}),
    ('{"url": "http://x.org",}', {"url": "http://x.org"}),               # Go's JSONC branch has no repair
    ('{"a": 1} and then some prose', {"a": 1}),
], ids=["trailing-commas", "single-quotes", "unquoted-keys", "truncated", "comments", "comment-like-url",
        "trailing-prose"])
def test_broken_json_is_repaired(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("---\nname: Ann\ntags: [a, b]\n", {"name": "Ann", "tags": ["a", "b"]}),
    (f"{FENCE}yaml\nname: Ann\nage: 30\n{FENCE}", {"name": "Ann", "age": 30}),
    (f"{FENCE}yml\n- a\n- b: 1\n{FENCE}", ["a", {"b": 1}]),             # Go finds nothing in a YAML list
    ("status: active\ncount: 3", {"status": "active", "count": 3}),
    # The first-line `": "` rule: a plain-text reply with a colon is YAML (the simulator quirk of reference §3.2).
    ("Sure: I'd like a latte", {"Sure": "I'd like a latte"}),
    ("Here is the result: {a: 1}", {"Here is the result": {"a": 1}}),
    # Scalars resolve as Go's yaml.v3 does, not as YAML 1.1.
    ("answer: yes\nswitch: on\nflag: true", {"answer": "yes", "switch": "on", "flag": True}),
    ("time: 10:30\nday: 2024-02-30\nnumber: 1e3", {"time": "10:30", "day": "2024-02-30", "number": 1000.0}),
    ("1: one\nnull: two", {"1": "one", "null": "two"}),                  # keys become strings
    ("---\na: 1\n---\nb: 2", {"a": 1}),                                  # first document only
], ids=["document-start", "fenced-yaml", "fenced-yaml-list", "key-value-text", "prose-with-colon",
        "prose-with-flow-map", "booleans", "times-and-dates", "non-string-keys", "multi-document"])
def test_yaml(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", [
    "",
    "   \n  ",
    "Hello, how can I help you today?",
    'Here is the result: {"a": 1}',                  # leading prose without a fence: `":` is not YAML
    f'{FENCE}python\n{{"a": 1}}\n{FENCE}',           # a python fence is code even when its content is JSON
    f"{FENCE}\ndef f():\n    return {{'a': 1}}\n{FENCE}",
    f"{FENCE}sql\nSELECT a: 1\n{FENCE}",
    "# Report\n\nstatus: ok",                        # markdown heading first
    "SELECT name: x FROM users",
    "null",
    f"{FENCE}json\nnull\n{FENCE}",
    f"{FENCE}json\nnot json at all\n{FENCE}",       # repair is only tried on content starting with { or [
    "Note: this: that",                             # detected as YAML, but not valid YAML
    "[" * 5000,                                     # deeper than any parser's recursion limit
    "a: &a [*a]",                                   # a recursive YAML alias
], ids=["empty", "blank", "prose", "prose-then-json", "python-fence", "unlabelled-python", "sql-fence", "markdown",
        "sql", "json-null", "fenced-null", "fenced-prose", "invalid-yaml", "deep-nesting", "recursive-alias"])
def test_no_data(text: str) -> None:
    assert extract_json(text) is None


def test_outside_text_is_ignored_once_a_fence_exists() -> None:
    text = f'{{"outside": 1}}\n{FENCE}json\n{{"inside": 2}}\n{FENCE}'
    assert extract_json(text) == {"inside": 2}


def test_first_block_with_data_wins() -> None:
    text = (f"{FENCE}python\nprint('x')\n{FENCE}\n{FENCE}json\nnull\n{FENCE}\n"
            f'{FENCE}json\n{{"first": 1}}\n{FENCE}\n{FENCE}json\n{{"second": 2}}\n{FENCE}')
    assert extract_json(text) == {"first": 1}


def test_yao_verified_json_path_documents() -> None:
    # The documents behind reference §2.5 and the documentation fixtures of §8.2, as an LLM would write them.
    assert extract_json('{"search_types":["db"]}') == {"search_types": ["db"]}
    assert extract_json(f'{FENCE}json\n{{"need_search": true}}\n{FENCE}') == {"need_search": True}
    assert extract_json('{"result": {"count": 5}, "items": [{"name": "first"}]}') == {
        "result": {"count": 5}, "items": [{"name": "first"}]}
    assert extract_json('{"action":"init","config":{"default_currency":"USD"}}') == {
        "action": "init", "config": {"default_currency": "USD"}}


def test_alias_bomb_is_refused() -> None:
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(8)]
    assert extract_json("\n".join(lines)) is None      # expanding its 10⁹ strings would not end


_FRAGMENTS = st.sampled_from([
    FENCE, "```json\n", "```yaml\n", "```python\n", "\n", "{", "}", "[", "]", '"', "'", ":", ": ", ",", "//", "/*",
    "*/", "---", "- ", "&a ", "*a", "!!binary ", "#", "key", "1", "true", "null", "<div>", "SELECT ", "\\",
])


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    extract_json(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=5)), max_size=30).map("".join))
def test_structured_looking_text_never_raises(text: str) -> None:
    extract_json(text)


# Found by mutation testing (tests/MUTATION.md)


def test_yaml_nulls_binary_and_keys_that_are_not_text_become_json() -> None:
    text = f"{FENCE}yaml\nnothing: null\nraw: !!binary /w==\ntrue: 1\n~: 2\n{FENCE}"     # /w== is the byte 0xff
    assert extract_json(text) == {"nothing": None, "raw": "\ufffd", "true": 1, "null": 2}


def _aliased(nodes: int) -> str:
    """A YAML document that aliases expand to `nodes` values (the mapping, its lists, their items)."""
    document = "l: &a [" + ", ".join(["x"] * 276) + "]\nm: [" + ", ".join(["*a"] * 360) + "]\nz: 0"
    return document + "".join(f"\nk{i}: 0" for i in range(nodes - 100_000))


def test_a_yaml_document_of_a_hundred_thousand_values_is_read_and_one_more_is_not() -> None:
    assert len(extract_json(f"{FENCE}yaml\n{_aliased(100_000)}\n{FENCE}")["m"]) == 360
    assert extract_json(f"{FENCE}yaml\n{_aliased(100_001)}\n{FENCE}") is None
