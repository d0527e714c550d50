"""embedded_json: every top-level JSON object or array in free text, as helper agents' replies are read."""

from __future__ import annotations

from typing import Any

import pytest

from agenttest.extract import embedded_json

FENCE = "```"


def test_object_with_prose_around_it_is_found() -> None:
    assert embedded_json('Sure, here is my verdict: {"passed": true} Hope that helps!') == [{"passed": True}]


def test_object_in_a_json_fence_is_found() -> None:
    text = f'My answer:\n{FENCE}json\n{{"passed": false, "reason": "no"}}\n{FENCE}\nThanks.'
    assert embedded_json(text) == [{"passed": False, "reason": "no"}]


def test_object_in_an_unlabelled_fence_is_found() -> None:
    assert embedded_json(f'{FENCE}\n{{"a": 1}}\n{FENCE}') == [{"a": 1}]


def test_several_values_are_returned_in_order() -> None:
    text = 'first {"a": 1}, then [2, 3], and at last {"b": {"c": 4}}'
    assert embedded_json(text) == [{"a": 1}, [2, 3], {"b": {"c": 4}}]


def test_adjacent_objects_are_separate_values() -> None:
    assert embedded_json('{"a": 1}{"b": 2}') == [{"a": 1}, {"b": 2}]


def test_nested_objects_are_returned_once_as_part_of_the_top_level_one() -> None:
    assert embedded_json('{"outer": {"inner": {"deep": 1}}, "list": [{"x": 2}]}') == [
        {"outer": {"inner": {"deep": 1}}, "list": [{"x": 2}]}]


def test_array_holding_objects_is_one_value() -> None:
    assert embedded_json('[{"id": "a"}, {"id": "b"}]') == [[{"id": "a"}, {"id": "b"}]]


def test_array_of_numbers_is_found() -> None:
    assert embedded_json("the scores were [0.1, 2, -3e2] overall") == [[0.1, 2, -300.0]]


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
    ("{'name': 'Ann', 'ok': true}", {"name": "Ann", "ok": True}),
    ('Verdict: {"passed": true, "score": 0.9,} end', {"passed": True, "score": 0.9}),
], ids=["trailing-commas", "single-quotes", "trailing-comma-in-prose"])
def test_nearly_json_object_is_repaired(text: str, expected: dict[str, Any]) -> None:
    assert embedded_json(text) == [expected]


def test_nearly_json_array_is_not_repaired() -> None:
    assert embedded_json("[1, 2,]") == []


def test_prose_in_braces_is_not_taken_for_an_object() -> None:
    assert embedded_json('the set {x | x > 0} and then {"passed": true}') == [{"passed": True}]


def test_prose_in_brackets_is_not_taken_for_an_array() -> None:
    assert embedded_json("see [note 1] and [citation needed]") == []


@pytest.mark.parametrize(("text", "expected"), [
    ('{"s": "a } b { c"}', {"s": "a } b { c"}),
    ('{"s": "] [ ]]"}', {"s": "] [ ]]"}),
    ('{"s": "say \\"}\\" please"}', {"s": 'say "}" please'}),
    ('{"s": "ends in a backslash \\\\"}', {"s": "ends in a backslash \\"}),
    ('{"s": "it\'s fine"}', {"s": "it's fine"}),
], ids=["braces", "brackets", "escaped-quote-and-brace", "escaped-backslash", "apostrophe"])
def test_brackets_inside_strings_do_not_end_the_value(text: str, expected: dict[str, Any]) -> None:
    assert embedded_json(text) == [expected]


def test_escaped_backslash_before_closing_quote_does_not_swallow_the_next_object() -> None:
    assert embedded_json('{"path": "C:\\\\"} {"b": 2}') == [{"path": "C:\\"}, {"b": 2}]


def test_apostrophes_in_prose_around_json_are_ignored() -> None:
    assert embedded_json('It\'s done: {"passed": true}. Don\'t worry.') == [{"passed": True}]


def test_empty_object_and_array_are_skipped() -> None:
    assert embedded_json('{} and [] and {"a": 1} and [ ]') == [{"a": 1}]


@pytest.mark.parametrize("text", ['{"a": 1', '{"a": [1, 2}', "[[[", "}}}]]]", "", "no json at all"],
                         ids=["unclosed-object", "mismatched-brackets", "only-openers", "only-closers", "empty",
                              "prose"])
def test_unbalanced_or_missing_json_gives_nothing(text: str) -> None:
    assert embedded_json(text) == []


