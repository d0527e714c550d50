"""The agent a suite tests by its path, as in Yao's `assistants/<agent>/tests/…`: what `run` and `validate` both
read, without the run configuration (`config`, which `validate` does not load)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .hints import did_you_mean
from .project import ProjectConfig


def suite_agent(path: Path) -> tuple[str, Path] | None:
    """The agent a suite under `assistants/` tests, by Yao's rule, and its directory; None for a suite elsewhere.

    Yao walks up from the suite to the agent's `package.yao`: the directory holding it is the agent's, its path
    after `assistants/` joined with dots the id. Without one, the agent's directory is the one above the suite's
    last `tests/` folder (`assistants/tests/hooks-test/tests/regress/x.jsonl` → `tests.hooks-test`), else the suite's
    own directory."""
    parts = path.parts
    if "assistants" not in parts:
        return None
    start = parts.index("assistants") + 1
    dirs = list(parts[start:])
    if dirs and "." in dirs[-1]:      # a file name, not a directory
        dirs = dirs[:-1]
    for end in range(len(dirs), 0, -1):
        if (Path(*parts[:start + end]) / "package.yao").is_file():
            break
    else:
        last_tests = max((i for i, name in enumerate(dirs) if name == "tests"), default=0)
        end = last_tests if last_tests > 0 else len(dirs) - (1 if dirs[-1:] == ["tests"] else 0)
    if end <= 0:
        return None
    return ".".join(dirs[:end]), Path(*parts[:start + end])


def undefined_suite_agents(files: Iterable[str | None], cwd: Path, project: ProjectConfig,
                           name: str | None) -> list[str]:
    """For each suite file whose agent comes from its path (Yao's `assistants/<agent>/tests/…`, when no `-n` or
    `defaults.name` names one) and is not defined in the config: a message naming the file. Nothing to check
    without a config."""
    if name or project.path is None:
        return []
    problems = []
    for file in dict.fromkeys(f for f in files if f):
        derived = suite_agent(cwd / file)
        if derived is not None and derived[0] not in project.agents:
            hint = did_you_mean(derived[0], project.agents) or f" (defined: {', '.join(project.agents) or 'none'})"
            problems.append(f"{file}: its agent {derived[0]!r} (from its path, as in Yao's assistants/<agent>/tests/) "
                            f"is not defined in {project.display_path}{hint}")
    return problems
