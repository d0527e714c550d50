"""The benchmarks' agent server speaks the wire format. Speed is measured in bench/, never asserted in a test."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"


def test_the_agent_server_answers_json_and_sse_on_one_kept_alive_connection() -> None:
    server = subprocess.Popen([sys.executable, str(BENCH / "agent_server.py"), "--latency", "0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        connection = http.client.HTTPConnection("127.0.0.1", int(server.stdout.readline()), timeout=10)
        body = {"model": "m", "messages": [{"role": "system", "content": "be brief"},
                                           {"role": "user", "content": "hello"}]}
        connection.request("POST", "/v1/chat/completions", json.dumps(body))
        reply = json.loads(connection.getresponse().read())
        assert reply["object"] == "chat.completion" and reply["model"] == "m"
        assert reply["choices"][0]["message"] == {"role": "assistant", "content": "ok hello"}
        assert reply["choices"][0]["finish_reason"] == "stop" and reply["usage"]["total_tokens"] > 0

        stream = {**body, "stream": True, "stream_options": {"include_usage": True}}
        connection.request("POST", "/v1/chat/completions", json.dumps(stream))
        response = connection.getresponse()
        assert response.getheader("Content-Type") == "text/event-stream"
        events = [event.removeprefix("data: ") for event in response.read().decode().split("\n\n") if event]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(event) for event in events[:-1]]
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]) == "ok hello"
        assert chunks[-1]["usage"]["completion_tokens"] > 0

        connection.request("GET", "/stats")
        stats = json.loads(connection.getresponse().read())
        assert stats["connections"] == 1 and stats["chat_connections"] == 1
        assert stats["requests"] == 3 and stats["chat_completions"] == 2
    finally:
        server.terminate()
        server.wait(10)
