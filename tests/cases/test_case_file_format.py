"""Reading suite files: JSONL, JSON arrays, comments, encodings, and line numbers of every entry."""

from __future__ import annotations

import ctypes
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from case_files import Load, write

from agenttest.cases import Case, InvalidCase, Suite

LoadText = Callable[..., Suite]


def _lines(suite: Suite) -> list[tuple[str | None, int | None]]:
    return [(entry.id, entry.line) for entry in suite.entries]


def test_blank_and_comment_lines_are_skipped_but_counted(load_text: LoadText) -> None:
    suite = load_text('\n// a comment\n   // indented comment\n{"id": "A", "input": "x"}\n\n\t\n'
                      '{"id": "B", "input": "y"}')
    assert _lines(suite) == [("A", 4), ("B", 7)]
    assert all(isinstance(entry, Case) for entry in suite.entries)


def test_hash_is_not_a_comment(load_text: LoadText) -> None:
    [entry] = load_text("# not a comment\n").entries
    assert isinstance(entry, InvalidCase)
    assert entry.message == "invalid test case: invalid JSON: Expecting value at column 1"
    assert entry.line == 1


def test_bom_and_crlf_are_tolerated(load_text: LoadText) -> None:
    suite = load_text('\ufeff{"id": "A", "input": "x"}\r\n\r\n{"id": "B", "input": "y"}\r\n'.encode())
    assert _lines(suite) == [("A", 1), ("B", 3)]
    assert all(isinstance(entry, Case) for entry in suite.entries)


def test_bom_and_crlf_in_an_array_file(load_text: LoadText) -> None:
    suite = load_text('\ufeff[\r\n  {"id": "A", "input": "x"},\r\n  {"id": "B", "input": "y"}\r\n]\r\n'.encode())
    assert _lines(suite) == [("A", 2), ("B", 3)]


def test_a_line_that_does_not_parse_does_not_stop_the_others(load_text: LoadText) -> None:
    suite = load_text('{"id": "A", "input": "x"}\n{"id": "B", "input": }\n{"id": "C", "input": "z"}\n')
    a, b, c = suite.entries
    assert isinstance(a, Case) and isinstance(c, Case)
    assert isinstance(b, InvalidCase)
    assert (b.message, b.file, b.line, b.id) == (
        "invalid test case: invalid JSON: Expecting value at column 22", "tests/suite.jsonl", 2, None)


def test_json_error_column_counts_the_indentation(load_text: LoadText) -> None:
    [entry] = load_text('    {"id": 1,}\n').entries
    with pytest.raises(json.JSONDecodeError) as caught:     # the json module's words: 3.13 has its own for this
        json.loads('{"id": 1,}')
    assert entry.message == f"invalid test case: invalid JSON: {caught.value.msg} at column {caught.value.colno + 4}"


def test_pretty_printed_objects_get_a_hint(load_text: LoadText) -> None:
    entries = load_text('{\n  "id": "A",\n  "input": "x"\n}\n').entries
    assert [entry.line for entry in entries] == [1, 2, 3, 4]
    assert entries[0].message == (
        "invalid test case: invalid JSON: Expecting property name enclosed in double quotes at column 2 (each line "
        "must be one complete JSON object; write multi-line cases as a JSON array file)")


def test_two_objects_on_one_line(load_text: LoadText) -> None:
    [entry] = load_text('{"id": "A", "input": "x"} {"id": "B", "input": "y"}\n').entries
    assert entry.message == "invalid test case: invalid JSON: Extra data at column 27 (one JSON object per line)"


def test_a_line_that_is_not_an_object(load_text: LoadText) -> None:
    entries = load_text('"just a string"\n42\nnull\n').entries
    assert [entry.message for entry in entries] == [
        "invalid test case: expected a JSON object, got string",
        "invalid test case: expected a JSON object, got number",
        "invalid test case: expected a JSON object, got null",
    ]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_refused(load_text: LoadText, constant: str) -> None:
    [entry] = load_text(f'{{"id": "A", "input": "x", "expected": {constant}}}\n').entries
    assert entry.message == f"invalid test case: invalid JSON: {constant} is not valid JSON"


