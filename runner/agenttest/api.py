"""The public Python API: load agenttest.yaml, get an agent, call it (sync or async) and read its canonical response.

A `Config` owns one AgentPool and the event loop its connections live on, in a daemon thread: aiohttp sessions
belong to the loop that opened them, so every call — from plain code, from threads, from pytest-asyncio tests that
each get a loop of their own — runs on that one loop, over one connection pool, closed once by `Config.close()`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import sysconfig
import threading
import time
import weakref
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from .agents.base import AgentRequest, AgentResponse
from .agents.helpers import HelperCaller
from .agents.pool import AgentPool
from .assertions import REGISTRY, AssertionSpec, Verdict
from .cases.inputs import InputError, normalize_input
from .cases.schema import CaseOptions
from .checks import evaluation_context, prepared
from .durations import format_duration, parse_timeout
from .engine.context import RequestIdentity
from .engine.target import call_agent, target_request
from .errors import AgentCallError, AgentTestError, ConfigError, HelperError, Where
from .hints import helper_name
from .options import merge_options
from .project import ProjectConfig, find_config, load_project
from .secrets import mask
from .timeouts import within
from .validation import first_error
from .workspace import attachment_root

T = TypeVar("T")


@dataclass
class Response(AgentResponse):
    """An agent's canonical response (docs/configuration.md): `content`, `tool_calls` (each with `.name` and
    `.arguments`), `tools` (executed calls, with `.result` and `.error`), `data`, `usage`, `finish_reason`, `model`;
    plus the `input` it answered (as given to `call`) and how long the call took (`latency_ms`), which the judge and the
    `latency` check read."""

    input: Any = None
    latency_ms: float | None = None


class Config:
    """A loaded agenttest.yaml: its agents, and the connections to them (opened on first use).

    Close it (`close()`, `await aclose()`, or `with load_config() as config:`) to close every connection; at
    interpreter exit it is closed anyway."""

    def __init__(self, project: ProjectConfig) -> None:
        self._project = project
        self._options = merge_options(project.defaults)
        self._runtime = _Runtime(AgentPool(project, parallel=self._options.parallel, retries=self._options.retries))
        self._finalizer = weakref.finalize(self, self._runtime.close)

    @property
    def path(self) -> Path:
        """The agenttest.yaml this was read from."""
        assert self._project.path is not None
        return self._project.path

    @property
    def agents(self) -> tuple[str, ...]:
        """The ids of every agent the file defines (helpers included)."""
        return tuple(self._project.agents)

    @property
    def default_agent(self) -> str | None:
        """`defaults.name`: the agent under test when none is named."""
        return self._options.name

    def close(self) -> None:
        """Close every connection and process of this config's agents. Calling an agent afterwards is an error."""
        self._finalizer()

    async def aclose(self) -> None:
        """`close()` without blocking the running event loop."""
        await asyncio.get_running_loop().run_in_executor(None, self._finalizer)

    def __enter__(self) -> Config:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Config:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<agenttest.Config {self.path}>"


