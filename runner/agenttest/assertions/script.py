"""Script assertions: a user's Python function decides whether the response passes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ..bounds import from_python
from ..errors import HookError, SuiteError
from ..refs import resolve_callable
from .base import AssertionSpec, EvalContext, Verdict, assertion

_USE_PREFIX = "scripts:"


class _Script(NamedTuple):
    ref: str
    func: Callable[..., Any]


def _prepare_script(spec: AssertionSpec) -> None:
    """Resolve `script` (or `use: "scripts:module.func"`) to a function in the suite's directory or its `src/`."""
    if spec.script:
        ref = spec.script
    elif spec.use:
        if not spec.use.startswith(_USE_PREFIX):
            raise SuiteError(f"script assertion 'use' must start with '{_USE_PREFIX}' (e.g. scripts:checks.valid), "
                             f"got {spec.use!r}")
        ref = spec.use[len(_USE_PREFIX):]
    else:
        raise SuiteError("script assertion requires a script name ('script: module.func' or "
                         "'use: scripts:module.func')")
    try:
        func = resolve_callable(ref, [spec.base_dir, spec.base_dir / "src"], what="script",
                                root=spec.root or spec.base_dir)
    except HookError as exc:
        raise SuiteError(exc.message) from exc
    spec.prepared = _Script(ref, func)


@assertion("script", prepare=_prepare_script)
async def script(spec: AssertionSpec, ctx: EvalContext) -> Verdict:
    """A Python function, sync or async, judges the response.

    `script` (or `use: "scripts:module.func"`): the function, found as `module.py` next to the suite or in its
    `src/`. It is called with as many of `(output, input, value, response)` as it takes — the subject, the case
    input, this assertion's `value`, and the whole response as a dict — and returns a bool, or
    `{"pass": bool, "message": str}` (`passed` is accepted for `pass`). A sync function runs in its own thread, so
    a slow one is stopped by the case's timeout; raising, or calling `sys.exit`, fails the assertion (`negate`
    too: it gave no verdict to turn over).
    """
    from ..threads import call_user  # imported on use: registering the assertion types loads no event loop

    target: _Script = spec.prepared
    try:
        returned = await call_user(target.func, ctx.output, ctx.input, spec.value, ctx.response.to_dict(),
                                   deadline=ctx.deadline)
    except Exception as exc:  # the user's code failing is a failed assertion, not a crash of the run
        from ..user_errors import describe

        return Verdict(False, f"script execution failed: {target.ref} raised {describe(exc)}",
                       expected=spec.value, decided=False)
    try:
        returned = from_python(returned)    # what no artifact could write must not reach the report
    except ValueError as exc:
        return Verdict(False, f"script {target.ref} returned a value that {exc}", expected=spec.value,
                       decided=False)
    if isinstance(returned, bool):
        message = "script assertion passed" if returned else "script assertion failed"
        return Verdict(returned, message, expected=spec.value, actual=returned)
    if isinstance(returned, dict):
        passed = returned.get("pass", returned.get("passed"))
        if isinstance(passed, bool):
            default = "script assertion passed" if passed else "script assertion failed"
            note = returned.get("message")
            return Verdict(passed, note if isinstance(note, str) and note else default, expected=spec.value,
                           actual=returned)
        return Verdict(False, f"script {target.ref} returned an object without a boolean 'pass'", expected=spec.value,
                       actual=returned, decided=False)
    return Verdict(False, f"script returned unexpected type: {type(returned).__name__} "
                          f"(expected a bool or {{\"pass\": bool, \"message\": str}})", expected=spec.value,
                   actual=repr(returned), decided=False)