def test_a_repeated_key_is_an_error(load_text: LoadText) -> None:
    [entry] = load_text('{"id": "A", "input": "x", "assert": {"type": "contains", "value": "a"}, '
                        '"assert": {"type": "contains", "value": "b"}}\n').entries
    assert isinstance(entry, InvalidCase)
    assert (entry.message, entry.id, entry.input) == (
        "invalid test case: duplicate key 'assert' in one JSON object", "A", "x")


def test_deep_nesting_is_an_error_not_a_crash(load_text: LoadText) -> None:
    [entry] = load_text("[" * 100_000 + "\n").entries
    assert entry.message.startswith("invalid test case: invalid JSON")
    [entry] = load_text('{"id": "A", "input": "x", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n").entries
    assert entry.message == "invalid test case: invalid JSON: nested too deeply"


def test_huge_integer_is_an_error_not_a_crash(load_text: LoadText) -> None:
    [entry] = load_text('{"id": "A", "input": "x", "expected": ' + "9" * 5000 + "}\n").entries
    assert isinstance(entry, InvalidCase)
    assert entry.message.startswith("invalid test case: invalid JSON: ")


# -- JSON array files ----------------------------------------------------------------------------------------------


def test_array_file_gives_each_element_the_line_where_it_starts(load_text: LoadText) -> None:
    text = """// cases as one array
[
  {
    "id": "A",
    "input": "x"
  },
  // a comment inside the array
  {"id": "B", "input": "y"}, {"id": "C",
    "input": "z"},
  {"id": "D", "input": "w"},
]
"""
    suite = load_text(text, name="tests/suite.json")
    assert _lines(suite) == [("A", 3), ("B", 8), ("C", 8), ("D", 10)]
    assert all(isinstance(entry, Case) for entry in suite.entries)


def test_array_elements_are_validated_one_by_one(load_text: LoadText) -> None:
    suite = load_text('[{"id": "A", "input": "x"},\n 7,\n {"id": "C"},\n {"id": "D", "input": "w"}]')
    a, seven, c, d = suite.entries
    assert isinstance(a, Case) and isinstance(d, Case)
    assert (seven.message, seven.line) == ("invalid test case: expected a JSON object, got number", 2)
    assert (c.message, c.line, c.id) == ("invalid test case: missing required field 'input'", 3, "C")


def test_array_syntax_error_keeps_the_elements_before_it(load_text: LoadText) -> None:
    suite = load_text('[\n{"id": "A", "input": "x"},\n{"id": "B" "input": "y"},\n{"id": "C", "input": "z"}\n]')
    a, error = suite.entries
    assert isinstance(a, Case)
    assert (error.message, error.line) == ("invalid test case: invalid JSON: Expecting ',' delimiter at column 12", 3)


@pytest.mark.parametrize(("text", "message", "line"), [
    ('[\n{"id": "A", "input": "x"}\n', "invalid JSON: the array is not closed (missing ']')", 3),
    ('[\n{"id": "A", "input": "x"}', "invalid JSON: the array is not closed (missing ']')", 2),
    ('[\n{"id": "A", "input": "x"} x\n]', "invalid JSON: expected ',' or ']' after an array element", 2),
    ('[\n{"id": "A", "input": "x"}\n]\n{"id": "B"}', "invalid JSON: unexpected content after the array", 4),
])
def test_array_structure_errors(load_text: LoadText, text: str, message: str, line: int) -> None:
    *cases, error = load_text(text).entries
    assert [case.id for case in cases] == ["A"]
    assert (error.message, error.line) == (f"invalid test case: {message}", line)


def test_empty_array_and_empty_file_have_no_entries(load_text: LoadText) -> None:
    assert load_text("[]").entries == []
    assert load_text("").entries == []
    assert load_text("// only a comment\n\n").entries == []


# -- encodings and unreadable files ----------------------------------------------------------------------------------


def test_a_line_that_is_not_utf8_is_its_own_invalid_case(load_text: LoadText) -> None:
    suite = load_text(b'{"id": "A", "input": "x"}\n{"id": "B", "input": "caf\xe9"}\n{"id": "C", "input": "z"}\n')
    a, b, c = suite.entries
    assert isinstance(a, Case) and isinstance(c, Case)
    assert (b.message, b.line) == ("invalid test case: line is not valid UTF-8 (byte 0xe9 at byte 26 of the line)", 2)


def test_an_array_file_that_is_not_utf8_is_one_invalid_case(load_text: LoadText) -> None:
    [entry] = load_text(b'[\n{"id": "A", "input": "x"},\n{"id": "B", "input": "\xff"}\n]').entries
    assert (entry.message, entry.line) == (
        "invalid test case: the file is not valid UTF-8 (byte 0xff at byte 23 of the line)", 3)


def test_utf16_file_is_one_invalid_case(load_text: LoadText) -> None:
    [entry] = load_text('{"id": "A", "input": "x"}\n'.encode("utf-16")).entries
    assert (entry.message, entry.line) == ("invalid test case: the file is UTF-16 encoded; save it as UTF-8", 1)


def _without_root_file_access() -> None:
    """In a child about to run Python: drop the capabilities by which root reads any file whatever its mode
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), as every machine here runs the tests as root."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:      # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_unreadable_file_is_one_invalid_case_and_the_rest_still_loads(repo: Path) -> None:
    write(repo / "locked.jsonl", '{"id": "A", "input": "x"}\n').chmod(0)
    write(repo / "ok.jsonl", '{"id": "B", "input": "x"}\n')
    script = ("import json, pathlib\n"
              "from agenttest.cases import Case, load_suite\n"
              "locked, ok = load_suite(['locked.jsonl', 'ok.jsonl'], cwd=pathlib.Path.cwd(),\n"
              "                        repo_root=pathlib.Path.cwd()).entries\n"
              "print(json.dumps([locked.message, locked.file, locked.line, isinstance(ok, Case)]))\n")
    loaded = subprocess.run([sys.executable, "-c", script], cwd=repo, preexec_fn=_without_root_file_access,
                            capture_output=True, text=True, check=True)
    assert json.loads(loaded.stdout) == [
        "invalid test case: cannot read suite file: Permission denied", "locked.jsonl", 1, True]


def test_broken_symlink_in_a_directory_is_one_invalid_case(repo: Path, load: Load) -> None:
    write(repo / "tests/ok.jsonl", '{"id": "B", "input": "x"}\n')
    (repo / "tests/broken.jsonl").symlink_to(repo / "tests/nowhere.jsonl")
    broken, ok = load("tests").entries
    assert (broken.message, broken.file, broken.line) == (
        "invalid test case: suite file tests/broken.jsonl not found (nowhere.jsonl)", "tests/broken.jsonl", 1)
    assert isinstance(ok, Case)


def test_read_error_is_one_invalid_case_and_the_rest_still_loads(repo: Path, load: Load,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    locked = write(repo / "locked.jsonl", '{"id": "A", "input": "x"}\n')
    write(repo / "ok.jsonl", '{"id": "B", "input": "x"}\n')
    opened = Path.open

    def refuse(path: Path, *args: Any, **kwargs: Any) -> Any:
        if path == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return opened(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    denied, ok = load("locked.jsonl", "ok.jsonl").entries
    assert (denied.message, denied.file, denied.line) == (
        "invalid test case: cannot read suite file: Permission denied", "locked.jsonl", 1)
    assert isinstance(ok, Case)


def test_a_file_that_cannot_be_read_further_ends_with_an_entry_saying_so(repo: Path, load: Load,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    broken = write(repo / "broken.jsonl", '{"id": "A", "input": "x"}\n{"id": "B", "input": "y"}\n'
                                          '{"id": "C", "input": "z"}\n')
    opened = Path.open

    class Failing(io.BufferedReader):
        """The disk gives the first line, then an I/O error (a file read a line at a time)."""

        def __next__(self) -> bytes:
            if self.tell() > 0:
                raise OSError(5, "Input/output error")
            return super().__next__()

    def failing(path: Path, *args: Any, **kwargs: Any) -> Any:
        file = opened(path, *args, **kwargs)
        return Failing(file.detach()) if path == broken else file

    monkeypatch.setattr(Path, "open", failing)
    first, cut = load("broken.jsonl").entries
    assert isinstance(first, Case) and first.id == "A"
    assert (cut.message, cut.line) == ("invalid test case: cannot read suite file: Input/output error", 2)


def test_only_json_whitespace_may_precede_the_array_bracket(load_text: LoadText) -> None:
    [entry] = load_text('\x0b[{"id": "A", "input": "x"}]\n').entries
    assert (entry.message, entry.line) == ("invalid test case: expected a JSON object, got array", 1)
