"""What each `-i` value names: a file, a directory, a glob, a direct message, or a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest
from case_files import Load, jsonl, write

from agenttest.cases import Case
from agenttest.errors import UsageError


def _ids(suite) -> list[str | None]:
    return [entry.id for entry in suite.entries]


def test_jsonl_file(repo: Path, load: Load) -> None:
    write(repo / "tests/a.jsonl", jsonl({"id": "A1", "input": "hi"}, {"id": "A2", "input": "yo"}))
    suite = load("tests/a.jsonl")
    assert _ids(suite) == ["A1", "A2"]
    assert suite.files == ["tests/a.jsonl"]
    first = suite.entries[0]
    assert isinstance(first, Case)
    assert (first.file, first.line, first.base_dir) == ("tests/a.jsonl", 1, repo / "tests")
    assert first.messages == [{"role": "user", "content": "hi"}]


def test_any_existing_file_is_a_suite_whatever_its_suffix(repo: Path, load: Load) -> None:
    write(repo / "cases.txt", jsonl({"id": "A", "input": "hi"}))
    write(repo / "cases.json", '[{"id": "B", "input": "hi"}]')
    assert _ids(load("cases.txt", "cases.json")) == ["A", "B"]


def test_file_path_is_shown_relative_to_cwd_with_forward_slashes(repo: Path, load: Load) -> None:
    write(repo / "tests/a.jsonl", jsonl({"id": "A", "input": "hi"}))
    suite = load("./tests/../tests/a.jsonl")
    assert suite.files == ["tests/a.jsonl"]
    assert suite.entries[0].file == "tests/a.jsonl"
    assert load(str(repo / "tests/a.jsonl")).entries[0].file == "tests/a.jsonl"


def test_file_outside_cwd_is_shown_absolute(repo: Path, load: Load) -> None:
    write(repo / "other/a.jsonl", jsonl({"id": "A", "input": "hi"}))
    (repo / "work").mkdir()
    suite = load("../other/a.jsonl", cwd=repo / "work")
    assert suite.files == [(repo / "other/a.jsonl").as_posix()]


def test_directory_loads_every_jsonl_below_it_sorted(repo: Path, load: Load) -> None:
    write(repo / "tests/b.jsonl", jsonl({"id": "B", "input": "x"}))
    write(repo / "tests/a.jsonl", jsonl({"id": "A", "input": "x"}))
    write(repo / "tests/sub/c.jsonl", jsonl({"id": "C", "input": "x"}))
    write(repo / "tests/notes.json", jsonl({"id": "NOT", "input": "x"}))
    write(repo / "tests/.cache/d.jsonl", jsonl({"id": "HIDDEN", "input": "x"}))
    suite = load("tests")
    assert suite.files == ["tests/a.jsonl", "tests/b.jsonl", "tests/sub/c.jsonl"]
    assert _ids(suite) == ["A", "B", "C"]


def test_a_directory_skips_what_pytest_skips_builds_packages_and_virtualenvs(repo: Path, load: Load) -> None:
    write(repo / "tests/a.jsonl", jsonl({"id": "A", "input": "x"}))
    for copy in ("build/lib/pkg/templates", "dist", "node_modules/x", "pkg.egg", "env/lib"):
        write(repo / copy / "copy.jsonl", jsonl({"id": "COPY", "input": "x"}))
    write(repo / "env" / "pyvenv.cfg", "home = /usr/bin\n")
    suite = load(".")
    assert suite.files == ["tests/a.jsonl"]


def test_a_directory_skips_the_events_jsonl_an_earlier_run_wrote_but_not_a_suite_so_named(repo: Path,
                                                                                           load: Load) -> None:
    """A shard's or a baseline's artifacts under the directory: their events.jsonl is no suite (it made a dozen
    invalid cases of every event); a suite the user named events.jsonl still is one."""
    write(repo / "tests/a.jsonl", jsonl({"id": "A", "input": "x"}))
    write(repo / "shard1/events.jsonl", '{"type":"start","timestamp":"2026-12-03T10:00:00+00:00","agent_id":"a"}\n'
                                        '{"type":"result","id":"A","status":"passed"}\n')
    write(repo / "tests/events.jsonl", jsonl({"id": "E", "input": "x"}))
    suite = load(".")
    assert suite.files == ["tests/a.jsonl", "tests/events.jsonl"] and _ids(suite) == ["A", "E"]
    with pytest.raises(UsageError) as hinted:
        load("shard2/events.jsonl")
    assert "shard1" not in str(hinted.value)


def test_directory_without_jsonl_is_a_usage_error(repo: Path, load: Load) -> None:
    (repo / "empty").mkdir()
    with pytest.raises(UsageError, match=r"^-i empty: no \*\.jsonl files in this directory$"):
        load("empty")


def test_glob_is_sorted_and_recursive(repo: Path, load: Load) -> None:
    write(repo / "tests/z.jsonl", jsonl({"id": "Z", "input": "x"}))
    write(repo / "tests/deep/er/a.jsonl", jsonl({"id": "A", "input": "x"}))
    write(repo / "tests/skip.txt", jsonl({"id": "T", "input": "x"}))
    suite = load("tests/**/*.jsonl")
    assert suite.files == ["tests/deep/er/a.jsonl", "tests/z.jsonl"]
    assert _ids(load("*.json*", cwd=repo / "tests")) == ["Z"]


def test_glob_matching_nothing_is_a_usage_error(load: Load) -> None:
    with pytest.raises(UsageError, match=r"^-i tests/\*\*/\*\.jsonl: no such file or directory$"):
        load("tests/**/*.jsonl")


def test_missing_suite_file_is_a_usage_error_naming_it(load: Load) -> None:
    with pytest.raises(UsageError) as caught:
        load("tests/missing.jsonl")
    assert str(caught.value) == "-i tests/missing.jsonl: no such file or directory"
    with pytest.raises(UsageError, match=r"-i cases\.JSON: no such file or directory"):
        load("cases.JSON")


@pytest.mark.parametrize(("value", "hint"), [
    ("tests/agnets/", " (did you mean tests/agents/?)"),
    ("./basic", " (did you mean tests/agents/basic.jsonl?)"),
    ("tests\\agents\\basics.jsonl", " (did you mean tests/agents/basic.jsonl or tests/agents/?)"),
    ("tests/*.yaml", " (suites here: other.jsonl, tests/agents/basic.jsonl)"),
    ("x/zzzzzzzzzz", " (suites here: other.jsonl, tests/agents/basic.jsonl)"),
    ("What?", " (suites here: other.jsonl, tests/agents/basic.jsonl)"),
    ("2*3", " (suites here: other.jsonl, tests/agents/basic.jsonl)"),
    ("tests/missing.txt", " (suites here: other.jsonl, tests/agents/basic.jsonl)"),
    ("look at a/b? please", " (suites here: other.jsonl, tests/agents/basic.jsonl)"),
])
def test_a_value_that_looks_like_a_path_is_one_and_missing_names_the_nearest_suites(
        repo: Path, load: Load, value: str, hint: str) -> None:
    write(repo / "tests/agents/basic.jsonl", jsonl({"id": "A", "input": "x"}))
    write(repo / "other.jsonl", jsonl({"id": "B", "input": "x"}))
    with pytest.raises(UsageError) as caught:
        load(value)
    assert str(caught.value) == f"-i {value}: no such file or directory{hint}"


def test_generator_inputs_are_kept_in_input_order_with_typed_parameters(load: Load, tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "a.jsonl").write_text('{"id": "A", "input": "x"}\n')
    suite = load("agents:tests.generator?count=10&focus=edge-cases&t=0.5&v=true", "tests/a.jsonl",
                 "scripts:tests.gen.Generate")
    [(first_at, first), (second_at, second)] = suite.generators
    assert (first_at, first.kind, first.ref) == (0, "agent", "tests.generator")
    assert first.params == {"count": 10, "focus": "edge-cases", "t": 0.5, "v": True}
    assert (second_at, second.kind, second.ref, second.params) == (1, "script", "tests.gen.Generate", {})
    assert [e.id for e in suite.entries] == ["A"]


@pytest.mark.parametrize(("value", "message"), [
    ("agents:", "-i agents:: names no agent after 'agents:'"),
    ("scripts:gen", "-i scripts:gen: a script generator is module.function (e.g. scripts:gen.cases)"),
    ("agents:gen?count", "-i agents:gen?count: malformed parameters 'count' (bad query field: 'count'); "
                         "write key=value&key=value"),
])
def test_a_malformed_generator_input_is_a_usage_error(load: Load, value: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        load(value)
    assert str(caught.value) == message


def test_empty_value_is_a_usage_error(load: Load) -> None:
    with pytest.raises(UsageError, match="empty input"):
        load("  ")


def test_usage_errors_come_before_any_loading(repo: Path, load: Load) -> None:
    write(repo / "a.jsonl", "not json\n")
    with pytest.raises(UsageError):
        load("a.jsonl", "missing.jsonl")


@pytest.mark.parametrize("text", ["Hello, how are you?", "What is 2*3?", "basic", "x" * 5000, "nul\x00byte"])
def test_anything_else_is_a_direct_message(repo: Path, load: Load, text: str) -> None:
    [case] = load(text).entries
    assert isinstance(case, Case)
    assert (case.id, case.input, case.file, case.line, case.base_dir) == ("T001", text, None, None, repo)
    assert case.messages == [{"role": "user", "content": text}]
    assert case.raw == {"id": "T001", "input": text}


def test_several_values_concatenate_in_order(repo: Path, load: Load) -> None:
    write(repo / "a.jsonl", jsonl({"id": "A", "input": "x"}))
    write(repo / "b.jsonl", jsonl({"id": "B", "input": "x"}))
    suite = load("b.jsonl", "first message", "a.jsonl", "second message")
    assert _ids(suite) == ["B", "T001", "A", "T002"]
    assert suite.files == ["b.jsonl", "a.jsonl"]


def test_same_file_named_twice_is_loaded_once(repo: Path, load: Load) -> None:
    write(repo / "tests/a.jsonl", jsonl({"id": "A", "input": "x"}))
    (repo / "link.jsonl").symlink_to(repo / "tests/a.jsonl")
    suite = load("tests/a.jsonl", "tests", "./tests/a.jsonl", "tests/*.jsonl", "link.jsonl")
    assert _ids(suite) == ["A"]
    assert suite.files == ["tests/a.jsonl"]


def test_a_direct_message_numbered_like_a_file_case_is_another_case(repo: Path, load: Load) -> None:
    write(repo / "a.jsonl", jsonl({"id": "T001", "input": "x"}))
    file_case, message = load("a.jsonl", "hello").entries
    assert isinstance(file_case, Case) and isinstance(message, Case)
    assert (file_case.key, message.key) == (("a.jsonl", "T001"), ("", "T001"))
