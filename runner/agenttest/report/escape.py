"""The one place where text from agents, inputs and judges is made safe for XML, Markdown, HTML and the terminal.

Every function here masks registered secrets and strips ANSI escape sequences first (`clean`), so no artifact
and no log line can carry a secret or a terminal colour code, whatever format it is written in. The GitHub log has
its own half in `github/`: whatever reaches it is last made encodable by `github.log.printable`; agent text in it
is kept from becoming a workflow command by the stop-commands block around the run (`github.log.guarded_log`), and
in our own commands by `github.commands`, which escapes on top of `plain`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..github.log import visible
from ..secrets import mask, mask_head

# CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), and two-character escapes (ESC + one of @-Z \ ] ^ _).
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
# Characters XML 1.0 forbids (production [2]), plus DEL and the C1 controls it discourages, as pytest does.
# Listed as they are: the negated class of the allowed ranges (the same set, checked over every code point) took
# 19 ms to compile at every start.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~!$])")      # inline syntax, raw HTML, entities, table cells, math
_MD_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<![a-z0-9])(www)(\.)")
_BACKTICKS = re.compile(r"`+")
# What one line shows as `#xNN` once ANSI sequences are gone and whitespace is collapsed: C0 and C1 controls and
# DEL (a bare ESC or BEL could still drive a terminal), the bidirectional overrides that reorder what a reader sees
# ("Trojan Source"), and lone surrogates, which no encoder accepts.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# What XML markup needs escaped, as ElementTree's serializer writes it: in content `& < >`; in an attribute value
# also `"`, and the whitespace a parser would normalise to spaces, as character references.
_XML_CONTENT = re.compile("[&<>]")
_XML_ATTRIBUTE = re.compile('[&<>"\n\r\t]')


def display_text(value: Any) -> str:
    """Display text of any report value: strings as they are, None as "", anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if type(value) is int:           # a line number or a count: what json.dumps writes, without its cost
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def plain(value: Any, limit: int | None = None) -> str:
    """Text with secrets masked and ANSI escape sequences removed.

    With `limit`, only a head of the text is processed (at least `limit` characters once masked, see
    `secrets.mask_head`), so a 2 MB agent reply costs no more than its preview, and the head never ends inside a
    secret. Masked again once escape sequences are gone, for a secret they split."""
    text = display_text(value)
    head = mask_head(text, limit + 64)[0] if limit is not None else mask(text)
    if "\x1b" not in head and "\x9b" not in head:     # no escape sequence (nearly every text): nothing to strip
        return head
    return mask(_ANSI.sub("", head))


def clean(value: Any, limit: int | None = None) -> str:
    """`plain` text with line endings normalised to `\\n`."""
    return plain(value, limit).replace("\r\n", "\n").replace("\r", "\n")


def truncate(text: str, limit: int, note: str = "", total: int | None = None) -> str:
    """`text` cut to at most `limit` characters, ending with a note of how much was cut (of `total`, when the text
    is already a head of something longer)."""
    total = len(text) if total is None else total
    if total <= limit:
        return text
    return f"{text[:limit]}… [truncated {total - limit} characters{note}]"


def preview(value: Any, limit: int, note: str = "") -> str:
    """Cleaned text of a value (secrets masked first), cut to `limit` characters with a note saying how much was
    left out."""
    full = display_text(value)
    if len(full) <= 2 * limit:
        return truncate(clean(full), limit, note)
    return truncate(clean(full, limit), limit, note, total=len(full))     # the count is of raw characters


def one_line(value: Any, limit: int = 200, ellipsis: str = "…") -> str:
    """Cleaned text on one line, safe for a terminal: runs of whitespace become one space, escape sequences are
    removed, control characters, bidirectional overrides and lone surrogates shown as `#xNN` (as `xml_text` does);
    cut to `limit` characters, `ellipsis` included."""
    if type(value) is str and len(value) <= limit and value.isascii() and value.isprintable() \
            and "  " not in value and value[:1] != " " and value[-1:] != " " and mask(value) is value:
        return value    # one clean line already (nearly every id, name and input): what `_one_line` gives
    return _one_line(value, limit, ellipsis)


def _one_line(value: Any, limit: int, ellipsis: str) -> str:
    text = _UNPRINTABLE.sub(_visible, " ".join(clean(value, limit * 4).split()))
    return text if len(text) <= limit else text[: limit - len(ellipsis)] + ellipsis


# --- XML -------------------------------------------------------------------------------------------------------


def _visible(match: re.Match[str]) -> str:
    return visible(match.group())


def xml_text(value: Any) -> str:
    """A string every XML 1.0 writer accepts: cleaned, and each illegal character replaced by its visible `#xNN`
    form (pytest's `bin_xml_escape`). `& < > "` are escaped by `xml_content` and `xml_attribute`, or by a
    serializer."""
    if type(value) is str and value.isascii() and value.isprintable() and mask(value) is value:
        return value    # characters from space to `~` and no secret (nearly every id, name): what `_xml_text` gives
    return _xml_text(value)


def _xml_text(value: Any) -> str:
    text = clean(value)
    if text.isascii() and text.isprintable():         # only characters from space to `~`: all legal
        return text
    return _XML_ILLEGAL.sub(_visible, text)


def xml_content(value: Any) -> str:
    """`xml_text` escaped as element content."""
    text = xml_text(value)
    if not _XML_CONTENT.search(text):
        return text
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attribute(value: Any) -> str:
    """`xml_text` escaped as an attribute value in double quotes."""
    text = xml_text(value)
    if not _XML_ATTRIBUTE.search(text):
        return text
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return text.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#09;")


# --- HTML ------------------------------------------------------------------------------------------------------


def html_text(value: Any) -> str:
    """Cleaned text with `& < > " '` escaped, for HTML element content and attribute values."""
    import html  # here: with its table of entities, loaded by a run whose artifacts hold HTML (issue #27)

    return html.escape(xml_text(value), quote=True)


# --- Markdown (GitHub-flavoured) -------------------------------------------------------------------------------


def md_html(value: Any) -> str:
    """Text for raw HTML inside Markdown (a `<summary>` line): HTML-escaped, and a `@` cannot start a mention."""
    return html_text(value).replace("@", "@\u200b")


def md_text(value: Any) -> str:
    """Inline Markdown that renders as the literal text, in a table cell or after other text on a line.

    Punctuation that starts inline syntax is backslash-escaped (no emphasis, code, link, image, raw HTML, entity,
    math or table break), `://` and `www.` cannot autolink, a `@` cannot start a mention, and line breaks become
    `<br>`, so the text stays on its line and block syntax (headings, lists) never applies to it."""
    text = _MD_SPECIAL.sub(r"\\\1", xml_text(value))
    text = _MD_AUTOLINK.sub(lambda m: "\\:" if m.group(1) else f"{m.group(2)}\\.", text)
    text = text.replace("@", "@\u200b")
    return text.replace("\n", "<br>")


def md_code(value: Any, *, in_table: bool = False) -> str:
    """An inline code span showing the text literally: the fence is longer than any run of backticks inside,
    line breaks become spaces, and in a table cell `|` is escaped (GFM splits cells before parsing code)."""
    text = " ".join(xml_text(value).split("\n"))
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    if not text.strip():
        text = text or " "
    elif text.startswith("`") or text.endswith("`"):
        text = f" {text} "
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{text}{fence}"


def md_block(value: Any, language: str = "text") -> str:
    """A fenced code block showing the text literally: the fence is longer than any run of backticks inside, so
    nothing in the text (`</details>`, headings, HTML) can end the block or become live."""
    text = xml_text(value)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{language}\n{body}{fence}"
