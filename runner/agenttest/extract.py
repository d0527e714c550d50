"""Structured data (JSON or YAML) pulled out of an LLM's free text: a port of Yao's `gou/text.ExtractJSON`.

The algorithm (reference §3.4): fenced blocks first, matched by ```` (?s)```(\\w*)\\s*\\n?(.*?)\\n?``` ```` with the
language lower-cased and, when empty, detected from the content; without any fence, the whole text as one block
when a language is detected. Only `json`, `yaml` and `yml` blocks can yield data; the first one that does wins. Text
outside the fences is ignored as soon as one fence exists, and a ```` ```python ```` fence is never data.

Parsing a block follows `gou/json.Parse`: YAML when the content looks like `key: value`, else strict JSON, then JSON
with `//` and `/* */` comments stripped, then repair by `json_repair` (trailing commas, single quotes, unquoted
keys, truncation).

Deliberate divergences from Go:
- Repair runs only on content that starts with `{` or `[`, because `json_repair` turns almost any prose into some
  value. In Go the repair step is skipped for content containing `//` or `/*` (its JSONC branch), so
  `{"url": "http://x",}` gives nothing there; here it is repaired. A repair must give an object or array.
- YAML is read by PyYAML's safe loader with plain scalars resolved as Go's `yaml.v3` resolves them into
  `interface{}`: only `true`/`false` are booleans (`yes`, `on` stay strings), timestamps stay strings, and `10:30` is
  a string, not YAML 1.1's base-60 number 630. Keys become strings, and the result holds only JSON types. Only the
  first document of a stream is read, and a document that aliases expand past 100,000 nodes gives nothing.
- A `yaml`/`yml` block whose first line is not `key: value` (a list such as `- a`) is read as YAML when it is not
  JSON, and counts when it gives an object or array; Go reads it only as JSON and finds nothing.
- Strict JSON rejects `NaN` and `Infinity`, as Go's decoder does (a repair may still produce them).
- No input raises: anything a parser throws (including recursion limits) means "no data in this block".

Helper agents' replies are read from their end instead (`last_answer`, `last_object`): a judge's verdict is the
structured answer its reply ends with, JSON or YAML, whatever the output under test it quoted before it.
"""

from __future__ import annotations

import datetime
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from .bounds import MAX_DEPTH

_BRACKETS = re.compile(r"[{}\[\]]")
_FENCE = re.compile(r"```(\w*)\s*\n?(.*?)\n?```", re.DOTALL | re.ASCII)
_DATA_LANGUAGES = ("json", "yaml", "yml")

_HTML_PREFIXES = ("<!DOCTYPE", "<html", "<div", "<span", "<p>", "<head", "<body", "<script", "<style", "<table",
                  "<form")
_XML_PREFIXES = ("<?xml", "<root", "<item", "<node")
_SQL_PREFIXES = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "DROP ", "ALTER ")
_TYPESCRIPT_MARKERS = ("interface ", ": string", ": number", ": boolean", ": any", "as const")
_CSS_MARKERS = ("margin:", "padding:", "display:", "color:", "background:", "font-")

# Brackets that start no JSON value before `embedded_json` gives up (each costs a scan of the rest of the text).
_MAX_MISSES = 20

# The most of a helper's reply read for its answer, from its end (`_read_back`); and the most characters all the
# backward walks of one reading may step through (a reply of 4,000,000 `}` would otherwise take a minute).
MAX_SCANNED = 4_000_000
# The longest object repaired (json_repair takes ~10 s a million characters); a longer one must be strict JSON.
_MAX_REPAIRED = 200_000

# A YAML document expanded through aliases can be exponentially larger than its text ("billion laughs").
_MAX_YAML_NODES = 100_000


def extract_json(text: str) -> Any | None:
    """The first JSON or YAML value found in `text`, or None when there is none."""
    for language, content in _blocks(text):
        if language in _DATA_LANGUAGES:
            data = _parse(content, yaml_block=language != "json")
            if data is not None:
                return data
    return None


