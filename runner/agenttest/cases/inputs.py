"""Chat messages from a case's `input`: a string, one message or a history, with `file://` attachments loaded.

A port of Yao's `ParseInputWithOptions` (reference §1.4) that is stricter where Yao silently drops things:
non-object messages, parts and tool calls, unknown message keys, non-string fields and parts without a `type` are
errors naming their place (`input[0].content[1]: …`). `file://` paths resolve against the suite file's directory
and must stay inside the repository, symlinks included. Differences from Yao: an assistant message may omit
`content` when it has `tool_calls`; `image_url.url` and `file.url` with `file://` are loaded too instead of being
sent verbatim; parts of unknown types are kept as written instead of being cut down to `{type, text}`.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents.base import MESSAGE_KEYS
from ..assertions.base import json_type
from ..hints import did_you_mean
from ..workspace import UnsafePath, checked_file

FILE_SCHEME = "file://"
MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024     # an attachment is sent whole, base64-encoded, in every request

_PART_TYPES = "text, image, image_url, audio, input_audio, file, data"

_IMAGE_MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
               ".webp": "image/webp", ".bmp": "image/bmp"}
_AUDIO_FORMAT = {".wav": "wav", ".mp3": "mp3", ".flac": "flac", ".ogg": "ogg", ".m4a": "m4a"}
_FILE_MIME = {
    ".pdf": "application/pdf", ".doc": "application/msword",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xls": "application/vnd.ms-excel",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".txt": "text/plain", ".csv": "text/csv", ".json": "application/json", ".xml": "application/xml",
    ".html": "text/html", ".htm": "text/html", ".md": "text/markdown", ".yao": "application/json",
    ".ts": "text/typescript", ".tsx": "text/typescript", ".js": "text/javascript", ".jsx": "text/javascript",
    ".go": "text/x-go", ".py": "text/x-python", ".rs": "text/x-rust", ".java": "text/x-java", ".c": "text/x-c",
    ".h": "text/x-c", ".cpp": "text/x-c++", ".hpp": "text/x-c++", ".rb": "text/x-ruby", ".php": "text/x-php",
    ".sh": "text/x-shellscript", ".bash": "text/x-shellscript", ".zsh": "text/x-shellscript",
    ".sql": "text/x-sql", ".yaml": "text/yaml", ".yml": "text/yaml", ".toml": "text/x-toml", ".ini": "text/x-ini",
    ".conf": "text/plain", ".css": "text/css", ".scss": "text/x-scss", ".less": "text/x-less",
    ".vue": "text/x-vue", ".svelte": "text/x-svelte",
}


class InputError(Exception):
    """A problem in a case's `input`; `field` is its place (`input[0].content[1]`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass
class _Attachments:
    """Where `file://` paths resolve (`base_dir`) and the directory they must stay inside (`repo_root`)."""

    base_dir: Path
    repo_root: Path

    def read(self, source: str, field: str) -> tuple[bytes, Path]:
        """The bytes of a `file://` reference and its resolved path; InputError when it cannot be read."""
        relative = source[len(FILE_SCHEME):]
        if not relative:
            raise InputError(field, f"{source!r} names no file")
        try:
            path = checked_file(self.base_dir / relative, self.repo_root, source, limit=MAX_ATTACHMENT_BYTES)
            return path.read_bytes(), path
        except UnsafePath as exc:
            raise InputError(field, str(exc)) from None
        except OSError as exc:
            raise InputError(field, f"cannot read {source}: {exc.strerror or exc}") from None

    def data_url(self, source: str, field: str, mime_table: dict[str, str]) -> tuple[str, Path]:
        data, path = self.read(source, field)
        mime = mime_table.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
        return f"data:{mime or 'application/octet-stream'};base64,{_b64(data)}", path


