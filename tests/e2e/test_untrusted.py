"""SPEC §11 through the real CLI, as GitHub Actions runs it: suite files and agent replies written by an attacker
never become a workflow command, whatever the command (`run`, `validate`, `merge`, `--dry-run`), never crash the
run or lose an artifact, and never make an artifact invalid JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from e2e.conftest import Project, finished_cases, interrupt_cli
from report.test_annotations import commands_the_runner_would_run

ACTIONS = {"GITHUB_ACTIONS": "true"}

CONFIG = """
    version: 1
    defaults:
      name: bot
    agents:
      bot:
        provider: python
        callable: bot:reply
    """

BOT = '''
import json

def reply(request):
    text = request["messages"][-1]["content"]
    if text == "deep":
        value = "bottom"
        for _ in range(600):
            value = {"d": value}
        return {"content": "deep", "data": value}
    if text == "huge":
        return {"content": "big", "data": json.loads("[1e999, -1e999, 1]")}
    if text == "long-int":
        return {"content": "x", "data": {"n": 10**5000}}
    if text == "keys":
        return {"content": "x", "data": {1: "one", None: "none", "k": "key"}}
    if text.startswith("big"):
        return "x" * 5_000_000 + " THE-END"
    if text == "raise-big":
        raise RuntimeError("boom " + "r" * 3_000_000)
    if text == "wide":
        return {"content": "wide", "data": {"rows": [{"n": i, "text": "y" * 100} for i in range(20_000)]}}
    if text == "slow":                # says it started, then never returns
        import threading
        with open("slow-started.txt", "a") as started:
            started.write("started\\n")
        threading.Event().wait()
    if text == "env":
        import os
        return " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if "proxy" in k.lower())
    return "ok " + text
'''


def log_of(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    """Run the CLI with stderr merged into stdout, as the runner reads a step's log; also stdout alone."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_"))}
    full.update(env or {})
    merged = subprocess.run([sys.executable, "-m", "agenttest", *args], cwd=cwd, env=full, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=60)
    return merged.returncode, merged.stdout.splitlines(), merged.stdout


def ours(executed: list[str]) -> list[str]:
    """The commands the runner would run that agenttest did not mean to print (its guard and masks excepted)."""
    return [c for c in executed if not c.startswith(("::stop-commands::", "::add-mask::"))]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path)
    proj.write("agenttest.yaml", CONFIG)
    proj.write("bot.py", BOT)
    return proj


def test_validate_prints_hostile_suite_text_inside_the_guard(project: Project) -> None:
    project.suite("tests/s.jsonl",
                  {"id": "a", "input": "x", "##[error]PWN-key": 1},
                  {"id": "b", "input": "x", "assert": {"type": "::error::PWN-type"}},
                  {"id": "c", "input": "x", "assert": {"type": "regex", "value": "(##[error]PWN-regex"}},
                  {"id": "d", "input": "x", "assert": {"type": "contains", "value": "ok"}})
    project.suite("tests/odd\n::error::PWN-name.jsonl", {"id": "e", "input": "x", "::warning::PWN": 1})
    code, lines, text = log_of("validate", "-i", "tests/", cwd=project.root, env=ACTIONS)
    assert code == 2
    assert "PWN-key" in text and "PWN-type" in text and "PWN-regex" in text and "PWN-name" in text
    assert "1 valid, 4 invalid in 2 files" in text
    assert ours(commands_the_runner_would_run(lines)) == []
    # Without the guard the same lines would be commands: the test can fail.
    assert ours(commands_the_runner_would_run([line for line in lines if "stop-commands" not in line]))


def test_merge_and_a_run_that_cannot_start_name_hostile_files_inside_the_guard(project: Project) -> None:
    code, lines, text = log_of("merge", "x\n::error::PWN-merge.json", cwd=project.root, env=ACTIONS)
    assert code == 2 and "PWN-merge" in text and ours(commands_the_runner_would_run(lines)) == []
    code, lines, text = log_of("-i", "x\n::error::PWN-run.jsonl", cwd=project.root, env=ACTIONS)
    assert code == 2 and "PWN-run" in text and ours(commands_the_runner_would_run(lines)) == []
    project.suite("s.jsonl", {"id": "a", "input": "x"})
    code, lines, text = log_of("-i", "s.jsonl", "--baseline", "##[error]PWN-base.json", cwd=project.root,
                               env=ACTIONS)
    assert code == 2 and "PWN-base" in text and ours(commands_the_runner_would_run(lines)) == []