def embedded_json(text: str, limit: int = 200_000) -> list[Any]:
    """Every top-level JSON object or array written somewhere in `text`, in order: fenced or bare, with prose
    around them, repaired when they are nearly JSON (trailing commas, single quotes). What helper agents reply is
    read with this; unlike `extract_json` it never takes prose for YAML. Only the first `limit` characters count."""
    text = text[:limit]
    found: list[Any] = []
    pos, misses = 0, 0
    while misses < _MAX_MISSES:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        end = _closing(text, start)
        value = _parse_embedded(text[start:end]) if end is not None else None
        if value is None:
            misses += 1
            pos = start + 1            # not JSON from here: an inner `{` may still start some
            continue
        found.append(value)
        pos = end
    return found


def last_object(text: str, wanted: Callable[[dict[str, Any]], bool], limit: int = 200_000, *,
                at_end: bool = False, widest: int = MAX_SCANNED) -> dict[str, Any] | None:
    """The object a reply ends with — what a helper answers after its reasoning — read backwards from the end of
    `text`, so nothing written before it (a quoted output holding a forged answer, brackets that never close, a
    stray quote) can hide it or stand in for it. Objects `wanted` rejects are passed over (a helper may add one
    after its answer). Returns None when there is no wanted object, when a `{` after it starts no readable object
    (the answer itself is broken: what comes before it is no answer), after _MAX_MISSES closing braces that end no
    object or MAX_SCANNED characters walked back from them (they are tried from the end: the tail is never given
    up; an object longer than _MAX_REPAIRED must be strict JSON), or — `at_end` — when anything but whitespace
    or a closing fence follows it (the reply is then prose that may quote an object, not an object). The last
    `limit` characters are read, or the last `widest` when the answer starts before them (`_read_back`)."""
    def read(window: str, cut: bool) -> _Found | None:
        found = _json_answer(window, wanted, cut)
        if at_end and found is not None and window[found.end:].strip() not in ("", "```"):
            return None
        return found
    return _read_back(text, limit, widest, read)


def last_answer(text: str, wanted: Callable[[dict[str, Any]], bool], limit: int = 200_000, *,
                widest: int = MAX_SCANNED) -> dict[str, Any] | None:
    """The structured answer a reply ends with, whatever its syntax: of its last wanted JSON object (as
    `last_object` finds it) and its last wanted block of YAML `key: value` lines (fenced or bare, `_yaml_answer`),
    the one that comes last; prose may follow it. A structure that comes last but cannot be read (a `{` that never
    closes, YAML that does not parse) means no answer, never one written before it."""
    def read(window: str, cut: bool) -> _Found | None:
        json_found = _json_answer(window, wanted, cut)
        yaml_found = _yaml_answer(window, wanted, cut, after=json_found.start if json_found else -1)
        # An object that ends inside the YAML block is part of it (`reason: it said {"passed": true}.`); one that
        # ends with it is too when the block reads as YAML (`{'passed': true, 'x': '` quoted, then `reason: a}`),
        # else it is what the reply ends with (`passed: true` quoted, then `Verdict: → {"passed": false}`).
        if yaml_found is not None and (json_found is None or yaml_found.end > json_found.end or (
                yaml_found.end == json_found.end and yaml_found.value is not None)):
            return yaml_found
        return json_found
    return _read_back(text, limit, widest, read)


@dataclass(frozen=True)
class _Found:
    """A structure found in a reply: the answer it holds (None: it cannot be read), and where it lies."""

    value: dict[str, Any] | None
    start: int
    end: int


class _Cut(Exception):
    """The structure read from the end of a window of the reply starts before the window."""


