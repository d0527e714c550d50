"""Resolve `module.function` references (hooks, script assertions) to Python callables in the user's files."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import HookError, UnsafeReference
from .workspace import UnsafePath, checked_file

_MODULES: dict[Path, ModuleType] = {}


def resolve_callable(ref: str, search_dirs: Iterable[Path], what: str = "function",
                     root: Path | None = None, *, test_suffix: bool = False) -> Callable[..., Any]:
    """`env_test.Before` → the `Before` attribute of the first `env_test.py` found in `search_dirs`.

    The module part may be dotted or slashed (`setup.db_test.Before`, `setup/db_test.Before` → `setup/db_test.py`).
    With `root` (a suite's repository), the file must be safe to read as `workspace.checked_file` says: a symlink
    out of the repository is not loaded. With `test_suffix` (hooks, as Yao finds them), `env.Before` is also
    looked for as `env_test.py`. Raises HookError naming the reference and where it looked.
    """
    problem = reference_problem(ref, what)
    if problem:
        raise HookError(problem)
    dirs = _unique(search_dirs)
    candidate = _found(ref, dirs, what, root, test_suffix)
    if candidate is None:
        looked = ", ".join(str(d) for d in dirs) or "nowhere"
        raise HookError(f"{what} {ref!r}: no {_relative(ref)}.py found (looked in {looked})")
    func_name = ref.strip().rsplit(".", 1)[1]
    module = _load(candidate.resolve())
    func = getattr(module, func_name, None)
    if func is None:
        raise HookError(f"{what} {func_name!r} is not defined in {candidate}")
    if not callable(func):
        raise HookError(f"{what} {func_name!r} in {candidate} is not callable")
    return func


def reference_problem(ref: str, what: str = "function", search_dirs: Iterable[Path] = (),
                      root: Path | None = None, *, test_suffix: bool = False) -> str | None:
    """What is wrong with a `module.function` reference that can be told without loading its module, or None:
    its shape, and whether the first file it names in `search_dirs` is one the suite may not read (checked when a
    suite is read, so `validate` finds it)."""
    ref = ref.strip()
    module, _, func = ref.rpartition(".")
    if not func or "" in module.replace("\\", "/").replace(".", "/").split("/"):     # `a..b`, `.b`, `a.`, `b`
        return f"{what} reference {ref!r} must look like module.function (e.g. env_test.Before)"
    try:
        _found(ref, _unique(search_dirs), what, root, test_suffix)
    except UnsafeReference as exc:
        return exc.message
    return None


def definition_problem(ref: str, what: str, search_dirs: Iterable[Path], root: Path | None = None, *,
                       test_suffix: bool = False) -> str | None:
    """What is wrong with a well-formed reference whose module lies in `search_dirs`: the module does not load, or
    does not define the function, or it is not callable (`resolve_callable`'s HookError); None when it is fine, or
    when no such module is there — another place may hold it when the case runs (an agent's `src/`, where Yao keeps
    hooks). Worked out once for each reference and place: every case of a suite names the same hooks."""
    dirs = _unique(search_dirs)
    key = (ref.strip(), what, tuple(dirs), root, test_suffix)
    if key in _DEFINITION_PROBLEMS:
        return _DEFINITION_PROBLEMS[key]
    problem = None
    try:
        if _found(ref, dirs, what, root, test_suffix) is not None:
            resolve_callable(ref, dirs, what, root, test_suffix=test_suffix)
    except (HookError, UnsafeReference) as exc:
        problem = exc.message
    if len(_DEFINITION_PROBLEMS) < 1024:
        _DEFINITION_PROBLEMS[key] = problem
    return problem


_DEFINITION_PROBLEMS: dict[tuple[str, str, tuple[Path, ...], Path | None, bool], str | None] = {}


def _relative(ref: str) -> Path:
    module_part = ref.strip().rsplit(".", 1)[0]
    return Path(*module_part.replace("\\", "/").replace(".", "/").split("/"))


def _found(ref: str, dirs: list[Path], what: str, root: Path | None, test_suffix: bool = False) -> Path | None:
    """The first `<module>.py` of `ref` in `dirs` (with `test_suffix`, `<module>_test.py` where `<module>.py` is
    not, as Yao appends `_test`), or None. With `root`, UnsafeReference when the suite may not read it
    (`workspace.checked_file`)."""
    relative = _relative(ref)
    names = [relative]
    if test_suffix and not relative.name.endswith("_test"):
        names.append(relative.with_name(relative.name + "_test"))
    for directory, name in ((d, n) for d in dirs for n in names):
        candidate = (directory / name).with_suffix(".py")
        if candidate.is_file():
            if root is not None:
                try:
                    checked_file(candidate, root, str(candidate))
                except UnsafePath as exc:
                    raise UnsafeReference(f"{what} {ref.strip()!r}: {exc}") from None
            return candidate
    return None


def _load(path: Path) -> ModuleType:
    module = _MODULES.get(path)
    if module is not None:
        return module
    import hashlib  # here: only loading a user's file needs it (issue #27)

    name = f"agenttest_user_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HookError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # A user file may import its neighbours (`import helpers`), so its directory is importable while it loads.
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:   # a file that runs argparse or sys.exit on import is a bad reference
        sys.modules.pop(name, None)
        from .user_errors import describe

        raise HookError(f"loading {path} failed: {describe(exc)}") from exc
    finally:
        sys.path.remove(str(path.parent))
    _MODULES[path] = module
    return module


def _unique(dirs: Iterable[Path]) -> list[Path]:
    seen: list[Path] = []
    for directory in dirs:
        if directory not in seen:
            seen.append(directory)
    return seen