class Agent:
    """One agent of a config, to call with `call(input, **options)` or `await acall(input, **options)`.

    `input` is a user message (a string), one chat message (`{"role", "content"}`), or a message list (a
    conversation so far); `content` may be a list of parts, with `file://` paths relative to agenttest.yaml's
    directory. `options` are the request options of a test case (docs/test-cases.md): `connector`, `skip`, `mode`,
    `search`, `metadata`, `disable_global_prompts`. `timeout` (seconds, or a duration such as `"30s"`) defaults to
    `defaults.timeout` (2m). A failed call raises `AgentCallError` (its `kind`: `agent`, `infra`, `timeout`)."""

    def __init__(self, config: Config, agent_id: str, *, owns_config: bool = False, test_id: str = "api") -> None:
        self._config = config
        self._owns_config = owns_config
        self._test_id = test_id
        self._transport = config._runtime.pool.target(agent_id)
        self.id = agent_id

    @property
    def config(self) -> Config:
        return self._config

    def call(self, input: Any, *, timeout: float | str | None = None, **options: Any) -> Response:
        """Call the agent and wait for its response. Inside a running event loop (an async test), use `acall`."""
        __tracebackhide__ = True
        refuse_inside_loop(f"agent({self.id!r}).call()", "await agent(...).acall(...)")
        return result_of(self._config._runtime.submit(self._send(input, timeout, options)))

    async def acall(self, input: Any, *, timeout: float | str | None = None, **options: Any) -> Response:
        """Call the agent from a coroutine (any event loop; the call itself runs on the config's loop)."""
        __tracebackhide__ = True
        future = self._config._runtime.submit(self._send(input, timeout, options))
        try:
            return await asyncio.wrap_future(future)
        except USER_ERRORS as exc:
            raise afresh(exc)  # noqa: B904  (afresh sets the cause)

    def close(self) -> None:
        """Close the connections, when this agent came with its own config (`get_agent(id)` without one)."""
        if self._owns_config:
            self._config.close()

    async def aclose(self) -> None:
        if self._owns_config:
            await self._config.aclose()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<agenttest.Agent {self.id}>"

    def request(self, input: Any, options: dict[str, Any]) -> AgentRequest:
        """The canonical request for `input` with these options. AgentTestError naming the field when either is
        not what a test case allows."""
        project = self._config._project
        try:
            messages = normalize_input(input, base_dir=project.directory,
                                       repo_root=attachment_root(project.directory, project.directory))
        except InputError as exc:
            raise AgentTestError(exc.message, Where(field=exc.field)) from None
        try:
            checked = CaseOptions.model_validate(options)
        except ValidationError as exc:
            raise AgentTestError(first_error(exc, CaseOptions, "options")) from None
        identity = RequestIdentity(user=self._config._options.user, team=self._config._options.team)
        return target_request(self.id, messages, checked.model_dump(exclude_none=True),
                              identity.request_context(None, test_id=self._test_id),
                              connector=checked.connector or self._config._options.connector)

    async def _send(self, input: Any, timeout: float | str | None, options: dict[str, Any]) -> Response:
        seconds = _seconds(timeout, self._config._options.timeout_seconds)
        request = self.request(input, options)
        request.deadline = time.monotonic() + seconds
        try:
            response, latency_ms = await call_agent(self._transport, request, seconds)
        except asyncio.TimeoutError:
            raise AgentCallError(f"timeout after {format_duration(seconds)}", "timeout") from None
        fields = {f.name: getattr(response, f.name) for f in dataclasses.fields(AgentResponse)}
        return Response(**fields, input=input, latency_ms=latency_ms)


def judge(subject: Any, validator: str, criteria: Any = None, *, metadata: dict[str, Any] | None = None,
          threshold: float | None = None, samples: int = 1, connector: str | None = None, input: Any = None,
          conversation: list[dict[str, Any]] | None = None, timeout: float | str | None = None,
          config: Config | None = None) -> Verdict:
    """Ask the validator agent `validator` (an agent of agenttest.yaml; `builtin: validator` is a good one) whether
    `subject` — a response, or any value — meets `criteria`, exactly as a `type: agent` assertion does
    (docs/test-cases.md): it is sent `{"criteria", "input", "output", "conversation", …metadata}` and its `reason`,
    `score` and `suggestions` come back in the verdict (`.message`, `.score`, `.details`). `threshold`:
    `score ≥ threshold` decides; `samples`: ask N times, the majority decides. `input` defaults to the one the response
    answered; `conversation` (or `metadata["conversation"]`, the seeds' form) is what was said before. A judge that
    cannot be reached or gives no verdict raises HelperError."""
    __tracebackhide__ = True
    refuse_inside_loop("agenttest.judge()", "await agenttest.ajudge(...)")
    owns = config is None
    chosen = config if config is not None else load_config()
    try:
        return result_of(chosen._runtime.submit(_judgement(chosen, subject, validator, criteria, metadata, threshold,
                                                           samples, connector, input, conversation, timeout)))
    finally:
        if owns:
            chosen.close()