def _read_back(text: str, limit: int, widest: int, read: Callable[[str, bool], _Found | None]) -> Any | None:
    """What `read` finds in the last `limit` characters of `text`. When the structure it reads there starts before
    them (a judge's verdict whose `reason` quotes a long output: only its end is in the window, and an object quoted
    inside it would pass for the answer), in the last `widest`; when it starts before those too, nothing: a
    fragment of an answer is no answer."""
    window = limit
    while True:
        cut = window < len(text)
        try:
            found = read(text[-window:] if cut else text, cut)
        except _Cut:
            if window >= widest:
                return None
            window = widest
            continue
        return found.value if found is not None else None


def _json_answer(text: str, wanted: Callable[[dict[str, Any]], bool], cut: bool) -> _Found | None:
    """`last_object`'s reading of `text`, a window of the reply (`cut`: its start is not the reply's). _Cut when
    the object a closing brace ends may start before the window."""
    end, misses, walked = len(text), 0, 0
    while misses < _MAX_MISSES and walked < MAX_SCANNED:
        last = text.rfind("}", 0, end)
        opened = text.rfind("{", last + 1, end)
        if opened >= 0:              # an object after the last that closes: the answer is broken
            return _Found(None, opened, opened + 1)
        if last < 0:
            return None
        start = _opening(text, last)
        if start is None and cut:
            raise _Cut
        walked += last - (start or 0)
        value = None
        # Read backwards and forwards, the span must be the same one: a repair never reaches past it.
        if start is not None and text[start] == "{" and _closing(text, start) == last + 1:
            value = _parse_embedded(text[start:last + 1])
        if not isinstance(value, dict):
            misses += 1
            end = last
        elif wanted(value):
            return _Found(value, start, last + 1)
        else:
            end = start
    return None


def _yaml_answer(text: str, wanted: Callable[[dict[str, Any]], bool], cut: bool, after: int) -> _Found | None:
    """The last block of YAML lines in `text` that ends after `after` and whose top-level keys `wanted` accepts
    (`_yaml_lines`: from the first `key: value` line of a run of YAML lines to its last line). Fences and prose
    lines around it do not matter. Its value is None when it is not YAML (`reason: it said: hi`). Blocks of other
    keys are passed over; only the answer's block is parsed. _Cut when it may start before the window."""
    lines = text.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    in_block = _yaml_lines(lines, cut)
    index = len(lines) - 1
    while index >= 0:
        if not in_block[index]:
            index -= 1
            continue
        last = index
        while index >= 0 and in_block[index]:
            index -= 1
        first = index + 1
        keys = [(number, key.group(1)) for number in range(first, last + 1) if (key := _yaml_key(lines[number]))]
        end = starts[last] + len(lines[last].rstrip())
        if end <= after:
            return None
        if not keys or not wanted(dict.fromkeys(key for _, key in keys)):
            continue
        if cut and first <= 1:       # the window's first line is a piece of one: the block may start before
            raise _Cut
        begin = keys[0][0]
        value = _load_yaml("\n".join(lines[begin:last + 1]))
        return _Found(value if isinstance(value, dict) else None, starts[begin], end)
    return None


# A top-level YAML key: a plain word at the start of a line, then a colon and a space or the line's end.
_YAML_KEY = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+|$)")
# What follows the key of a line that an indented value follows: nothing (a nested mapping or list) or a block
# scalar's `|`/`>`.
_OPENS_BLOCK = re.compile(r"(?:[|>][-+]?)?[ \t]*(?:#.*)?$")


def _yaml_key(line: str) -> re.Match[str] | None:
    """The match of a `key: value` line (the key is its group 1), else None. `label: {` is no YAML line: it
    introduces a JSON object (a judge writes `Verdict: {"passed": false}`, perhaps right after a quoted output that
    ends in `passed: true`)."""
    match = _YAML_KEY.match(line.rstrip("\r"))
    return match if match and not line[match.end():].startswith("{") else None


