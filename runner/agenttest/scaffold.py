"""`agenttest init`: a starting project in the current repository — agenttest.yaml, an example suite with a
static, a judged and a dynamic case, labelled replies to calibrate its judge with, and a GitHub Actions workflow —
from the templates shipped in `templates/`, and `agenttest-results/` in .gitignore."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from .errors import UsageError
from .hosting import ACTION
from .project import CONFIG_NAMES
from .workspace import repository_root, write_refusal

SUITE = "tests/agents/example.jsonl"
# Where each file goes, relative to the repository root, and the template it is written from. The labels are no
# suite: they stay out of tests/, which `agenttest -i tests/` would read as suites.
FILES = (("agenttest.yaml", "agenttest.yaml"), (SUITE, "example.jsonl"),
         ("calibration/judge-labels.jsonl", "judge-labels.jsonl"), (".github/workflows/agenttest.yml", "workflow.yml"))
GITIGNORE = ".gitignore"
# What every run writes (the default --output-dir), kept out of commits; an entry of these spellings is one already.
IGNORED = "agenttest-results/"
_IGNORED_ALREADY = {"agenttest-results", "agenttest-results/", "/agenttest-results", "/agenttest-results/",
                    "agenttest-results/*", "/agenttest-results/*", "agenttest-results/**", "/agenttest-results/**"}
_IGNORE_LINES = f"# What agenttest writes on every run (added by `agenttest init`)\n{IGNORED}\n"


class Scaffolded(NamedTuple):
    """What `init` did: the files it wrote, and .gitignore's part ("wrote", "updated", or "" when it already
    ignored the results)."""

    files: list[Path]
    gitignore: str


def scaffold(cwd: Path) -> Scaffolded:
    """Write the starting files at the root of the git repository holding `cwd` (or in `cwd`, outside git), and
    `agenttest-results/` into its .gitignore (written, or appended to, never overwritten). UsageError, and nothing
    written, when any of the files (or another agenttest config) is there already — init never overwrites — or a
    folder on the way, or .gitignore, leads out of the repository."""
    root = repository_root(cwd, environ={})
    taken = [name for name in (*CONFIG_NAMES, *(target for target, _ in FILES[1:]))
             if os.path.lexists(root / name)]
    if taken:
        raise UsageError(f"init: {', '.join(taken)} already exist{'s' if len(taken) == 1 else ''} in {root}; "
                         "nothing was written (init never overwrites a file)")
    for target in (*(target for target, _ in FILES), GITIGNORE):   # `tests/` a symlink out of the repository
        why = write_refusal(root / target, root)
        if why:
            raise UsageError(f"init: {target}: {why}; nothing was written")
    if os.path.lexists(root / GITIGNORE) and not (root / GITIGNORE).is_file():
        raise UsageError(f"init: {GITIGNORE} in {root} is not a file; nothing was written")
    templates = resources.files(__package__).joinpath("templates")
    written = []
    for target, template in FILES:
        path = root / target
        path.parent.mkdir(parents=True, exist_ok=True)
        text = templates.joinpath(template).read_text(encoding="utf-8")
        with path.open("x", encoding="utf-8") as handle:    # "x": a file that appeared meanwhile is not replaced
            handle.write(text.replace("{action}", ACTION))
        written.append(path)
    return Scaffolded(written, _ignore_results(root / GITIGNORE))


def _ignore_results(path: Path) -> str:
    """`agenttest-results/` ignored by the .gitignore at `path`: "wrote" a new one, "updated" one without the entry
    (appended: nothing of it is changed), "" for one that has it already."""
    if not path.exists():
        with path.open("x", encoding="utf-8") as handle:
            handle.write(_IGNORE_LINES)
        return "wrote"
    data = path.read_bytes()
    lines = {line.strip() for line in data.decode("utf-8", "replace").splitlines()}
    if lines & _IGNORED_ALREADY:
        return ""
    with path.open("ab") as handle:
        separator = b"" if not data else b"\n" if data.endswith(b"\n") else b"\n\n"    # a blank line before
        handle.write(separator + _IGNORE_LINES.encode())
    return "updated"


def next_steps(done: Scaffolded, cwd: Path) -> list[str]:
    """What `init` prints: the files it wrote (.gitignore too), and the commands to run next (paths relative to
    `cwd`)."""
    shown = [os.path.relpath(path, cwd) for path in done.files]
    config, suite, labels, workflow = shown
    gitignore = os.path.relpath(done.files[0].parent / GITIGNORE, cwd)
    ignored = {"wrote": [f"wrote {gitignore}"], "updated": [f"updated {gitignore} (added {IGNORED})"]}
    return [*(f"wrote {name}" for name in shown), *ignored.get(done.gitignore, []), "",
            f"Next: agenttest validate -i {suite}",
            "Then point AGENT_URL at your agent (default http://localhost:8080/chat) and run the case that needs no "
            f"key: agenttest -i {suite} --run greets",
            f"The judged case and the conversation also need OPENAI_API_KEY, for the judge and the simulated user "
            f"of {config}: export OPENAI_API_KEY=sk-… and run: agenttest -i {suite}",
            f"Before trusting the judge, measure it against replies a person labelled: agenttest calibrate -i "
            f"{labels} (then label replies of your own agent)",
            f"{workflow} runs the action {ACTION}: on a fork or a copy of agenttest, change its `uses:` line."]
