"""The one escaping module: XML 1.0 legality, Markdown/HTML inertness, and @actions/core's command escaping."""

from __future__ import annotations

import re

import cmarkgfm
from hypothesis import example, given
from hypothesis import strategies as st
from lxml import etree

from agenttest import secrets
from agenttest.github.commands import command_data, command_property, workflow_command
from agenttest.report import escape
from agenttest.report.console import one_line as console_one_line
from agenttest.report.escape import (
    clean,
    html_text,
    md_block,
    md_code,
    md_html,
    md_text,
    one_line,
    preview,
    xml_text,
)

from .conftest import HOSTILE


def runner_unescape_data(text: str) -> str:
    """The runner's unescaping of command data (ActionCommand.cs): %0D, %0A, then %25 last."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def runner_unescape_property(text: str) -> str:
    return (text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",")
            .replace("%25", "%"))


def gfm(markdown: str) -> str:
    """GitHub's own Markdown engine (cmark-gfm with its extensions), raw HTML allowed as GitHub allows it."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)


@given(st.lists(st.sampled_from(["%", "\r", "\n", ":", ",", "=", "a", " ", "::", "%25", "%0A", "%3A", "%2C"]),
                max_size=30).map("".join))
def test_command_escaping_round_trips(text: str) -> None:
    assert runner_unescape_data(command_data(text)) == text
    assert runner_unescape_property(command_property(text)) == text
    assert "\n" not in command_data(text) and "\r" not in command_data(text)
    assert ":" not in command_property(text) and "," not in command_property(text)


def test_workflow_command_layout() -> None:
    line = workflow_command("error", "first\nsecond 100%", file="a/b.jsonl", line=12, title="x: y, z", col=None)
    assert line == "::error file=a/b.jsonl,line=12,title=x%3A y%2C z::first%0Asecond 100%25"
    assert workflow_command("error", "done") == "::error::done"


def test_one_line_is_safe_for_a_terminal() -> None:
    secrets.register_secret("sk-very-secret")
    text = ("a\x1b[31mred\x1b[0m \x1b]8;;http://evil.example\x07link\x1b]8;;\x07 \x9b2J csi "
            "bel\x07 nul\x00 del\x7f c1\x85x \u202eevil\u202c sk-very-secret \ud800 \x1b")
    assert one_line(text) == "ared link csi bel#x07 nul#x00 del#x7F c1 x #x202Eevil#x202C *** #xD800 #x1B"
    assert one_line("x" * 80, 50, ellipsis="...") == "x" * 47 + "..."
    assert one_line("x" * 80, 50) == "x" * 49 + "…"
    assert console_one_line(text, 200) == one_line(text) and console_one_line("x" * 80, 50) == "x" * 47 + "..."
    assert console_one_line({"b": 1, "a": "é"}, 80) == '{"a": "é", "b": 1}'


@given(st.lists(st.sampled_from(["a", "Z", "0", " ", "  ", "\t", "\n", "\r", "\x1b[31m", "\x07", "\x7f", "é", "\u202e",
                                 "\ud800", "…", "~", "sk-very-secret", "sk-very"]), max_size=12).map("".join),
       st.integers(min_value=1, max_value=40))
@example("a  a", 10).via("a run of spaces")
@example(" a", 10).via("a leading space")
@example("a ", 10).via("a trailing space")
@example("a\tb", 10).via("a tab")
@example("abcdef", 4).via("longer than the limit")
@example("key sk-very-secret", 40).via("a secret")
def test_one_line_takes_a_short_way_for_a_clean_line_and_gives_what_the_long_way_gives(text: str, limit: int) -> None:
    secrets.register_secret("sk-very-secret")
    assert one_line(text, limit) == escape._one_line(text, limit, "…")
    assert one_line(text) == escape._one_line(text, 200, "…")


@given(st.lists(st.sampled_from(["a", "Z", "0", " ", "\t", "\n", "\r", "\x1b[31m", "\x07", "\x7f", "\x9b", "é", "<",
                                 "&", "\ud800", "\ufffe", "~", "sk-very-secret", "sk-very"]), max_size=12).map("".join))
@example("c1").via("an id")
@example("a\tb").via("a tab")
@example("a\x1b[31mb").via("an escape sequence")
@example("é").via("beyond ASCII")
@example("key sk-very-secret").via("a secret")
def test_xml_text_takes_a_short_way_for_printable_ascii_and_gives_what_the_long_way_gives(text: str) -> None:
    secrets.register_secret("sk-very-secret")
    assert xml_text(text) == escape._xml_text(text)
    for value in (None, 12, {"b": [1, "é"]}, True):
        assert xml_text(value) == escape._xml_text(value)


def test_xml_text_is_always_legal_xml() -> None:
    value = "".join(chr(c) for c in range(0, 0x250)) + "\ud800\udfff\ufffe\uffff\U0001f600"
    text = xml_text(value)
    element = etree.Element("x", attr=text)
    element.text = text
    etree.fromstring(etree.tostring(element))      # lxml refuses illegal characters outright
    assert "#x00" in text and "#x1F" in text and "#x7F" in text and "#xD800" in text and "#xFFFF" in text
    assert "\t" in text and "\n" in text and "😀" in text


def test_clean_strips_ansi_masks_secrets_and_normalises_newlines() -> None:
    secrets.register_secret("sk-very-secret")
    assert clean("\x1b[1;31mred\x1b[0m \x1b]0;title\x07ok\r\nsk-very-secret\r") == "red ok\n***\n"
    assert "sk-very" not in preview("x" * 1995 + "sk-very-secret" + "y" * 10_000, 2000)
    assert one_line("a\n\n  b\tc") == "a b c"
    assert preview("abc" * 10, 5) == "abcab… [truncated 25 characters]"


def test_md_text_renders_literally_on_github() -> None:
    html = gfm(f"| a | b |\n|---|---|\n| {md_text(HOSTILE)} | {md_code(HOSTILE, in_table=True)} |\n")
    assert html.count("<tr>") == 2 and html.count("<td>") == 2      # one row, two cells: no table break
    for live in ("<script", "<img", "<a ", "<details", "<h1", "<strong", "<em>", "<del>"):
        assert live not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "[link](https://evil.example)" in html


def test_md_code_fence_beats_backticks() -> None:
    for text in ("plain", "a `b` c", "``x``", "`", "ends with `"):
        html = gfm(md_code(text))
        inner = re.search(r"<code>(.*)</code>", html).group(1)
        assert inner.strip() == text.strip()


def test_md_block_cannot_be_escaped_from() -> None:
    html = gfm(f"<details>\n<summary>{md_html(HOSTILE)}</summary>\n\n{md_block(HOSTILE)}\n\n</details>\n")
    assert html.count("<details>") == 1 and html.count("</details>") == 1
    assert "<script" not in html and "<img" not in html and "<a " not in html and "<h1" not in html
    assert html.count("<pre") == 1


def test_html_text_escapes_everything() -> None:
    assert html_text('<a href="x">&\'</a>\x00') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;&lt;/a&gt;#x00"