async def ajudge(subject: Any, validator: str, criteria: Any = None, *, metadata: dict[str, Any] | None = None,
                 threshold: float | None = None, samples: int = 1, connector: str | None = None, input: Any = None,
                 conversation: list[dict[str, Any]] | None = None, timeout: float | str | None = None,
                 config: Config | None = None) -> Verdict:
    """`judge` from a coroutine."""
    __tracebackhide__ = True
    owns = config is None
    chosen = config if config is not None else load_config()
    try:
        future = chosen._runtime.submit(_judgement(chosen, subject, validator, criteria, metadata, threshold,
                                                   samples, connector, input, conversation, timeout))
        try:
            return await asyncio.wrap_future(future)
        except USER_ERRORS as exc:
            raise afresh(exc)  # noqa: B904  (afresh sets the cause)
    finally:
        if owns:
            await chosen.aclose()


# The judge assertion's fields (as a suite names them) by the names `judge` gives them.
_JUDGE_FIELDS = {"value": "criteria", "use": "validator", "options.metadata": "metadata",
                 "options.threshold": "threshold", "options.samples": "samples", "options.connector": "connector"}


def _judgement(config: Config, subject: Any, validator: str, criteria: Any, metadata: dict[str, Any] | None,
               threshold: float | None, samples: int, connector: str | None, input: Any,
               conversation: list[dict[str, Any]] | None, timeout: float | str | None) -> Coroutine[Any, Any, Verdict]:
    """The judge's call, ready to run on the config's loop; every mistake in the arguments is raised now, in the
    caller's thread."""
    __tracebackhide__ = True
    told = dict(metadata or {})
    if "conversation" in told:          # the seeds' t.assert.Agent() passes it in metadata
        if conversation is not None:
            raise AgentTestError("the conversation is given twice (conversation= and metadata['conversation'])")
        conversation = told.pop("conversation")
    options: dict[str, Any] = {"metadata": told, "samples": samples}
    if threshold is not None:
        options["threshold"] = threshold
    if connector is not None:
        options["connector"] = connector
    spec = prepared(AssertionSpec(type="agent", value=criteria, use=f"agents:{validator}", options=options,
                                  base_dir=config._project.directory), _JUDGE_FIELDS)
    pool = config._runtime.pool
    try:
        pool.helper(validator)
    except AgentTestError as exc:
        raise type(exc)(exc.message, exc.where) from None
    seconds = _seconds(timeout, config._options.timeout_seconds)
    identity = RequestIdentity(user=config._options.user, team=config._options.team)
    helpers = HelperCaller(agents=pool, context={**identity.request_context(None), "test_id": "judge"},
                           deadline=time.monotonic() + seconds)
    context = evaluation_context(subject, helpers=helpers, conversation=conversation)
    if input is not None:
        context.input = input

    async def ask() -> Verdict:
        try:
            return await within(REGISTRY["agent"].evaluate(spec, context), seconds)  # type: ignore[arg-type]
        except asyncio.TimeoutError:
            raise HelperError(f"{helper_name('judge', validator)}: timeout after {format_duration(seconds)}",
                              "judge") from None

    return ask()


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read agenttest.yaml: `path`, else `$AGENTTEST_CONFIG`, else the first agenttest.yaml walking up from the
    working directory (as the CLI finds it). Raises ConfigError naming the file and key."""
    __tracebackhide__ = True
    return config_from(Path.cwd(), None if path is None else os.fspath(path))


def config_from(start: Path, explicit: str | None = None) -> Config:
    """The config `explicit` names (relative to `start`), else the one found from `start` the CLI's way."""
    __tracebackhide__ = True
    try:
        found = find_config(explicit, [], start)
        if found is None:
            raise ConfigError(f"no agenttest.yaml found (looked in {start} and upward; set $AGENTTEST_CONFIG or "
                              "pass a path); `agenttest init` writes one")
        return Config(load_project(found))
    except AgentTestError as exc:
        raise type(exc)(exc.message, exc.where) from None