def _yaml_lines(lines: list[str], cut: bool) -> list[bool]:
    """Which lines can belong to a block of YAML: `key: value` lines, `- ` items, indented lines under a key that
    opens a value (`reason: |`, `suggestions:`, `reason: 'a text that goes on`) or an item, and blank lines between
    indented ones. An indented line under `passed: true` is no part of it (it may hold the judge's own verdict after
    a quoted output). The first line of a `cut` window is a piece of a line, which may be any of them."""
    kinds: list[bool] = []
    opened = False               # whether an indented line may follow here
    for raw in lines:
        line = raw.rstrip("\r")
        key = _yaml_key(line)
        if cut and not kinds:
            opened = True
        elif not line.strip():
            kinds.append(False)  # decided below, by the line after it
            continue
        elif key is not None:
            value = line[key.end():].strip()
            opened = bool(_OPENS_BLOCK.match(value)) or (      # or a quoted text it does not close on the line
                value[:1] in ("'", '"') and (len(value) == 1 or value[-1] != value[0]))
        elif line[0] not in " \t":
            opened = line == "-" or line.startswith("- ")
        kinds.append(opened or key is not None)
    for index in range(len(lines) - 2, -1, -1):
        if not lines[index].strip() and lines[index + 1][:1] in (" ", "\t") and kinds[index + 1]:
            kinds[index] = True
    return kinds


def unfinished_json(text: str) -> bool:
    """Whether `text` is the start of a JSON object or array that was cut off: it opens one and never closes it
    (what a model writes when its token limit stops it mid-value)."""
    start = len(text) - len(text.lstrip())
    return text[start:start + 1] in ("{", "[") and _closing(text, start) is None


def _closing(text: str, start: int) -> int | None:
    """The end (exclusive) of the bracketed value starting at `start`, strings and escapes respected."""
    depth, quote, escaped = 0, "", False
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote and (quote == '"' or _ends_single_quoted(text, index)):
                quote = ""
        elif depth and (char == '"' or (char == "'" and _starts_single_quoted(text, index))):
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _opening(text: str, last: int) -> int | None:
    """The start of the bracketed value whose closing bracket is at `last`, found reading backwards with the
    string rules of `_closing`, or None when no opening bracket matches it."""
    depth, index = 0, last
    while index >= 0:
        char = text[index]
        if char == '"':
            index = _string_start(text, index)
        elif char == "'" and _ends_single_quoted(text, index):
            index = _single_quoted_start(text, index)
        elif char in "}]":
            depth += 1
        elif char in "{[":
            depth -= 1
            if depth == 0:
                return index
        if index is None:
            return None
        index -= 1
    return None


def _string_start(text: str, end: int) -> int | None:
    """The opening quote of the double-quoted string whose closing quote is at `end`: the nearest `"` before it that
    no backslash escapes."""
    index = text.rfind('"', 0, end)
    while index >= 0 and _escaped(text, index):
        index = text.rfind('"', 0, index)
    return index if index >= 0 else None


def _single_quoted_start(text: str, end: int) -> int | None:
    index = text.rfind("'", 0, end)
    while index >= 0 and not _starts_single_quoted(text, index):
        index = text.rfind("'", 0, index)
    return index if index >= 0 else None


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes > 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


# A single quote delimits a string (JSON as Python or JavaScript write it) only where a key or a value may start or
# end; anywhere else it is an apostrophe (`don't`, `it's`), which must neither hide brackets nor swallow what follows.
def _starts_single_quoted(text: str, index: int) -> bool:
    before = index - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    return before >= 0 and text[before] in "{[,:"


def _ends_single_quoted(text: str, index: int) -> bool:
    after = index + 1
    while after < len(text) and text[after].isspace():
        after += 1
    return after < len(text) and text[after] in ",:}]"