def test_dry_run_stdout_is_clean_jsonl_and_never_a_command(project: Project) -> None:
    project.write("agenttest.yaml", CONFIG.rstrip() + """
      remote:
        provider: http
        url: http://127.0.0.1:9/x
        headers: {Authorization: "Bearer ${TOKEN}"}
    """)
    cases = [{"id": "a", "input": "##[error]PWN-a"}, {"id": "b", "input": "x ##[warning]PWN-b ##["}]
    project.suite("s.jsonl", *cases, {"id": "bad", "input": "x", "assert": {"type": "::error::PWN-c"}})
    env = {**ACTIONS, "TOKEN": "tok-4b1f9c2d7e"}
    code, lines, _ = log_of("-i", "s.jsonl", "--dry-run", cwd=project.root, env=env)
    assert code == 2 and ours(commands_the_runner_would_run(lines)) == []
    alone = subprocess.run([sys.executable, "-m", "agenttest", "-i", "s.jsonl", "--dry-run"], cwd=project.root,
                           env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    assert [json.loads(line) for line in alone.stdout.splitlines()] == cases, alone.stderr   # nothing else
    assert "stop-commands" in alone.stderr


def test_deep_and_infinite_replies_are_agent_errors_and_every_artifact_is_strict_json(project: Project) -> None:
    project.suite("s.jsonl",
                  {"id": "deep", "input": "deep", "assert": {"type": "contains", "value": "deep"}},
                  {"id": "huge", "input": "huge", "assert": {"type": "json_path", "path": "$[2]", "value": 1}},
                  {"id": "long-int", "input": "long-int", "assert": {"type": "contains", "value": "x"}},
                  {"id": "keys", "input": "keys", "assert": [{"type": "contains", "value": "one"},
                                                             {"type": "json_path", "path": "$.null", "value": "none"}]},
                  {"id": "fine", "input": "x", "assert": {"type": "contains", "value": "ok"}})
    run = project.run("-i", "s.jsonl", env=ACTIONS)
    assert run.code == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "failed on run_finished" not in run.stdout + run.stderr
    long_int = run.result("long-int")        # an integer no artifact could write: the agent's error, not a crash
    assert (long_int["status"], long_int["error_kind"]) == ("error", "agent")
    assert "integer of more than 4,300 digits" in long_int["error"]
    assert run.result("keys")["status"] == "passed"      # keys as JSON writes them: sorted dumps still work
    deep = run.result("deep")
    assert (deep["status"], deep["error_kind"]) == ("error", "agent")
    assert "nested deeper than" in deep["error"]
    assert run.result("fine")["status"] == "passed"
    results = project.root / "agenttest-results"
    assert sorted(p.name for p in results.iterdir()) == ["ctrf.json", "events.jsonl", "junit.xml", "report.json",
                                                          "summary.md"]
    for name in ("report.json", "ctrf.json"):
        json.loads((results / name).read_text(), parse_constant=_reject)
    for line in (results / "events.jsonl").read_text().splitlines():
        json.loads(line, parse_constant=_reject)
    assert "Infinity" in (results / "report.json").read_text()                  # written as a string


def test_a_suite_nested_too_deeply_is_an_invalid_case_for_run_and_validate(project: Project) -> None:
    expected: object = "x"
    for _ in range(600):
        expected = [expected]
    project.write("s.jsonl", json.dumps({"id": "deep", "input": "x", "expected": expected}) + "\n"
                  + json.dumps({"id": "fine", "input": "x", "assert": {"type": "contains", "value": "ok"}}) + "\n"
                  + json.dumps({"id": "inf", "input": "x", "expected": 1e999}).replace("Infinity", "1e999") + "\n")
    run = project.run("-i", "s.jsonl")
    assert "Traceback" not in run.stderr, run.stderr
    assert run.result("deep")["status"] == "error" and "nested deeper than" in run.result("deep")["error"]
    assert run.result("fine")["status"] == "passed"
    json.loads((project.root / "agenttest-results" / "report.json").read_text(), parse_constant=_reject)
    checked = project.run("validate", "-i", "s.jsonl")
    assert checked.code == 2 and "s.jsonl:1:" in checked.stdout and "nested deeper than" in checked.stdout


def _reject(name: str) -> None:
    raise AssertionError(f"{name} in a JSON artifact")


def test_a_suite_reads_no_file_outside_its_repository_nor_under_git(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.json").write_text('{"type": "object", "description": "OUTSIDE-SCHEMA"}')
    (outside / "cases.jsonl").write_text(json.dumps({"id": "far", "input": "x"}) + "\n")
    project = Project(tmp_path / "repo")
    project.write("agenttest.yaml", CONFIG)
    project.write("bot.py", BOT)
    project.write(".git/config", "[http]\n\textraheader = AUTHORIZATION: basic GIT-TOKEN\n")
    os.mkfifo(project.root / "tests-fifo.json")
    (project.root / "zero.json").symlink_to("/dev/zero")
    project.suite("tests/s.jsonl",
                  {"id": "parent", "input": "x", "assert": {"type": "json_schema", "value": "../../outside/s.json"}},
                  {"id": "absolute", "input": "x", "assert": {"type": "json_schema",
                                                              "value": str(outside / "s.json")}},
                  {"id": "device", "input": "x", "assert": {"type": "json_schema", "value": "../zero.json"}},
                  {"id": "fifo", "input": "x", "assert": {"type": "json_schema", "value": "../tests-fifo.json"}},
                  {"id": "git", "input": [{"role": "user", "content": [
                      {"type": "text", "text": "read"}, {"type": "file", "source": "file://../.git/config"}]}]},
                  {"id": "ref", "input": "x", "assert": {"type": "json_schema", "value": {
                      "$ref": f"{(outside / 's.json').as_uri()}#/nope"}}},
                  {"id": "ref-in-file", "input": "x", "assert": {"type": "json_schema", "value": "ref.json"}},
                  {"id": "fine", "input": "x", "assert": {"type": "contains", "value": "ok"}})
    project.write("tests/ref.json", json.dumps({"properties": {"a": {"$ref": "../../outside/s.json"}}}))
    (project.root / "tests" / "linked.jsonl").symlink_to(outside / "cases.jsonl")
    run = project.run("-i", "tests/", timeout=30)
    assert run.code == 1 and "Traceback" not in run.stderr, run.stderr
    errors = {r["id"]: r for r in run.report["results"] if r["status"] == "error"}
    refused = ("parent", "absolute", "device", "fifo", "git", "ref", "ref-in-file")
    assert {key: errors[key]["error_kind"] for key in refused} == dict.fromkeys(refused, "invalid")
    schema = "invalid test case: assert: JSON schema file"
    followed = ("leads out of the schema: agenttest follows a schema's references within it only (put what it refers "
                "to under $defs), and reads no file or URL a schema names")
    assert {key: errors[key]["error"] for key in refused} == {
        "parent": f"{schema} ../../outside/s.json is outside the repository",
        "absolute": f"{schema} {outside / 's.json'} is outside the repository",
        "device": f"{schema} ../zero.json is outside the repository",
        "fifo": f"{schema} ../tests-fifo.json is not a file",
        "git": "invalid test case: input[0].content[1]: file://../.git/config is inside .git/, which a suite may not "
               "read",
        "ref": f"invalid test case: assert: $ref '{(outside / 's.json').as_uri()}#/nope' {followed}",
        "ref-in-file": f"invalid test case: assert: $ref '../../outside/s.json' {followed}"}
    linked = [r for r in run.report["results"] if r.get("file") == "tests/linked.jsonl"]
    assert len(linked) == 1 and linked[0]["status"] == "error"
    assert linked[0]["error"] == "invalid test case: suite file tests/linked.jsonl is outside the repository"
    assert run.result("fine")["status"] == "passed"
    everything = run.report_text or ""
    assert "OUTSIDE-SCHEMA" not in everything and "GIT-TOKEN" not in everything and "far" not in {
        r["id"] for r in run.report["results"]}


def test_large_replies_are_checked_whole_and_stored_capped(project: Project) -> None:
    project.suite("s.jsonl",
                  *[{"id": f"big{i}", "input": f"big{i}", "assert": [{"type": "contains", "value": "THE-END"},
                                                                      {"type": "not_contains", "value": "zzz"}]}
                    for i in range(6)],
                  {"id": "wide", "input": "wide", "assert": {"type": "json_path", "path": "rows[19999].n",
                                                             "value": 19999}},
                  {"id": "small", "input": "x", "assert": {"type": "equals", "value": "nope"}},
                  {"id": "raise-big", "input": "raise-big", "assert": {"type": "contains", "value": "x"}},
                  {"id": "said-big", "input": "x", "assert": {"type": "script", "script": "checks.verbose"}})
    (project.root / "checks.py").write_text("def verbose(output, **_):\n"
                                            "    return {'pass': False, 'message': 'm' * 3_000_000}\n")
    run = project.run("-i", "s.jsonl", "--parallel", "3")
    assert run.code == 1, run.stderr
    big = run.result("big0")
    assert big["status"] == "passed"                                # the assertion saw the end of the reply
    assert len(big["output"]) < 40_000 and big["output"].endswith("… [cut: 5,000,008 characters in all]")
    assert [a.get("actual_is_output") for a in big["assertions"]] == [True, True]
    assert "actual" not in big["assertions"][0]
    wide = run.result("wide")
    assert wide["status"] == "passed" and isinstance(wide["output"], str)
    assert "characters of JSON in all]" in wide["output"]
    small = run.result("small")
    assert small["assertions"][0]["actual"] == "ok x" and "actual_is_output" not in small["assertions"][0]
    raised = run.result("raise-big")            # a huge error and a huge verdict message are stored capped too
    assert raised["status"] == "error" and raised["error"].endswith(" characters in all]")
    said = run.result("said-big")
    assert said["status"] == "failed" and said["assertions"][0]["message"].endswith(" characters in all]")
    assert len(said["error"]) < 40_000
    results = project.root / "agenttest-results"
    for name in ("report.json", "events.jsonl", "junit.xml", "ctrf.json", "summary.md"):
        assert (results / name).stat().st_size < 2_000_000, name     # 30 MB of replies, twice, before


def test_an_interrupt_with_large_replies_in_memory_ends_the_run_with_its_artifacts(project: Project) -> None:
    started = project.root / "slow-started.txt"
    project.suite("s.jsonl", *[{"id": f"big{i}", "input": f"big{i}"} for i in range(40)],
                  *[{"id": f"slow{i}", "input": "slow"} for i in range(2)])

    def ready() -> bool:
        """The 40 large replies are in, and both slow calls (which never return) have started."""
        return (started.exists() and started.read_text().count("started") == 2
                and len(finished_cases(project.root)) == 40)

    stopped = interrupt_cli("-i", "s.jsonl", "--parallel", "4", cwd=project.root, ready=ready)
    assert stopped.code == 130, stopped.stdout + stopped.stderr
    report = stopped.report
    assert report["interrupted"] is True and report["summary"]["passed"] == 40


def test_a_pattern_that_backtracks_on_a_reply_is_stopped_and_the_run_ends_with_every_artifact(
        project: Project) -> None:
    """A reply and a pattern from a fork that would backtrack for hours: the search is stopped after 2 s and the
    case fails saying why; the other case passes and every artifact is written."""
    project.suite("s.jsonl",
                  {"id": "fine", "input": "x", "assert": {"type": "regex", "value": r"^ok x$"}},
                  {"id": "redos", "input": "a" * 40 + "!", "assert": {"type": "regex", "value": r"^(\w+\s?)*$"}})
    started = time.monotonic()
    # One at a time: a case in flight meanwhile would see its own timeout pass while the search holds the loop.
    run = project.run("-i", "s.jsonl", "--timeout", "2s", "--parallel", "1", timeout=60)
    assert time.monotonic() - started < 30
    assert run.code == 1, run.stdout + run.stderr
    verdict = run.result("redos")["assertions"][0]
    assert verdict["passed"] is False and verdict["message"].startswith(
        "output not checked: the pattern '^(\\w+\\s?)*$' was stopped after 2s on this text")
    assert run.result("fine")["status"] == "passed"
    assert all((project.root / "agenttest-results" / name).is_file()
               for name in ("report.json", "junit.xml", "summary.md", "ctrf.json", "events.jsonl"))


def test_an_artifact_that_cannot_be_written_is_said_and_the_others_are_still_written(project: Project) -> None:
    # BeforeAll runs after the up-front check that the paths are writable: it puts a directory where junit.xml
    # goes, as a full disk or a racing step would break it.
    project.write("env_test.py", """
        import os

        def BeforeAll(ctx, cases):
            os.makedirs("agenttest-results/junit.xml/blocked", exist_ok=True)
        """)
    project.suite("s.jsonl", {"id": "a", "input": "x", "assert": {"type": "contains", "value": "ok"}})
    run = project.run("-i", "s.jsonl", "--before", "env_test.BeforeAll")
    assert run.code == 2, run.stdout + run.stderr
    assert "agenttest-results/junit.xml: Is a directory" in run.stderr and "✗ cannot write " in run.stderr
    results = project.root / "agenttest-results"
    assert run.report["summary"]["passed"] == 1
    assert (results / "summary.md").is_file() and (results / "ctrf.json").is_file()
    assert (results / "events.jsonl").is_file()


def _repo_beside(tmp_path: Path, name: str, code: str) -> tuple[Project, Path]:
    """A git repository (the bot agent's) and, outside it, module `name` that says it was loaded (a LOADED file)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / name).write_text("open('LOADED', 'w').write('x')\n" + code)
    project = Project(tmp_path / "repo")
    project.write("agenttest.yaml", CONFIG)
    project.write("bot.py", BOT)
    (project.root / ".git").mkdir()
    return project, outside / name


def test_a_script_module_symlinked_out_of_the_repository_is_not_loaded(tmp_path: Path) -> None:
    project, module = _repo_beside(tmp_path, "checks.py", "def ok(output, expected):\n    return True\n")
    (project.root / "checks.py").symlink_to(module)
    project.suite("s.jsonl", {"id": "scripted", "input": "x", "assert": {"type": "script", "script": "checks.ok"}},
                  {"id": "fine", "input": "x", "assert": {"type": "contains", "value": "ok"}})
    run = project.run("-i", "s.jsonl")
    scripted = run.result("scripted")
    assert (scripted["status"], scripted["error_kind"]) == ("error", "invalid")
    assert "checks.py is outside the repository" in scripted["error"]
    assert run.result("fine")["status"] == "passed"
    assert not (project.root / "LOADED").exists() and not (tmp_path / "LOADED").exists()


def test_proxy_credentials_from_the_environment_never_reach_the_log_or_an_artifact(project: Project) -> None:
    """HTTP(S)_PROXY / ALL_PROXY in either case, with or without a scheme: their passwords (or a lone token) are
    registered as secrets when the run starts, so an agent that prints its environment shows them masked, and in
    Actions the runner is asked to mask them before anything else is printed."""
    project.suite("s.jsonl", {"id": "env", "input": "env", "assert": {"type": "contains", "value": "proxy"}})
    env = {**ACTIONS, "HTTPS_PROXY": "http://proxyuser:pr0xy-s3cret-77@127.0.0.1:9",
           "all_proxy": "tok3n-only-4242@127.0.0.1:9", "NO_PROXY": "*"}
    code, lines, text = log_of("-i", "s.jsonl", cwd=project.root, env=env)
    assert code == 0, text
    assert "pr0xy-s3cret-77" not in text.replace("::add-mask::pr0xy-s3cret-77", "")
    assert "tok3n-only-4242" not in text.replace("::add-mask::tok3n-only-4242", "")
    masks = [line for line in lines if line.startswith("::add-mask::")]
    assert "::add-mask::pr0xy-s3cret-77" in masks and "::add-mask::tok3n-only-4242" in masks
    assert lines.index("::add-mask::pr0xy-s3cret-77") < next(i for i, line in enumerate(lines) if "env" in line)
    results = project.root / "agenttest-results"
    for artifact in ("report.json", "junit.xml", "summary.md", "ctrf.json", "events.jsonl"):
        written = (results / artifact).read_text()
        assert "pr0xy-s3cret-77" not in written and "tok3n-only-4242" not in written, artifact
    output = json.loads((results / "report.json").read_text())["results"][0]["output"]
    assert "HTTPS_PROXY=http://proxyuser:***@127.0.0.1:9" in output and "all_proxy=***@127.0.0.1:9" in output


def test_a_hook_module_out_of_the_repository_is_invalid_for_validate_and_run(tmp_path: Path) -> None:
    project, module = _repo_beside(tmp_path, "env_test.py", "def Before(ctx, case):\n    return None\n")
    (project.root / "env_test.py").symlink_to(module)                        # beside the suite
    agent_src = project.root / "assistants" / "bot" / "src"                  # Yao's layout: found only at run time
    agent_src.mkdir(parents=True)
    (agent_src / "agent_test.py").symlink_to(module)
    suite = [{"id": "beside", "input": "x", "before": "env_test.Before"},
             {"id": "misspelt", "input": "x", "after": "not a ref"},
             {"id": "yao", "input": "x", "before": "agent_test.Before"}]
    project.suite("s.jsonl", *suite)
    project.suite("assistants/bot/tests/t.jsonl", suite[2])
    checked = project.run("validate", "s.jsonl")
    assert checked.code == 2, checked.stdout + checked.stderr
    assert "s.jsonl:1: invalid test case: before: hook 'env_test.Before': " in checked.stdout
    assert "env_test.py is outside the repository" in checked.stdout
    assert "s.jsonl:2: invalid test case: after: hook reference 'not a ref' must look like module.function" \
        in checked.stdout
    run = project.run("-i", "s.jsonl", "-i", "assistants/bot/tests/t.jsonl")
    kinds = {(r["file"].split("/")[0], r["id"]): (r["status"], r["error_kind"]) for r in run.report["results"]}
    assert kinds[("s.jsonl", "beside")] == kinds[("s.jsonl", "misspelt")] == ("error", "invalid")
    yao = next(r for r in run.report["results"] if r["file"].startswith("assistants"))
    assert (yao["status"], yao["error_kind"]) == ("error", "invalid"), yao      # SPEC §11: not a failed hook
    assert "agent_test.py is outside the repository" in yao["error"]
    assert not (project.root / "LOADED").exists() and not (tmp_path / "LOADED").exists()


def test_huge_ids_names_tags_and_script_values_keep_every_artifact_small_and_whole(project: Project) -> None:
    project.write("checks.py", """
        def bigint(output, **_):
            return {"pass": False, "message": "m", "extra": 10**5000}
        """)
    long = "i" * 300_000
    project.suite("s.jsonl", {"id": long, "name": "n" * 300_000, "tags": ["t" * 300_000], "input": "x",
                              "assert": {"type": "contains", "value": "ok"}},
                  {"id": "script-int", "input": "x", "assert": {"type": "script", "script": "checks.bigint"}})
    run = project.run("-i", "s.jsonl")
    assert run.code == 1, run.stdout + run.stderr             # a failed case, not a run that lost its report
    results = run.report["results"]
    big = results[0]
    assert big["status"] == "passed" and big["id"].endswith("… [cut: 300,000 characters in all]")
    assert big["name"].endswith(" characters in all]") and big["tags"][0].endswith(" characters in all]")
    script = results[1]
    assert script["status"] == "failed"
    assert "returned a value that holds an integer of more than 4,300 digits" in script["assertions"][0]["message"]
    out = project.root / "agenttest-results"
    assert sorted(p.name for p in out.iterdir()) == ["ctrf.json", "events.jsonl", "junit.xml", "report.json",
                                                     "summary.md"]
    for name in ("report.json", "events.jsonl", "junit.xml", "ctrf.json", "summary.md"):
        assert (out / name).stat().st_size < 400_000, name
    assert len((out / "events.jsonl").read_text().splitlines()) == 4       # start, two results, summary
