"""No import cycle between the modules of runner/agenttest: data flows one way through the house (STYLE.md).

Every import counts, those inside functions too (they are still a dependency, only a later one), except those under
`if TYPE_CHECKING:`, which never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "runner" / "agenttest"


def modules(package: Path) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name, for its __init__.py)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under `if TYPE_CHECKING:`."""
    return {id(node) for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for statement in block.body for node in ast.walk(statement)}


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that module `name` imports: `from .x import y` is x.y when y is a module, else x."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.update(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target
                         for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {module for module in found if module in known and module != name}


def import_cycles(package: Path) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others (Tarjan's strongly connected
    components of more than one module), each sorted."""
    known = modules(package)
    graph = {name: sorted(imports(name, path, known)) for name, path in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for other in graph[name]:
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for name in graph:
        if name not in index:
            visit(name)
    return sorted(cycles)


def test_the_modules_of_agenttest_import_each_other_in_one_direction() -> None:
    assert import_cycles(PACKAGE) == []


def test_a_cycle_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from .sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from ..c import x\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nimport pkg.a\n"
                                  "if TYPE_CHECKING:\n    from . import d\n")
    (package / "d.py").write_text("from .c import y\n")
    assert import_cycles(package) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