def test_stray_closing_brackets_before_an_object_are_skipped() -> None:
    assert embedded_json('} ] oops {"a": 1}') == [{"a": 1}]


def test_unclosed_bracket_before_an_object_does_not_hide_it() -> None:
    assert embedded_json('{ unfinished thought... {"passed": true}') == [{"passed": True}]


def test_huge_run_of_opening_braces_gives_nothing() -> None:
    assert embedded_json("{" * 200_000) == []


def test_huge_nesting_of_arrays_gives_nothing() -> None:
    assert embedded_json("[" * 100_000 + "]" * 100_000) == []


def test_it_gives_up_after_twenty_brackets_that_start_nothing() -> None:
    assert embedded_json("[x] " * 20 + '{"a": 1}') == []


def test_nineteen_brackets_that_start_nothing_do_not_stop_the_scan() -> None:
    assert embedded_json("[x] " * 19 + '{"a": 1}') == [{"a": 1}]


def test_values_found_do_not_count_as_misses() -> None:
    text = '{"n": 0} ' + " ".join(f'{{"n": {i}}}' for i in range(1, 30))
    assert embedded_json(text) == [{"n": i} for i in range(30)]


def test_only_the_first_limit_characters_are_scanned() -> None:
    text = "x" * 10 + '{"a": 1}'
    assert embedded_json(text, limit=10) == []
    assert embedded_json(text, limit=len(text) - 1) == []
    assert embedded_json(text, limit=len(text)) == [{"a": 1}]


def test_default_limit_is_two_hundred_thousand_characters() -> None:
    assert embedded_json(" " * 199_990 + '{"a": 1}') == [{"a": 1}]
    assert embedded_json(" " * 200_000 + '{"a": 1}') == []


def test_values_keep_their_json_types() -> None:
    assert embedded_json('{"t": true, "f": false, "n": null, "i": 1, "x": 1.5, "s": "é"}') == [
        {"t": True, "f": False, "n": None, "i": 1, "x": 1.5, "s": "é"}]


def test_an_apostrophe_inside_a_repaired_object_does_not_swallow_the_next_one() -> None:
    text = '{"note": "x", it\'s off} {"passed": true, "reason": "real"} and that\'s all}'
    assert {"passed": True, "reason": "real"} in embedded_json(text)


def test_a_single_quoted_string_keeps_the_brackets_inside_it() -> None:
    assert embedded_json("{'reason': 'the } is wrong', 'passed': false}") == [
        {"reason": "the } is wrong", "passed": False}]


def test_an_escaped_apostrophe_inside_a_single_quoted_string_does_not_end_it() -> None:
    assert embedded_json("{'reason': 'don\\'t } stop', 'passed': true}") == [
        {"reason": "don't } stop", "passed": True}]


# Found by mutation testing (tests/MUTATION.md)


def test_a_bracket_that_starts_nothing_gives_up_one_character_only() -> None:
    assert embedded_json('[{"a": 1}') == [{"a": 1}]
    assert embedded_json('{{"a": 1}') == [{"a": 1}]


def test_the_default_limit_ends_at_the_two_hundred_thousandth_character() -> None:
    assert embedded_json(" " * 199_992 + '{"a": 1}') == [{"a": 1}]          # 200,000 characters
    assert embedded_json(" " * 199_993 + '{"a": 1}') == []                  # 200,001: its last brace is cut off


def test_an_apostrophe_in_prose_inside_braces_starts_no_string() -> None:
    found = embedded_json('{"a": 1, it\'s off} {"b": 2}')
    assert len(found) == 2 and found[0]["a"] == 1 and found[1] == {"b": 2}


def test_a_single_quoted_key_right_after_the_first_brace_keeps_its_brackets() -> None:
    assert embedded_json("{'a}': 1}") == [{"a}": 1}]


@pytest.mark.parametrize(("text", "expected"), [
    ("{'a': 'x' }", [{"a": "x"}]), ("{'a': 'x' , 'b': 1}", [{"a": "x", "b": 1}]), ("{'a': 'x'  ", []),
    ("{'a': 'x'", [])], ids=["space-then-brace", "space-then-comma", "spaces-then-end", "quote-at-the-end"])
def test_a_single_quote_is_a_string_s_end_when_what_follows_its_spaces_ends_a_value(text: str,
                                                                                   expected: list[Any]) -> None:
    assert embedded_json(text) == expected
