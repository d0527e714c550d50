"""Where agenttest is published is named in one place, `agenttest.hosting`: the README's workflows, pip lines and
pre-commit example, and the workflow `agenttest init` writes, all name those coordinates — and the README says,
at the top of its GitHub section, what they are and how to change them."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from agenttest.hosting import ACTION, PIP_REQUIREMENT, REPOSITORY, VERSION
from docs_pages import PAGES, blocks, text
from e2e.conftest import run_cli

README = text("README.md")
DOCS = {name: text(name) for name in PAGES}


def test_every_action_the_docs_use_is_agenttests_at_its_coordinates_or_githubs_own() -> None:
    ours = {ACTION, f"{REPOSITORY}/composite@{VERSION}"}
    used = {(name, found) for name, text in DOCS.items()
            for found in re.findall(r"^\s*(?:-\s+)?uses:\s*(\S+)", text, re.M)}
    assert {found for _, found in used} & ours == ours          # both variants are shown
    assert [(name, found) for name, found in sorted(used)
            if found not in ours and not found.startswith("actions/")] == []


def test_every_pip_line_and_pre_commit_repository_names_the_coordinates() -> None:
    requirements = {found for text in DOCS.values() for found in re.findall(r'"(agenttest-ci @ [^"]+)"', text)}
    assert requirements == {PIP_REQUIREMENT}
    hooks = next(yaml.safe_load(block) for block in blocks("docs/command-line.md", "yaml")
                 if block.startswith("repos:"))
    assert [(repo["repo"], repo["rev"]) for repo in hooks["repos"]] == [(f"https://github.com/{REPOSITORY}",
                                                                         VERSION)]
    assert [line for text in DOCS.values() for line in text.splitlines()
                  if "agenttest-action" in line and REPOSITORY not in line] == []


def test_the_github_section_opens_with_the_coordinates_and_how_to_change_them() -> None:
    section = README[README.index("## In GitHub Actions"):]
    opening = section.split("\n\n")[1]
    assert opening.startswith("**Where agenttest is published.**")
    for needed in (f"`uses: {ACTION}`", f"`{REPOSITORY}` is the GitHub repository where this repository is hosted",
                   "runner/agenttest/hosting.py", "`uses:` line", "tests/test_hosting.py"):
        assert needed in " ".join(opening.split()), needed


def test_the_workflow_init_writes_names_the_action_and_the_one_line_to_change(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    done = run_cli("init", cwd=tmp_path)
    assert done.code == 0, done.stderr
    lines = (tmp_path / ".github" / "workflows" / "agenttest.yml").read_text().splitlines()
    [uses] = [index for index, line in enumerate(lines) if line.strip().startswith("uses: ") and "agenttest" in line]
    assert lines[uses].strip() == f"uses: {ACTION}"
    comment = " ".join(line.strip().lstrip("# ") for line in lines[uses - 2:uses])
    assert "this `uses:` is the one line to change" in comment, comment
    assert done.stdout.splitlines()[-1].endswith(f"runs the action {ACTION}: on a fork or a copy of agenttest, "
                                                 "change its `uses:` line.")
