"""Limits on what an untrusted value (an agent's reply, a suite's `expected`) can do to a run: how deep it nests,
which numbers it holds, and how much of it an artifact keeps (docs/security.md).

Everything here walks values without recursion, so no value is deep enough to crash the walk itself.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

MAX_DEPTH = 100                 # levels of arrays and objects a value may have
DEPTH_MARKER = f"[nested deeper than {MAX_DEPTH} levels: cut]"
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"
MAX_STORED_CHARS = 32_768       # of one string, as an artifact keeps it
MAX_STORED_JSON = 262_144       # of one value's JSON, as an artifact keeps it
SHARED_FROM = 1_024             # an assertion's `actual` this long that equals the output is not stored again
_CONTAINERS = (dict, list, tuple)


def depth(value: Any, stop: int = MAX_DEPTH + 1) -> int:
    """How deep `value` nests (a scalar is 0, `[1]` is 1), counted up to `stop`."""
    if not isinstance(value, _CONTAINERS):
        return 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:                 # only containers are pushed: a case's or a reply's scalars cost one isinstance
        item, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest >= stop:
                return deepest
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, _CONTAINERS):
                stack.append((child, level + 1))
    return deepest


def too_deep(value: Any, limit: int = MAX_DEPTH, text: str | None = None) -> bool:
    """Whether `value` nests deeper than `limit`. `text`, its JSON when known: each array or object in it opens with
    a bracket, so a text with no more brackets than `limit` cannot nest deeper, and the value is not walked."""
    if text is not None and text.count("[") + text.count("{") <= limit:
        return False
    return depth(value, limit + 1) > limit


def from_python(value: Any) -> Any:
    """`value` as Python code returned it (an in-process agent's reply, a script generator's cases) made what a JSON
    agent could have sent: dict keys that are not strings written as JSON writes them (`1` → "1", `None` →
    "null"), so every later walk and sorted dump sees strings. ValueError names what JSON cannot carry: an integer
    too long to write as text (beyond `sys.get_int_max_str_digits()`: it would break every artifact), or a key that
    is not a string, number, boolean or null. Walks only up to MAX_DEPTH + 1 levels: a deeper (or cyclic) value
    comes back as it is, for `too_deep` to refuse."""
    keys = False
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if level > MAX_DEPTH:
            return value
        if isinstance(item, dict):
            children: Any = item.values()
            for key in item:
                if not isinstance(key, str):
                    _json_key(key)
                    keys = True
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            _writable(item)
            continue
        for child in children:
            if isinstance(child, _CONTAINERS):
                stack.append((child, level + 1))
            elif type(child) is int:
                _writable(child)
    return _string_keys(value) if keys else value


_WRITABLE_BITS = 14_000          # about 4,200 digits: below Python's default limit of 4,300, nothing to check


def _writable(item: Any) -> None:
    if isinstance(item, int) and item.bit_length() > _WRITABLE_BITS:
        try:
            str(item)        # refused at once beyond the limit
        except ValueError:
            raise ValueError(f"holds an integer of more than {sys.get_int_max_str_digits():,} digits, which "
                             "Python cannot write as text") from None


def _json_key(key: Any) -> str:
    """A dict key as `json.dumps` writes it."""
    if key is None or isinstance(key, (bool, int, float)):
        _writable(key)
        return json.dumps(key)
    raise ValueError(f"has an object key of type {type(key).__name__} ({key!r:.40}): JSON keys are strings")


def _string_keys(value: Any) -> Any:
    """A copy of `value` whose dicts have string keys (`from_python` has checked every key converts)."""
    root: list[Any] = [None]
    tasks: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while tasks:
        item, parent, slot = tasks.pop()
        if isinstance(item, dict):
            copy: dict[str, Any] = {}
            parent[slot] = copy
            for key, child in item.items():
                name = key if isinstance(key, str) else _json_key(key)
                copy[name] = None
                tasks.append((child, copy, name))
        elif isinstance(item, (list, tuple)):
            items: list[Any] = [None] * len(item)
            parent[slot] = items
            tasks.extend((child, items, index) for index, child in enumerate(item))
        else:
            parent[slot] = item
    return root[0]


def json_safe(value: Any, *, limit: int = MAX_DEPTH, cap: int | None = None) -> Any:
    """A copy of `value` every strict JSON reader accepts and no walk can choke on: parts nested deeper than
    `limit` replaced by a marker, NaN and ±Infinity written as strings ("NaN", "Infinity", "-Infinity"), keys
    made strings, and — with `cap` — strings longer than `cap` characters cut, saying how long they were."""
    if not _needs_copy(value, limit, cap):
        return value
    root: list[Any] = [None]
    # Each task: (the value, the container to put its copy in, the slot there, its level).
    tasks: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while tasks:
        item, parent, slot, level = tasks.pop()
        if isinstance(item, dict):
            if level >= limit:
                parent[slot] = DEPTH_MARKER
                continue
            copy: dict[str, Any] = {}
            parent[slot] = copy
            for key, child in item.items():
                name = key if isinstance(key, str) else str(key)
                copy[name] = None
                tasks.append((child, copy, name, level + 1))
        elif isinstance(item, (list, tuple)):
            if level >= limit:
                parent[slot] = DEPTH_MARKER
                continue
            items: list[Any] = [None] * len(item)
            parent[slot] = items
            tasks.extend((child, items, index, level + 1) for index, child in enumerate(item))
        else:
            parent[slot] = _scalar(item, cap)
    return root[0]


def _needs_copy(value: Any, limit: int, cap: int | None) -> bool:
    """Whether `json_safe` has anything to change (the common case, a plain small value, costs one walk). Only
    containers are pushed; strings, numbers and the like are looked at where they are found."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            if level >= limit:
                return True
            children: Any = item.values()
            for key in item:
                if not isinstance(key, str):
                    return True
        elif isinstance(item, list):
            if level >= limit:
                return True
            children = item
        elif isinstance(item, tuple) or _scalar(item, cap) is not item:
            return True
        else:
            continue
        for child in children:     # what `_scalar` would change: a non-finite float, a string longer than `cap`
            if isinstance(child, _CONTAINERS):
                stack.append((child, level + 1))
            elif isinstance(child, float):
                if not math.isfinite(child):
                    return True
            elif isinstance(child, str) and cap is not None and len(child) > cap:
                return True
    return False


