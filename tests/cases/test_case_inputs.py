"""A case's `input` into chat messages: strings, messages, histories, content parts and `file://` attachments."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from case_files import Load, jsonl, write

from agenttest.cases import Case, InvalidCase
from agenttest.cases.inputs import InputError, normalize_input

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


def _normalize(value: Any, base_dir: Path, repo_root: Path | None = None) -> list[dict[str, Any]]:
    return normalize_input(value, base_dir=base_dir, repo_root=repo_root or base_dir)


def _error(value: Any, base_dir: Path, repo_root: Path | None = None) -> str:
    with pytest.raises(InputError) as caught:
        _normalize(value, base_dir, repo_root)
    return str(caught.value)


def _image(path: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image", "source": path}]}


# -- shapes --------------------------------------------------------------------------------------------------------


def test_string_is_one_user_message(tmp_path: Path) -> None:
    assert _normalize("Hello", tmp_path) == [{"role": "user", "content": "Hello"}]
    assert _normalize("", tmp_path) == [{"role": "user", "content": ""}]


def test_object_is_one_message_and_role_defaults_to_user(tmp_path: Path) -> None:
    assert _normalize({"content": "Hi"}, tmp_path) == [{"role": "user", "content": "Hi"}]
    assert _normalize({"role": "system", "content": None, "name": "sys"}, tmp_path) == [
        {"role": "system", "content": None, "name": "sys"}]


def test_array_is_a_history(tmp_path: Path) -> None:
    history = [
        {"role": "user", "content": "I want to submit an expense"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "function": {"name": "lookup", "arguments": {"q": "policy"}}},
            {"id": "c2", "type": "function", "function": {"name": "noop", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\": true}"},
        {"role": "assistant", "tool_calls": [{"function": {"name": "submit"}}]},
        {"role": "user", "content": "Yes, confirm", "refusal": None},
    ]
    assert _normalize(history, tmp_path) == [
        {"role": "user", "content": "I want to submit an expense"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "policy"}'}},
            {"id": "c2", "type": "function", "function": {"name": "noop", "arguments": "{}"}}]},
        {"role": "tool", "content": "{\"ok\": true}", "tool_call_id": "c1"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "", "type": "function", "function": {"name": "submit", "arguments": "{}"}}]},
        {"role": "user", "content": "Yes, confirm"},
    ]


def test_content_parts(tmp_path: Path) -> None:
    content = [
        {"type": "text", "text": "First"},
        {"type": "text"},
        {"type": "image_url", "image_url": {"url": "https://example.com/image.jpg", "detail": "high"}},
        {"type": "image", "url": "https://example.com/a.png"},
        {"type": "audio", "data": "UklGRg==", "format": "wav"},
        {"type": "input_audio", "input_audio": {"data": "AAA=", "format": "mp3"}},
        {"type": "file", "url": "https://example.com/r.pdf", "name": "r.pdf"},
        {"type": "file", "file": {"file_id": "file-123"}},
        {"type": "data", "data": {"sources": [{"type": "model", "id": "users"}]}},
        {"type": "input_text", "text": "kept as written", "cache_control": {"type": "ephemeral"}},
    ]
    [message] = _normalize({"role": "user", "content": content}, tmp_path)
    assert message["content"] == [
        {"type": "text", "text": "First"},
        {"type": "text", "text": ""},
        {"type": "image_url", "image_url": {"url": "https://example.com/image.jpg", "detail": "high"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "auto"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "input_audio", "input_audio": {"data": "AAA=", "format": "mp3"}},
        {"type": "file", "file": {"url": "https://example.com/r.pdf", "filename": "r.pdf"}},
        {"type": "file", "file": {"file_id": "file-123"}},
        {"type": "data", "data": {"sources": [{"type": "model", "id": "users"}]}},
        {"type": "input_text", "text": "kept as written", "cache_control": {"type": "ephemeral"}},
    ]


def test_one_part_object_is_wrapped_in_a_list(tmp_path: Path) -> None:
    [message] = _normalize({"content": {"type": "text", "text": "hi"}}, tmp_path)
    assert message["content"] == [{"type": "text", "text": "hi"}]


# -- file:// attachments -------------------------------------------------------------------------------------------


def test_image_file_becomes_a_data_url(tmp_path: Path) -> None:
    write(tmp_path / "tests/fixtures/receipt.png", PNG)
    [message] = _normalize(_image("file://fixtures/receipt.png"), tmp_path / "tests", tmp_path)
    assert message["content"][1] == {"type": "image_url", "image_url": {
        "url": "data:image/png;base64," + base64.b64encode(PNG).decode(), "detail": "auto"}}


def test_dot_slash_absolute_and_parent_paths_inside_the_repository(tmp_path: Path) -> None:
    write(tmp_path / "assets/logo.JPG", b"jpeg")
    expected = "data:image/jpeg;base64," + base64.b64encode(b"jpeg").decode()
    for source in ("file://../assets/logo.JPG", f"file://{tmp_path}/assets/logo.JPG", "file://./../assets/logo.JPG"):
        [message] = _normalize(_image(source), tmp_path / "tests", tmp_path)
        assert message["content"][1]["image_url"]["url"] == expected, source


def test_audio_and_file_attachments(tmp_path: Path) -> None:
    write(tmp_path / "a/voice.mp3", b"ID3")
    write(tmp_path / "a/report.pdf", b"%PDF")
    write(tmp_path / "a/notes.unknownext", b"x")
    [message] = _normalize({"content": [
        {"type": "audio", "source": "file://voice.mp3"},
        {"type": "file", "source": "file://report.pdf"},
        {"type": "file", "source": "file://report.pdf", "name": "Q3.pdf"},
        {"type": "file", "source": "file://notes.unknownext"},
        {"type": "image_url", "image_url": {"url": "file://report.pdf"}},
    ]}, tmp_path / "a", tmp_path)
    audio, pdf, named, unknown, image_url = message["content"]
    assert audio == {"type": "input_audio", "input_audio": {"data": base64.b64encode(b"ID3").decode(),
                                                           "format": "mp3"}}
    assert pdf == {"type": "file", "file": {"url": "data:application/pdf;base64,JVBERg==", "filename": "report.pdf"}}
    assert named["file"]["filename"] == "Q3.pdf"
    assert unknown["file"]["url"] == "data:application/octet-stream;base64,eA=="
    assert image_url["image_url"]["url"] == "data:application/pdf;base64,JVBERg=="


def test_a_path_escaping_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(tmp_path / "secret.png", PNG)
    assert _error(_image("file://../../secret.png"), repo / "tests", repo) == (
        "input.content[1]: file://../../secret.png is outside the repository")
    assert _error(_image(f"file://{tmp_path}/secret.png"), repo / "tests", repo) == (
        f"input.content[1]: file://{tmp_path}/secret.png is outside the repository")
    assert _error(_image("file://../../etc/passwd"), repo / "tests", repo) == (
        "input.content[1]: file://../../etc/passwd is outside the repository")


def test_a_symlink_escaping_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(tmp_path / "secret.png", PNG)
    write(repo / "tests/ok.png", PNG)
    (repo / "tests/innocent.png").symlink_to(tmp_path / "secret.png")
    (repo / "tests/outside").symlink_to(tmp_path)
    assert _error(_image("file://innocent.png"), repo / "tests", repo) == (
        "input.content[1]: file://innocent.png is outside the repository")
    assert _error(_image("file://outside/secret.png"), repo / "tests", repo) == (
        "input.content[1]: file://outside/secret.png is outside the repository")
    (repo / "tests/inside.png").symlink_to(repo / "tests/ok.png")
    assert _normalize(_image("file://inside.png"), repo / "tests", repo)[0]["content"][1]["type"] == "image_url"


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    assert _error(_image("file://fixtures/missing.png"), tmp_path / "tests", tmp_path) == (
        "input.content[1]: file://fixtures/missing.png not found (tests/fixtures/missing.png)")
    (tmp_path / "tests/dir").mkdir(parents=True)
    assert _error(_image("file://dir"), tmp_path / "tests", tmp_path) == "input.content[1]: file://dir is not a file"
    assert _error(_image("file://"), tmp_path, tmp_path) == "input.content[1]: 'file://' names no file"


def test_a_symlink_loop_is_an_error_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert _error(_image("file://loop"), tmp_path, tmp_path).startswith("input.content[1]: ")


# -- errors name their place ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "message"), [
    (5, "input: expected a string, a message object or an array of messages, got number"),
    (True, "input: expected a string, a message object or an array of messages, got boolean"),
    ([], "input: the message list is empty"),
    (["hi"], "input[0]: expected a message object, got string"),
    ([{"role": "user"}], "input[0]: message requires a 'content' field"),
    ({"role": "user", "contnet": "x"}, "input: unknown message key 'contnet' (did you mean 'content'?)"),
    ([{"content": "a"}, {"role": 3, "content": "b"}], "input[1].role: expected a string, got number"),
    ({"content": 5}, "input.content: expected a string, an array of content parts or one part object, got number"),
    ({"content": ["x"]}, "input.content[0]: expected a content part object, got string"),
    ({"content": [{"text": "x"}]},
     "input.content[0]: content part requires a 'type' (text, image, image_url, audio, input_audio, file, data)"),
    ({"content": [{"type": "text", "text": 5}]}, "input.content[0].text: expected a string, got number"),
    ([{"content": "a"}, {"content": [{"type": "text", "text": "a"}, {"type": "image"}]}],
     "input[1].content[1]: image part requires 'source' (file://...) or 'url' field"),
    ({"content": [{"type": "image", "source": "https://x/a.png"}]},
     "input.content[0]: 'source' must be a file:// path, got 'https://x/a.png' (use 'url' for links)"),
    ({"content": [{"type": "image_url"}]}, "input.content[0]: image_url part requires an 'image_url' object"),
    ({"content": [{"type": "image_url", "image_url": {}}]}, "input.content[0].image_url: requires a 'url' string"),
    ({"content": [{"type": "audio"}]},
     "input.content[0]: audio part requires 'source' (file://...) or 'data'/'input_audio' field"),
    ({"content": [{"type": "file"}]},
     "input.content[0]: file part requires 'source' (file://...), 'url', or 'file' field"),
    ({"content": [{"type": "data", "data": []}]}, "input.content[0]: data part requires a 'data' object"),
    ({"role": "assistant", "content": None, "tool_calls": {}},
     "input.tool_calls: expected an array of tool calls, got object"),
    ({"role": "assistant", "content": None, "tool_calls": [1]},
     "input.tool_calls[0]: expected a tool call object, got number"),
    ({"role": "assistant", "content": None, "tool_calls": [{"name": "x"}]},
     "input.tool_calls[0]: tool call requires a 'function' object with 'name' and 'arguments'"),
    ({"role": "assistant", "content": None, "tool_calls": [{"function": {}}]},
     "input.tool_calls[0].function: requires a 'name' string"),
])
def test_input_errors_name_the_field(tmp_path: Path, value: Any, message: str) -> None:
    assert _error(value, tmp_path) == message


# -- through the loader --------------------------------------------------------------------------------------------


def test_file_urls_resolve_against_the_suite_directory(repo: Path, load: Load) -> None:
    write(repo / "suites/img/cat.png", PNG)
    write(repo / "suites/s.jsonl", jsonl({"id": "T1", "input": _image("file://img/cat.png")},
                                         {"id": "T2", "input": [_image("file://../../outside.png")]}))
    ok, escaped = load("suites/s.jsonl").entries
    assert isinstance(ok, Case)
    assert ok.input == _image("file://img/cat.png")  # the raw input is kept for the report
    assert ok.messages[0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert isinstance(escaped, InvalidCase)
    assert (escaped.id, escaped.line, escaped.input) == ("T2", 2, [_image("file://../../outside.png")])
    assert escaped.message == (
        "invalid test case: input[0].content[1]: file://../../outside.png is outside the repository")
