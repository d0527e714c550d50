"""call_user: the one way agents, hooks and scripts are called — arity, sync or async, off the event loop, and user
code that calls sys.exit or raises KeyboardInterrupt turned into an ordinary error."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from agenttest.threads import call_user, run_in_thread
from fakes import gate

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("REQUEST_ID", default="unset")


def run(coro: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coro
    return asyncio.run(main())


def takes_none() -> str:
    return "none"


def takes_one(a: Any) -> tuple[Any, ...]:
    return (a,)


def takes_two_with_default(a: Any, b: Any = "default") -> tuple[Any, ...]:
    return (a, b)


def takes_any(*args: Any) -> tuple[Any, ...]:
    return args


def takes_keyword_only(a: Any, *, flag: bool = False) -> tuple[Any, ...]:
    return (a, flag)


@pytest.mark.parametrize(("func", "expected"), [
    (takes_none, "none"),
    (takes_one, (1,)),
    (takes_two_with_default, (1, 2)),
    (takes_any, (1, 2, 3)),
    (takes_keyword_only, (1, False)),
    (functools.partial(takes_two_with_default, "bound"), ("bound", 1)),
    (max, 3),                                   # a builtin without a readable signature gets every argument
])
def test_only_as_many_positional_arguments_as_the_function_takes(func: Callable[..., Any], expected: Any) -> None:
    assert run(call_user(func, 1, 2, 3)) == expected
    assert run(call_user(func, 1, 2, 3)) == expected       # the second call of a function: what it takes is kept


class _Unhashable:
    """A callable object that cannot be a dict key (it defines __eq__ and no __hash__)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unhashable)

    def __call__(self, a: Any, b: Any) -> tuple[Any, ...]:
        return (a, b)


def test_a_callable_that_cannot_be_a_key_still_gets_what_it_takes() -> None:
    assert run(call_user(_Unhashable(), 1, 2, 3)) == (1, 2)


def test_coroutine_functions_and_awaitable_results_are_awaited() -> None:
    async def answer(a: int) -> int:
        await asyncio.sleep(0)
        return a + 1

    def returns_coroutine(a: int) -> Awaitable[int]:
        return answer(a)

    assert run(call_user(answer, 1, "ignored")) == 2
    assert run(call_user(returns_coroutine, 41)) == 42


def test_sync_functions_run_in_another_thread_with_the_callers_context() -> None:
    def where() -> tuple[str, str]:
        return threading.current_thread().name, REQUEST_ID.get()

    async def main() -> tuple[str, str]:
        REQUEST_ID.set("case-7")
        return await call_user(where)

    name, request_id = asyncio.run(main())
    assert name != threading.current_thread().name and name.startswith("agenttest-")
    assert request_id == "case-7"


def test_a_blocking_sync_function_leaves_the_loop_free_and_obeys_a_timeout() -> None:
    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):     # only the timeout can end the wait: the function never returns
            await asyncio.wait_for(call_user(gate.current.wait), 0.2)

    with gate.closed() as blocked:
        asyncio.run(main())
        assert blocked.reached.wait(30)               # it was called, and is still blocked


def test_an_abandoned_call_does_not_keep_the_process_alive() -> None:
    script = ("import asyncio, threading\n"
              "from agenttest.threads import call_user\n"
              "called = threading.Event()\n"
              "def blocks():\n"
              "    called.set()\n"
              "    threading.Event().wait()\n"       # never returns
              "async def main():\n"
              "    call = asyncio.ensure_future(call_user(blocks))\n"
              "    while not called.is_set():\n"
              "        await asyncio.sleep(0.01)\n"
              "    call.cancel()\n"                  # as a timeout does
              "    try:\n"
              "        await call\n"
              "    except asyncio.CancelledError:\n"
              "        print('abandoned')\n"
              "asyncio.run(main())\n")
    # The process ends only if the blocked thread does not hold it: waiting for the thread would never end.
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "abandoned\n"), done.stderr


def exits(code: Any) -> Callable[[], None]:
    def user_code() -> None:
        sys.exit(code)
    return user_code


def raises(exc: BaseException) -> Callable[[], None]:
    def user_code() -> None:
        raise exc
    return user_code


def async_raises(exc: BaseException) -> Callable[[], Awaitable[None]]:
    async def user_code() -> None:
        raise exc
    return user_code


@pytest.mark.parametrize(("func", "message"), [
    (exits("x"), "called sys.exit('x')"),
    (exits(3), "called sys.exit(3)"),
    (exits(None), "called sys.exit()"),
    (raises(KeyboardInterrupt()), "raised KeyboardInterrupt"),
    (raises(GeneratorExit()), "raised GeneratorExit"),
    (async_raises(SystemExit("async")), "called sys.exit('async')"),
    (async_raises(KeyboardInterrupt()), "raised KeyboardInterrupt"),
    pytest.param(async_raises(asyncio.CancelledError()), "raised CancelledError",   # nobody cancelled the call
                 marks=pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 cannot tell a user's "
                                          "CancelledError from a cancellation (threads._being_cancelled)")),
])
def test_escapes_from_user_code_become_ordinary_errors(func: Callable[[], Any], message: str) -> None:
    with pytest.raises(RuntimeError) as caught:
        run(call_user(func))
    assert str(caught.value) == message
    assert isinstance(caught.value.__cause__, BaseException) and not isinstance(caught.value.__cause__, Exception)


def test_ordinary_exceptions_pass_through_unchanged() -> None:
    with pytest.raises(ValueError, match="bad input"):
        run(call_user(raises(ValueError("bad input"))))
    with pytest.raises(ValueError, match="bad input"):
        run(call_user(async_raises(ValueError("bad input"))))


def test_cancelling_the_caller_still_cancels() -> None:
    async def slow() -> None:
        await asyncio.sleep(5)

    async def main() -> None:
        await asyncio.wait_for(call_user(slow), 0.05)

    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(main())


def test_run_in_thread_hands_back_the_result_and_every_exception() -> None:
    assert run(run_in_thread(takes_two_with_default, 1, 2)) == (1, 2)
    with pytest.raises(SystemExit):
        run(run_in_thread(exits("raw")))