def _scalar(item: Any, cap: int | None) -> Any:
    if isinstance(item, float) and not math.isfinite(item):
        return "NaN" if math.isnan(item) else "Infinity" if item > 0 else "-Infinity"
    if cap is not None and isinstance(item, str) and len(item) > cap:
        return f"{item[:cap]}… [cut: {len(item):,} characters in all]"
    return item


def stored(value: Any) -> Any:
    """`value` as an artifact keeps it (docs/security.md): strings longer than MAX_STORED_CHARS cut, saying
    how long they were; a structure larger than MAX_STORED_JSON characters (as `size` counts them) kept as the start of
    its JSON, saying how long it was; NaN, ±Infinity and too-deep parts as `json_safe` writes them. Small values come
    back as they are."""
    if type(value) is str:      # most values a result keeps: a message, an output, an input
        return value if len(value) <= MAX_STORED_CHARS else _scalar(value, MAX_STORED_CHARS)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, (str, float)):
        return _scalar(value, MAX_STORED_CHARS)
    changes, length = _survey(value, MAX_STORED_JSON + 1)
    if length <= MAX_STORED_JSON:
        return json_safe(value, cap=MAX_STORED_CHARS) if changes else value
    text = json.dumps(json_safe(value), ensure_ascii=False, allow_nan=False, default=str)
    return f"{text[:MAX_STORED_JSON]}… [cut: {len(text):,} characters of JSON in all]"


def is_large(value: Any) -> bool:
    """Whether `value` is long enough (SHARED_FROM characters, as `size` counts them) not to be stored twice."""
    if isinstance(value, str):
        return len(value) >= SHARED_FROM
    return isinstance(value, (dict, list)) and size(value, SHARED_FROM) >= SHARED_FROM


def size(value: Any, stop: int) -> int:
    """About how many characters `value`'s JSON has (strings and keys by their length, other scalars as 8,
    containers as 2), counted without recursion and only up to `stop`: a cheap bound for what to keep."""
    total = 0
    stack: list[Any] = [value]
    while stack and total < stop:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2 + sum(len(key) + 4 if isinstance(key, str) else 8 for key in item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 8
    return total


def _survey(value: Any, stop: int, limit: int = MAX_DEPTH, cap: int = MAX_STORED_CHARS) -> tuple[bool, int]:
    """One walk for `stored`: whether `json_safe(value, cap=cap)` would change anything, and `size` up to `stop`."""
    total, changes = 0, False
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack and total < stop:
        item, level = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
            changes = changes or len(item) > cap
        elif isinstance(item, dict):
            changes = changes or level >= limit
            for key, child in item.items():
                if isinstance(key, str):
                    total += len(key) + 4
                else:
                    total, changes = total + 8, True
                stack.append((child, level + 1))
            total += 2
        elif isinstance(item, (list, tuple)):
            changes = changes or level >= limit or isinstance(item, tuple)
            total += 2 + len(item)
            stack.extend((child, level + 1) for child in item)
        else:
            total += 8
            changes = changes or (isinstance(item, float) and not math.isfinite(item))
    return changes, total