def get_agent(agent_id: str | None = None, config: Config | None = None) -> Agent:
    """The agent `agent_id` of `config` (default: `load_config()`, closed with the agent); without an id, the
    config's `defaults.name`. Raises ConfigError when the agent is not defined or cannot be built."""
    __tracebackhide__ = True
    owns = config is None
    chosen = config if config is not None else load_config()
    try:
        return agent_of(chosen, agent_id, owns_config=owns)
    except AgentTestError:
        if owns:
            chosen.close()
        raise


def agent_of(config: Config, agent_id: str | None, *, owns_config: bool = False, test_id: str = "api") -> Agent:
    __tracebackhide__ = True
    chosen = agent_id or config.default_agent
    if not chosen:
        raise ConfigError(f"no agent named: pass an agent id, or set defaults.name in {config.path} "
                          f"(agents: {', '.join(config.agents) or 'none'})")
    try:
        return Agent(config, chosen, owns_config=owns_config, test_id=test_id)
    except AgentTestError as exc:
        raise type(exc)(exc.message, exc.where) from None


def _seconds(timeout: float | str | None, default: float) -> float:
    """A `timeout` argument in seconds: a positive number, or a Go-style duration (`30s`, `1m30s`)."""
    if timeout is None:
        return default
    if isinstance(timeout, str):
        try:
            return parse_timeout(timeout)
        except ValueError as exc:
            raise AgentTestError(f"timeout: {exc}") from None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise AgentTestError(f"timeout: expected a positive number of seconds or a duration, got {timeout!r}")
    return float(timeout)


def refuse_inside_loop(what: str, instead: str) -> None:
    """A sync call inside a running event loop would block it (and hang, when the agent is served by that very
    loop): refuse, saying what to write instead."""
    __tracebackhide__ = True
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(f"{what} blocks, and an event loop is running in this thread (an async test?): "
                       f"use `{instead}` instead")


def result_of(future: concurrent.futures.Future[T]) -> T:
    """The future's result, waiting for it; a failure the user should see is raised `afresh`."""
    __tracebackhide__ = True
    try:
        return future.result()
    except USER_ERRORS as exc:
        raise afresh(exc)  # noqa: B904  (afresh sets the cause)


USER_ERRORS = (AgentCallError, HelperError, AgentTestError)


def afresh(exc: Exception) -> Exception:
    """A failure raised on the agents' loop, made again in the caller's thread and masked: its traceback starts in
    the caller's code, and goes on (as its cause) in a Python agent's own code when that raised."""
    fresh: Exception
    if isinstance(exc, AgentCallError | HelperError):
        fresh = type(exc)(mask(exc.message), exc.kind)
    elif isinstance(exc, AgentTestError):
        fresh = type(exc)(mask(exc.message), exc.where)
    else:
        return exc
    fresh.__cause__, fresh.__suppress_context__ = _from_user_code(exc.__cause__), True
    return fresh


_NOT_USER_CODE = (str(Path(__file__).resolve().parent), sysconfig.get_paths()["stdlib"])


def _from_user_code(exc: BaseException | None) -> BaseException | None:
    """`exc` (what a Python agent raised) with the frames above the agent's own code cut: ours, asyncio's and the
    worker thread's say nothing about the user's mistake."""
    if exc is None:
        return None
    frame = exc.__traceback__
    while frame is not None and frame.tb_frame.f_code.co_filename.startswith(_NOT_USER_CODE):
        frame = frame.tb_next
    return exc.with_traceback(frame) if frame is not None else exc


class _Runtime:
    """An AgentPool and the event loop, in a daemon thread, that every call to its agents runs on."""

    def __init__(self, pool: AgentPool) -> None:
        self.pool = pool
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        with self._lock:
            if self._closed:
                coroutine.close()
                raise AgentTestError("this agenttest config is closed: load it again to call its agents")
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="agenttest-agents", daemon=True)
                self._thread.start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coroutine, loop)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.pool.aclose(), loop).result(timeout=10)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            if not thread.is_alive():
                loop.close()


__all__ = ["Agent", "Config", "Response", "ajudge", "get_agent", "judge", "load_config"]

