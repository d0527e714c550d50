"""Start-up stays light (issue #10): `agenttest --version` and `--help` load none of the heavy libraries; each
command imports what it needs when it runs. Measured in bench/, asserted here only as which modules load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("aiohttp", "pydantic", "jsonschema", "yaml", "jsonpath_ng")

# Runs the CLI with the given arguments, then prints every module it loaded.
MODULES = """
import json, sys
sys.argv = ["agenttest", *sys.argv[1:]]
from agenttest.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


# The same interpreter and prelude without the command: what any Python process has loaded.
BARE = """
import json, sys
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(*args: str, script: str = MODULES) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.splitlines()[-1]))


def _heavy_loaded(*args: str) -> list[str]:
    return sorted(m for m in _loaded(*args) if m.split(".")[0] in HEAVY)


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["--help"], ["validate", "--help"]])
def test_the_cli_starts_without_the_heavy_libraries(args: list[str]) -> None:
    assert _heavy_loaded(*args) == []


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_the_version_is_answered_before_anything_else_is_imported(flag: str) -> None:
    """Issue #27: `agenttest --version` loads the package and its entry point only — not click (~3× the bare
    interpreter's start), not typing, no other module of ours."""
    assert _loaded(flag) - _loaded(script=BARE) == {"__future__", "agenttest", "agenttest.cli"}


# The click group itself, as the entry point was before it answered `--version` on its own.
GROUP = """
import sys
sys.argv = ["agenttest", *sys.argv[1:]]
from agenttest.commands import main
main()
"""


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["--version", "--help"], ["-V", "x"], ["--versio"]])
@pytest.mark.parametrize("completing", [False, True])
def test_the_version_reads_as_click_prints_it(args: list[str], completing: bool) -> None:
    """Byte for byte what click's version option prints, with its exit code — and anything more than the flag alone
    (or a shell asking click for completions) is click's to answer, as before."""
    env = {**os.environ, "_AGENTTEST_COMPLETE": "bash_source" if completing else ""}
    console = str(Path(sys.executable).with_name("agenttest"))
    ours, clicks = (subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
                    for argv in ([console, *args], [sys.executable, "-c", GROUP, *args]))
    assert ours.stdout + ours.stderr and (ours.returncode, ours.stdout, ours.stderr) == (
        clicks.returncode, clicks.stdout, clicks.stderr)
    if args in (["--version"], ["-V"]) and not completing:
        module = subprocess.run([sys.executable, "-m", "agenttest", *args], capture_output=True, text=True,
                                timeout=60, env=env)
        for run in (ours, module):
            assert (run.returncode, run.stdout, run.stderr) == (0, "agenttest, version 0.1.0\n", "")


def test_a_run_still_loads_what_it_needs() -> None:
    assert "pydantic" in _heavy_loaded("schema")


PLAIN_CONFIG = ("version: 1\ndefaults:\n  name: bot\n  timeout: 30s\nagents:\n  bot:\n    provider: openai\n"
                "    base_url: http://127.0.0.1:9/v1\n    model: m\n    api_key: ${BENCH_KEY}\n")
PLAIN_CASE = ('{"id": "a", "input": "hi", "assert": [{"type": "contains", "value": "x"}, '
              '{"type": "regex", "value": "^h"}]}')


def _validate_loaded(project: Path, suite: str) -> tuple[set[str], str]:
    (project / "s.jsonl").write_text(suite + "\n")
    proc = subprocess.run([sys.executable, "-c", MODULES, "validate", "-i", "s.jsonl"], cwd=project,
                          capture_output=True, text=True, timeout=60)
    *said, loaded = proc.stdout.splitlines()
    return set(json.loads(loaded)), "\n".join(said) + proc.stderr


def test_validate_loads_no_http_client_no_schema_library_and_no_reporter(tmp_path) -> None:
    """Checking a suite needs the suite's and the config's code, not the providers' code or the artifacts'
    writers: the openai agent's settings are read without aiohttp, a `contains` assertion without jsonschema — and,
    both of the plain shapes, without pydantic (issue #27: its import alone takes ~6× the bare interpreter's
    start). Of the libraries, only click and PyYAML load."""
    (tmp_path / "agenttest.yaml").write_text(PLAIN_CONFIG)
    loaded, said = _validate_loaded(tmp_path, PLAIN_CASE)
    assert said == "1 valid, 0 invalid in 1 file"
    assert "agenttest.cases.loader" in loaded and "agenttest.cases.plain" in loaded  # it did check the suite
    bare = _loaded(script=BARE)
    libraries = {name.split(".")[0] for name in loaded - bare} - set(sys.stdlib_module_names)
    # (PyYAML's libyaml binding brings the Cython runtime's own modules.)
    assert {name for name in libraries if not name.startswith(("_cython_", "cython_"))} == {
        "agenttest", "click", "yaml"}
    unwanted = {"pydantic", "pydantic_core", "annotated_types", "typing_extensions", "aiohttp", "jsonschema",
                "jsonpath_ng", "json_repair", "orjson", "agenttest.cases.schema", "agenttest.agents.settings",
                "agenttest.options", "agenttest.assertions.option_models", "agenttest.agents.pool",
                "agenttest.agents.openai", "agenttest.agents.exec", "agenttest.agents.replay",
                "agenttest.engine.run", "agenttest.config", "agenttest.report.reporters", "agenttest.report.junit",
                "hashlib", "tempfile", "importlib.resources", "importlib.metadata"}
    assert sorted(unwanted & loaded) == []


