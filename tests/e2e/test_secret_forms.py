"""Secrets in the forms an agent may echo them that are not plain text: a number (a PIN an agent returns as a JSON
number) and the URL encodings Python writes (`quote()` keeps `/`, `urlencode` writes a space `+`). None may reach a
cassette, report.json, events.jsonl or any other artifact."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from e2e.conftest import Project

PIN = "98765432"
TOKEN = "tok/SECRET 7c1e+a"

BOT = '''
import json, os, sys, urllib.parse
json.load(sys.stdin)
pin, token = os.environ["PIN"], os.environ["TOKEN"]
link = "reset at /r?t=" + urllib.parse.quote(token) + " or /r?" + urllib.parse.urlencode({"t": token})
print(json.dumps({"content": link, "data": {"pin": int(pin), "balance": float(pin), "other": 98765433}}))
'''


def test_a_secret_echoed_as_a_number_or_url_encoded_by_python_is_masked_everywhere(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("agenttest.yaml", """
        version: 1
        defaults: {name: cli}
        agents:
          cli:
            provider: exec
            command: [python3, bot.py]
            env: {PIN: "${ACCOUNT_PASSWORD}", TOKEN: "${SERVICE_TOKEN}"}
        """)
    project.write("bot.py", BOT)
    project.suite("s.jsonl", {"id": "c", "input": "x", "assert": {"type": "contains", "value": "nope"}})
    run = project.run("-i", "s.jsonl", "--record", "tapes", "-v",
                      env={"ACCOUNT_PASSWORD": PIN, "SERVICE_TOKEN": TOKEN})
    assert run.code == 1, run.stdout + run.stderr
    forms = [PIN, urllib.parse.quote(TOKEN), urllib.parse.urlencode({"t": TOKEN})[2:]]
    written = [path for folder in ("agenttest-results", "tapes") for path in (tmp_path / folder).rglob("*")
               if path.is_file()]
    assert len(written) >= 6
    for path in written:
        text = path.read_text()
        assert [form for form in forms if form in text] == [], path
    assert [form for form in forms if form in run.stdout + run.stderr] == []
    assert run.result("c")["output"] == {"pin": "***", "balance": "***", "other": 98765433}
