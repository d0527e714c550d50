"""The tool loop of `provider: openai` through the real CLI, against a local server speaking the Chat Completions
wire format (every request checked against the `openai` package's types): a model that calls a tool with a mock
or a Python callable gets the result back and answers in text, in one turn — streamed or not, recorded and
replayed, within `max_tool_steps`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from e2e.conftest import Project, Run
from fakes.openai_server import FakeOpenAI, completion, tool_results, using_tools

CONFIG = """
    version: 1
    defaults:
      name: weather
    agents:
      weather:
        provider: openai
        base_url: ${LLM_URL}
        api_key: sk-tool-loop-0042
        model: gpt-test
        stream: ${STREAM:-false}
        system: You answer questions about the weather.
        tools:
          - {name: get_weather, parameters: {type: object, properties: {city: {type: string}}}}
          - {name: to_fahrenheit, parameters: {type: object, properties: {celsius: {type: number}}}}
          - {name: book_flight, parameters: {type: object}}
        mock_tools:
          get_weather: {city: Oslo, sky: sunny, celsius: 18}
        tool_callables:
          to_fahrenheit: units:to_fahrenheit
        max_tool_steps: ${STEPS:-10}
    """

UNITS = '''
def to_fahrenheit(arguments, request):
    if arguments["celsius"] is None:
        raise ValueError("no temperature given")
    return {"fahrenheit": arguments["celsius"] * 9 / 5 + 32, "asked_by": request["context"]["test_id"]}
'''

WEATHER = {"id": "oslo", "input": "What's the weather in Oslo?",
           "assert": [{"type": "contains", "value": "sunny"},
                      {"type": "tool_called", "value": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
                      {"type": "tool_result", "value": {"tool": "get_weather", "result": {"sky": "sunny"}}}]}


def _answer(body: dict[str, Any]) -> str:
    """What the model says once it has the weather: the sky it was told."""
    return f"It is {json.loads(tool_results(body)[0])['sky']} in Oslo today."


def ask_weather() -> Any:
    return using_tools(completion(None, [("get_weather", {"city": "Oslo"})]), _answer)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake
    assert fake.invalid == [], "requests the real API would reject"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    proj.write("units.py", UNITS)
    return proj


def run(project: Project, server: FakeOpenAI, *args: str, **env: str) -> Run:
    return project.run(*args, env={"LLM_URL": server.base_url, **env})


@pytest.mark.parametrize("stream", ["false", "true"])
def test_a_mocked_tool_result_goes_back_and_the_model_answers_in_the_same_case(project: Project, server: FakeOpenAI,
                                                                               stream: str) -> None:
    server.default = ask_weather()
    project.suite("s.jsonl", WEATHER)
    result = run(project, server, "-i", "s.jsonl", STREAM=stream)
    assert result.code == 0, result.stdout + result.stderr
    oslo = result.result("oslo")
    assert (oslo["status"], oslo["output"]) == ("passed", "It is sunny in Oslo today.")
    [call] = oslo["trace"]["tool_calls"]
    assert (call["name"], call["arguments"]) == ("get_weather", {"city": "Oslo"})
    assert oslo["trace"]["tools"] == [{"id": call["id"], "name": "get_weather", "arguments": {"city": "Oslo"},
                                       "result": {"city": "Oslo", "sky": "sunny", "celsius": 18}, "error": ""}]
    assert oslo["usage"] == {"prompt_tokens": 22, "completion_tokens": 14, "total_tokens": 36}   # two model calls
    first, second = server.requests
    assert first["messages"] == [{"role": "system", "content": "You answer questions about the weather."},
                                 {"role": "user", "content": "What's the weather in Oslo?"}]
    assert second["messages"] == [
        *first["messages"],
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call["id"], "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": call["id"], "content": '{"city": "Oslo", "sky": "sunny", "celsius": 18}'}]
    assert second["tools"] == first["tools"] and second.get("stream", False) == (stream == "true")


def test_several_steps_a_python_tool_and_a_failing_one_all_land_in_the_response(project: Project,
                                                                                 server: FakeOpenAI) -> None:
    async def model(request: web.Request, body: Any) -> web.StreamResponse:
        results = [json.loads(text) for message in body["messages"] if message["role"] == "tool"
                   for text in [message["content"]]]
        if not results:
            return await completion(None, [("get_weather", {"city": "Oslo"})])(request, body)
        if len(results) == 1:
            return await completion("Converting.", [("to_fahrenheit", {"celsius": results[0]["celsius"]}),
                                                    ("to_fahrenheit", {"celsius": None})])(request, body)
        return await completion(f"Sunny, {results[1]['fahrenheit']:.0f}°F; and: {results[2]['error']}")(request,
                                                                                                      body)

    server.default = model
    project.suite("s.jsonl", {"id": "oslo-f", "input": "Weather in Oslo, in Fahrenheit?", "assert": [
        {"type": "contains", "value": "64°F"},
        {"type": "tool_sequence", "value": ["get_weather", "to_fahrenheit", "to_fahrenheit"],
         "options": {"mode": "strict"}},
        {"type": "tool_result", "value": {"tool": "to_fahrenheit", "result": {"asked_by": "oslo-f"}}}]})
    result = run(project, server, "-i", "s.jsonl")
    assert result.code == 0, result.stdout + result.stderr
    case = result.result("oslo-f")
    assert case["output"] == "Sunny, 64°F; and: tool raised ValueError at units.py:3: no temperature given"
    assert [(t["name"], t["result"], t["error"]) for t in case["trace"]["tools"]] == [
        ("get_weather", {"city": "Oslo", "sky": "sunny", "celsius": 18}, ""),
        ("to_fahrenheit", {"fahrenheit": 64.4, "asked_by": "oslo-f"}, ""),
        ("to_fahrenheit", None, "tool raised ValueError at units.py:3: no temperature given")]
    assert len(server.requests) == 3 and case["usage"]["total_tokens"] == 3 * 18
    last = server.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "assistant", "tool", "tool"]
    assert last[4]["content"] == "Converting."
    assert json.loads(last[6]["content"]) == {"error": "tool raised ValueError at units.py:3: no temperature given"}


def test_a_model_still_calling_tools_after_max_tool_steps_is_an_agent_error_naming_the_calls(
        project: Project, server: FakeOpenAI) -> None:
    server.default = completion(None, [("get_weather", {"city": "Oslo"})])     # never answers in text
    project.suite("s.jsonl", WEATHER)
    result = run(project, server, "-i", "s.jsonl", STEPS="3")
    assert result.code == 1
    oslo = result.result("oslo")
    assert (oslo["status"], oslo["error_kind"]) == ("error", "agent")
    assert oslo["error"] == ('agent error: the model was still calling tools after 3 model calls (max_tool_steps: 3): '
                             'get_weather({"city": "Oslo"}), get_weather({"city": "Oslo"}), '
                             'get_weather({"city": "Oslo"})')
    assert len(server.requests) == 3


def test_a_call_of_a_tool_without_a_mock_ends_the_turn_with_the_call_recorded(project: Project,
                                                                                server: FakeOpenAI) -> None:
    server.default = using_tools(completion("Booking.", [("get_weather", {"city": "Oslo"}), ("book_flight", {})]))
    project.suite("s.jsonl", {"id": "book", "input": "Book me a flight to Oslo if it is sunny", "assert": [
        {"type": "tool_sequence", "value": ["get_weather", "book_flight"], "options": {"mode": "strict"}},
        {"type": "contains", "value": "Booking."}]})
    result = run(project, server, "-i", "s.jsonl")
    assert result.code == 0, result.stdout + result.stderr
    case = result.result("book")
    assert [t["name"] for t in case["trace"]["tools"]] == ["get_weather"]   # the mocked one is still reported
    assert len(server.requests) == 1


def test_a_forced_tool_choice_is_dropped_after_the_first_step(project: Project, server: FakeOpenAI) -> None:
    project.write("agenttest.yaml", CONFIG.replace("        system:", "        params: {tool_choice: required, "
                                                                      "temperature: 0}\n        system:"))
    server.default = ask_weather()
    project.suite("s.jsonl", WEATHER)
    result = run(project, server, "-i", "s.jsonl")
    assert result.code == 0, result.stdout + result.stderr
    first, second = server.requests
    assert first["tool_choice"] == "required" and "tool_choice" not in second and second["temperature"] == 0


def test_a_recorded_tool_loop_replays_without_the_server(project: Project) -> None:
    project.suite("s.jsonl", WEATHER)
    with FakeOpenAI(default=ask_weather()) as server:
        recorded = run(project, server, "-i", "s.jsonl", "--record", "cassettes", STREAM="true")
        assert server.invalid == []
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    replayed = project.run("-i", "s.jsonl", "--replay", "cassettes", env={"LLM_URL": server.base_url,
                                                                          "STREAM": "true"})
    assert replayed.code == 0, replayed.stdout + replayed.stderr
    for field in ("output", "usage"):
        assert replayed.result("oslo")[field] == recorded.result("oslo")[field]
    assert replayed.result("oslo")["trace"]["tools"] == recorded.result("oslo")["trace"]["tools"]


@pytest.mark.parametrize(("settings", "message"), [
    ("tool_callables: {get_wether: units:to_fahrenheit}",
     "agents.weather.tool_callables: get_wether not among the agent's tools (book_flight, get_weather, to_fahrenheit)"),
    ("tool_callables: {get_weather: units:to_fahrenheit}",
     "agents.weather.tool_callables: get_weather also in mock_tools: give each tool a fixed result or a callable, "
     "not both"),
    ("tool_callables: {to_fahrenheit: units:to_kelvin}",
     "agents.weather.tool_callables.to_fahrenheit: 'units' has no callable 'to_kelvin'"),
    ("max_tool_steps: 0", "agents.weather.max_tool_steps: must be at least 1, got 0"),
])
def test_tool_settings_mistakes_are_config_errors_naming_the_key(project: Project, server: FakeOpenAI,
                                                                 settings: str, message: str) -> None:
    config = CONFIG.replace("        tool_callables:\n          to_fahrenheit: units:to_fahrenheit\n", "").replace(
        "max_tool_steps: ${STEPS:-10}", settings)
    project.write("agenttest.yaml", config)
    project.suite("s.jsonl", WEATHER)
    result = run(project, server, "-i", "s.jsonl")
    assert result.code == 2
    assert message in result.stderr, result.stderr
    assert server.requests == []


def test_the_tool_loop_example_of_the_providers_page_runs(tmp_path: Path, server: FakeOpenAI) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text()
    section = page[page.index("### Tool calls: the tool loop"):]
    config, code, case = (re.search(rf"^```{language}\n(.*?)^```", section, re.M | re.S).group(1)   # type: ignore
                          for language in ("yaml", "python", "jsonl"))
    project = Project(tmp_path)
    project.write("agenttest.yaml", "version: 1\nconnectors:\n  openai: {base_url: '${LLM_URL}', model: m}\n"
                  + config)
    project.write("units.py", code.replace("# units.py, next to agenttest.yaml\n", ""))
    project.write("tests/weather.jsonl", case)
    server.default = using_tools(completion(None, [("get_weather", {"city": "Oslo"}),
                                                   ("to_fahrenheit", {"celsius": 18})]))
    result = run(project, server, "-i", "tests/weather.jsonl", "-n", "weather")
    assert result.code == 0, result.stdout + result.stderr
    assert result.result("oslo")["output"] == 'Done: {"city": "Oslo", "sky": "sunny", "celsius": 18} ' \
                                              '{"fahrenheit": 64.4}'