@pytest.mark.parametrize(("config", "suite"), [
    (PLAIN_CONFIG, '{"id": "a", "input": "hi", "assert": {"type": "contains", "value": "x", "options": '
                   '{"ignore_case": true}}}'),                                       # an assertion's options
    (PLAIN_CONFIG, '{"id": "a", "input": "hi", "asert": "x"}'),                     # a mistake in the suite
    (PLAIN_CONFIG.replace("timeout: 30s", "timeout: 30"), PLAIN_CASE),              # a mistake in the config
])
def test_what_is_not_of_the_plain_shapes_is_checked_by_the_models(tmp_path, config: str, suite: str) -> None:
    (tmp_path / "agenttest.yaml").write_text(config)
    loaded, _ = _validate_loaded(tmp_path, suite)
    assert "pydantic" in loaded


NETWORK = """
import json, os, sys, threading
if sys.argv[1:] == ["threaded"]:
    threading.Thread(target=threading.Event().wait, daemon=True).start()
from agenttest.agents.network import aiohttp, tls_context
defaults = aiohttp.connector._SSL_CONTEXT_VERIFIED.cert_store_stats()["x509"]
print(json.dumps([{k: os.environ.get(k) for k in ("SSL_CERT_FILE", "SSL_CERT_DIR")}, defaults,
                  tls_context().cert_store_stats()["x509"]]))
"""


def _network_probe(env: dict[str, str], *args: str) -> tuple[dict[str, str | None], int, int]:
    clean = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    proc = subprocess.run([sys.executable, "-c", NETWORK, *args], env={**clean, **env}, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    left, aiohttp_defaults, ours = json.loads(proc.stdout)
    return left, aiohttp_defaults, ours


@pytest.mark.parametrize("locations", [{}, {"SSL_CERT_FILE": "BUNDLE", "SSL_CERT_DIR": "/nowhere"}])
def test_aiohttp_loads_no_certificate_and_the_environment_is_left_as_it_was(tmp_path, locations) -> None:
    """aiohttp's own TLS contexts load no CA certificate when it is imported (~0.1 s and ~3 MB saved); OpenSSL's
    locations are put back as they were, so the context https agents get loads them as before."""
    import trustme

    bundle = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    wanted = {k: str(bundle) if v == "BUNDLE" else v for k, v in locations.items()}
    left, aiohttp_defaults, ours = _network_probe(wanted)
    assert left == {"SSL_CERT_FILE": wanted.get("SSL_CERT_FILE"), "SSL_CERT_DIR": wanted.get("SSL_CERT_DIR")}
    assert aiohttp_defaults == 0
    if wanted:
        assert ours == 1          # exactly the bundle's one CA


def test_with_other_threads_running_aiohttp_is_imported_as_it_is(tmp_path) -> None:
    """Another thread could read the environment while it is changed: then nothing is changed."""
    import trustme

    bundle = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    left, aiohttp_defaults, ours = _network_probe({"SSL_CERT_FILE": str(bundle)}, "threaded")
    assert left == {"SSL_CERT_FILE": str(bundle), "SSL_CERT_DIR": None}
    assert aiohttp_defaults == ours == 1


def test_a_run_of_an_in_process_agent_loads_no_http_client(tmp_path: Path) -> None:
    """A run whose agent is a Python function, and that asks nothing of GitHub (no `--comment`, no `--baseline
    auto`), loads neither aiohttp nor the GitHub client: the pull-request loop imports them when it calls GitHub
    (issue #27: 50–95 ms of every run and replay)."""
    (tmp_path / "agenttest.yaml").write_text("version: 1\ndefaults:\n  name: echo\nagents:\n"
                                            "  echo: {provider: python, callable: 'echo:respond'}\n")
    (tmp_path / "echo.py").write_text("def respond(request):\n    return 'echo'\n")
    (tmp_path / "s.jsonl").write_text('{"id": "a", "input": "hi", "assert": {"type": "contains", "value": "echo"}}\n')
    proc = subprocess.run([sys.executable, "-c", MODULES, "-i", "s.jsonl", "--no-cache"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTTEST_"))})
    loaded = set(json.loads(proc.stdout.splitlines()[-1]))
    assert json.loads((tmp_path / "agenttest-results" / "report.json").read_text())["summary"]["passed"] == 1
    assert "agenttest.github.pull_request" in loaded          # the loop is there: it writes the step outputs
    assert sorted(name for name in loaded if name.split(".")[0] == "aiohttp"
                  or name in ("agenttest.github.rest", "agenttest.github.comment")) == []