def normalize_input(value: Any, *, base_dir: Path, repo_root: Path) -> list[dict[str, Any]]:
    """The chat messages of a case's `input`, attachments loaded. Raises InputError naming the field."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    files = _Attachments(base_dir, repo_root)
    if isinstance(value, dict):
        return [_message(value, "input", files)]
    if isinstance(value, list):
        if not value:
            raise InputError("input", "the message list is empty")
        return [_message(item, f"input[{i}]", files) for i, item in enumerate(value)]
    raise InputError("input", f"expected a string, a message object or an array of messages, got {json_type(value)}")


def _message(item: Any, field: str, files: _Attachments) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise InputError(field, f"expected a message object, got {json_type(item)}")
    for key in item:
        if key not in MESSAGE_KEYS:
            raise InputError(field, f"unknown message key {key!r}{did_you_mean(key, MESSAGE_KEYS)}")
    role = _optional_str(item, "role", field) or "user"
    if "content" not in item and "tool_calls" not in item:
        raise InputError(field, "message requires a 'content' field")
    message: dict[str, Any] = {"role": role, "content": _content(item.get("content"), f"{field}.content", files)}
    for key in ("name", "tool_call_id", "refusal"):
        text = _optional_str(item, key, field)
        if text is not None:
            message[key] = text
    if item.get("tool_calls") is not None:
        message["tool_calls"] = _tool_calls(item["tool_calls"], f"{field}.tool_calls")
    return message


def _content(content: Any, field: str, files: _Attachments) -> Any:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, dict):
        return [_part(content, field, files)]
    if isinstance(content, list):
        return [_part(part, f"{field}[{i}]", files) for i, part in enumerate(content)]
    raise InputError(field, f"expected a string, an array of content parts or one part object, "
                            f"got {json_type(content)}")


def _part(part: Any, field: str, files: _Attachments) -> dict[str, Any]:
    if not isinstance(part, dict):
        raise InputError(field, f"expected a content part object, got {json_type(part)}")
    kind = part.get("type")
    if not isinstance(kind, str) or not kind:
        raise InputError(field, f"content part requires a 'type' ({_PART_TYPES})")
    if kind == "text":
        return {"type": "text", "text": _optional_str(part, "text", field) or ""}
    if kind == "image":
        return _image(part, field, files)
    if kind == "image_url":
        return _image_url(part, field, files)
    if kind in ("audio", "input_audio"):
        return _audio(part, field, files)
    if kind == "file":
        return _file(part, field, files)
    if kind == "data":
        data = part.get("data")
        if not isinstance(data, dict):
            raise InputError(field, "data part requires a 'data' object")
        return {"type": "data", "data": data}
    return dict(part)


def _image(part: dict[str, Any], field: str, files: _Attachments) -> dict[str, Any]:
    detail = _optional_str(part, "detail", field) or "auto"
    source = _source(part, field)
    if source is not None:
        url, _ = files.data_url(source, field, _IMAGE_MIME)
        return {"type": "image_url", "image_url": {"url": url, "detail": detail}}
    url = _optional_str(part, "url", field)
    if url is None:
        raise InputError(field, "image part requires 'source' (file://...) or 'url' field")
    return {"type": "image_url", "image_url": {"url": _maybe_file_url(url, field, files, _IMAGE_MIME),
                                               "detail": detail}}


def _image_url(part: dict[str, Any], field: str, files: _Attachments) -> dict[str, Any]:
    image = part.get("image_url")
    if not isinstance(image, dict):
        raise InputError(field, "image_url part requires an 'image_url' object")
    url = _optional_str(image, "url", f"{field}.image_url")
    if url is None:
        raise InputError(f"{field}.image_url", "requires a 'url' string")
    detail = _optional_str(image, "detail", f"{field}.image_url") or "auto"
    return {"type": "image_url", "image_url": {**image, "url": _maybe_file_url(url, field, files, _IMAGE_MIME),
                                               "detail": detail}}


def _audio(part: dict[str, Any], field: str, files: _Attachments) -> dict[str, Any]:
    source = _source(part, field)
    if source is not None:
        data, path = files.read(source, field)
        suffix = path.suffix.lower()
        audio_format = _AUDIO_FORMAT.get(suffix, suffix.lstrip("."))
        return {"type": "input_audio", "input_audio": {"data": _b64(data), "format": audio_format}}
    if "data" in part:
        data = _optional_str(part, "data", field) or ""
        return {"type": "input_audio", "input_audio": {"data": data,
                                                       "format": _optional_str(part, "format", field) or ""}}
    audio = part.get("input_audio")
    if isinstance(audio, dict):
        inner = f"{field}.input_audio"
        return {"type": "input_audio", "input_audio": {**audio, "data": _optional_str(audio, "data", inner) or "",
                                                       "format": _optional_str(audio, "format", inner) or ""}}
    raise InputError(field, "audio part requires 'source' (file://...) or 'data'/'input_audio' field")


def _file(part: dict[str, Any], field: str, files: _Attachments) -> dict[str, Any]:
    name = _optional_str(part, "name", field)
    source = _source(part, field)
    if source is not None:
        url, path = files.data_url(source, field, _FILE_MIME)
        return {"type": "file", "file": {"url": url, "filename": name or path.name}}
    url = _optional_str(part, "url", field)
    if url is not None:
        filename = _optional_str(part, "filename", field) or name or ""
        return {"type": "file", "file": {"url": _maybe_file_url(url, field, files, _FILE_MIME), "filename": filename}}
    file = part.get("file")
    if isinstance(file, dict):
        inner = f"{field}.file"
        url = _optional_str(file, "url", inner)
        out = dict(file)
        if url is not None:
            out["url"] = _maybe_file_url(url, field, files, _FILE_MIME)
        return {"type": "file", "file": out}
    raise InputError(field, "file part requires 'source' (file://...), 'url', or 'file' field")


def _tool_calls(calls: Any, field: str) -> list[dict[str, Any]]:
    if not isinstance(calls, list):
        raise InputError(field, f"expected an array of tool calls, got {json_type(calls)}")
    out = []
    for i, call in enumerate(calls):
        place = f"{field}[{i}]"
        if not isinstance(call, dict):
            raise InputError(place, f"expected a tool call object, got {json_type(call)}")
        function = call.get("function")
        if not isinstance(function, dict):
            raise InputError(place, "tool call requires a 'function' object with 'name' and 'arguments'")
        name = _optional_str(function, "name", f"{place}.function")
        if not name:
            raise InputError(f"{place}.function", "requires a 'name' string")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
        out.append({"id": _optional_str(call, "id", place) or "", "type": _optional_str(call, "type", place) or
                    "function", "function": {"name": name, "arguments": arguments}})
    return out


def _source(part: dict[str, Any], field: str) -> str | None:
    source = _optional_str(part, "source", field)
    if source is not None and not source.startswith(FILE_SCHEME):
        raise InputError(field, f"'source' must be a file:// path, got {source!r} (use 'url' for links)")
    return source


def _maybe_file_url(url: str, field: str, files: _Attachments, mime_table: dict[str, str]) -> str:
    """A `file://` URL loaded as a data URL (Yao sends it verbatim, which no agent can open); others unchanged."""
    return files.data_url(url, field, mime_table)[0] if url.startswith(FILE_SCHEME) else url


def _optional_str(obj: dict[str, Any], key: str, field: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InputError(f"{field}.{key}", f"expected a string, got {json_type(value)}")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