def _parse_embedded(candidate: str) -> Any | None:
    try:
        value = json.loads(candidate, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        repaired = _repair(candidate) if candidate.startswith("{") and len(candidate) <= _MAX_REPAIRED else None
        value = repaired if isinstance(repaired, dict) else None     # a repair may turn prose into a list
    return value if isinstance(value, (dict, list)) and value else None


def _blocks(text: str) -> list[tuple[str, str]]:
    """(language, content) of every fenced block, else of the whole text when its language is recognised."""
    text = text.strip()
    if not text:
        return []
    fenced = []
    for match in _FENCE.finditer(text):
        content = match.group(2).strip()
        fenced.append((match.group(1).strip().lower() or _detect_language(content), content))
    if fenced:
        return fenced
    language = _detect_language(text)
    return [(language, text)] if language else []


def _detect_language(content: str) -> str:
    """Port of gou's `detectLanguage`: the first matching heuristic wins, "" when nothing matches."""
    trimmed = content.strip()
    if not trimmed:
        return ""
    upper = trimmed.upper()
    if trimmed.startswith(("{", "[")):
        return "json"
    if trimmed.startswith("<"):
        if trimmed.startswith(("<?php", "<?=")):
            return "php"
        if upper.startswith(tuple(p.upper() for p in _XML_PREFIXES)):
            return "xml"
        if upper.startswith(tuple(p.upper() for p in _HTML_PREFIXES)) or ">" in trimmed:
            return "html"
    if trimmed.startswith("---"):
        return "yaml"
    if trimmed.startswith("#!/"):
        if "python" in trimmed:
            return "python"
        if "bash" in trimmed or "/sh" in trimmed:
            return "shell"
        return "javascript" if "node" in trimmed else "shell"
    if upper.startswith(_SQL_PREFIXES):
        return "sql"
    if trimmed.startswith("#include"):
        return "cpp" if any(m in trimmed for m in ("<iostream>", "<vector>", "std::")) else "c"
    if trimmed.startswith(("# ", "## ", "### ")):
        return "markdown"
    return _detect_code(trimmed) or _detect_yaml_line(trimmed)


def _detect_code(trimmed: str) -> str:
    """The code heuristics of `detectLanguage`, which look at the first five lines."""
    head = "\n".join(trimmed.split("\n")[:5])
    rules = (
        ("go", trimmed.startswith(("package ", "func ", "import (", 'import "'))
         or "\npackage " in head or "\nfunc " in head),
        ("typescript", any(m in head for m in _TYPESCRIPT_MARKERS)),
        ("java", "public class " in head or "public static void main" in head or "System.out." in head
         or trimmed.startswith("import java.")),
        ("csharp", trimmed.startswith("using System") or "Console.Write" in head or "static void Main" in head),
        ("rust", trimmed.startswith("fn ") or "pub fn " in head or "println!" in head or "let mut " in head),
        ("python", trimmed.startswith(("def ", "class ")) or "if __name__" in head or "print(" in head),
        ("javascript", trimmed.startswith("function ") or "console.log" in head or "require(" in head
         or "module.exports" in head),
        ("ruby", "puts " in head or "attr_accessor" in head),
        ("shell", "echo $" in head or trimmed.startswith("export ")),
        ("css", any(m in trimmed for m in _CSS_MARKERS) and "{" in trimmed and "}" in trimmed),
    )
    return next((language for language, matched in rules if matched), "")


def _detect_yaml_line(trimmed: str) -> str:
    """`key: value` on the first line (not JSON, not a URL, not a type annotation) means YAML — prose included."""
    first = trimmed.split("\n")[0].strip()
    if ": " in first and not first.startswith("{") and not any(
            m in first for m in ('":', "://", ": string", ": number")):
        return "yaml"
    return ""


def _parse(content: str, yaml_block: bool) -> Any | None:
    """Port of `gou/json.Parse` without a hint: YAML for `key: value` content, else JSON with fallbacks."""
    if _looks_like_yaml(content):
        return _load_yaml(content)
    for candidate in (content, _strip_comments(content)):
        try:
            return json.loads(candidate, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            pass
    if content.lstrip().startswith(("{", "[")):
        return _as_container(_repair(content))
    return _as_container(_load_yaml(content)) if yaml_block else None


def _repair(content: str) -> Any | None:
    if _nests_deeper(content, MAX_DEPTH):     # json_repair takes a second per thousand levels; no answer nests so deep
        return None
    try:
        import json_repair  # only when a reply needs repairing

        return json_repair.loads(content)
    except Exception:  # the repairer has its own failure modes (nesting depth, odd input); none may escape
        return None


def _nests_deeper(content: str, limit: int) -> bool:
    """Whether the brackets in `content` (counted as they come, strings or not) nest deeper than `limit`."""
    depth = 0
    for match in _BRACKETS.finditer(content):
        depth += 1 if match.group() in "{[" else -1
        if depth > limit:
            return True
    return False


def _as_container(value: Any) -> Any | None:
    return value if isinstance(value, (dict, list)) else None


def _looks_like_yaml(content: str) -> bool:
    """gou's `DetectFormat` YAML rule: the first non-empty, non-`#` line has a `:` that is not `":` or `:{`."""
    trimmed = content.strip()
    if trimmed.startswith(("{", "[")):
        return False
    for raw_line in trimmed.split("\n"):
        line = raw_line.strip()
        if not line or line.startswith("#"):
            continue
        return ":" in line and '":' not in line and ":{" not in line
    return False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _strip_comments(data: str) -> str:
    """Port of gou's `TrimComments`: drop `//` and `/* */` comments outside double-quoted strings."""
    out: list[str] = []
    in_string = in_line_comment = in_block_comment = escaped = False
    i = 0
    while i < len(data):
        c = data[i]
        nxt = data[i + 1] if i + 1 < len(data) else ""
        if escaped:
            out.append(c)
            escaped = False
        elif c == '"' and not in_line_comment and not in_block_comment:
            in_string = not in_string
            out.append(c)
        elif in_string:
            escaped = c == "\\"
            out.append(c)
        elif not in_block_comment and not in_line_comment and c == "/" and nxt in ("/", "*"):
            in_line_comment, in_block_comment = nxt == "/", nxt == "*"
            i += 1
        elif in_line_comment and c in "\r\n":
            in_line_comment = False
            out.append(c)
        elif in_block_comment and c == "*" and nxt == "/":
            in_block_comment = False
            i += 1
        elif not in_line_comment and not in_block_comment:
            out.append(c)
        i += 1
    return "".join(out)


class _YamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader resolving plain scalars as Go's yaml.v3 does into `interface{}`."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag.rsplit(":", 1)[-1] not in ("bool", "int", "float", "timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?
                   |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
                   |[-+]?\.(?:inf|Inf|INF)
                   |\.(?:nan|NaN|NAN))$""", re.VERBOSE),
    list("-+0123456789."))
_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"""^(?:[-+]?0b[0-1_]+
                   |[-+]?0o[0-7_]+
                   |[-+]?0[0-7_]+
                   |[-+]?(?:0|[1-9][0-9_]*)
                   |[-+]?0x[0-9a-fA-F_]+)$""", re.VERBOSE),
    list("-+0123456789"))


def _load_yaml(content: str) -> Any | None:
    try:
        document = next(iter(yaml.load_all(content, Loader=_YamlLoader)), None)
        return _plain(document, [_MAX_YAML_NODES])
    except Exception:  # scanner, constructor and value errors (e.g. `!!timestamp 2001-02-30`) alike
        return None


def _plain(value: Any, budget: list[int]) -> Any:
    """A YAML value with only JSON types: string keys, dates as ISO text. Raises when the budget of nodes runs out."""
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError("YAML document too large")
    if isinstance(value, dict):
        return {_key_text(k): _plain(v, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v, budget) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, (datetime.date, datetime.datetime)):
        return key.isoformat()
    return str(key)
