"""docs/architecture.md lists every module of src/patchtx, one line each, and nothing else; and no
module imports itself through others (the layout has no import cycle, lazy imports and imports
for type checkers included)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"


def listed_modules() -> list[str]:
    block = re.search(r"^```modules\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)
    assert block is not None, "docs/architecture.md has no ```modules block"
    lines = block.group(1).splitlines()
    assert lines[0] == "src/patchtx/"
    listed = []
    for line in lines[1:]:
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        name, _, description = entry.partition(" ")
        assert description.strip(), f"{name} has no description in docs/architecture.md"
        listed.append(name)
    return listed


def test_the_module_list_is_the_source_tree() -> None:
    package = ROOT / "src" / "patchtx"
    on_disk = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py"))
    listed = listed_modules()
    assert len(listed) == len(set(listed)), "a module is listed twice"
    assert sorted(listed) == on_disk


def test_the_readme_points_to_the_layout() -> None:
    assert "docs/architecture.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def _imports(module: str, path: Path) -> set[str]:
    """The patchtx modules ``module`` imports: at the top, inside a function, or for type checkers
    only (under ``if TYPE_CHECKING:``: a type that two modules need of each other is a cycle in
    the design all the same)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.update([base, *(f"{base}.{alias.name}" for alias in node.names)])
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_no_module_imports_itself_through_others() -> None:
    package = ROOT / "src" / "patchtx"
    modules = {}
    for path in package.rglob("*.py"):
        name = ".".join(("patchtx", *path.relative_to(package).with_suffix("").parts))
        modules[name.removesuffix(".__init__")] = path
    graph = {name: {m for m in _imports(name, path) if m in modules and m != name}
             for name, path in modules.items()}
    # A package's __init__ exposing its submodules is not a cycle of theirs.
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def walk(name: str, trail: list[str]) -> None:
        state[name] = 1
        trail.append(name)
        for target in sorted(graph[name] - packages):
            if state.get(target) == 1:
                cycles.append(trail[trail.index(target):] + [target])
            elif target not in state:
                walk(target, trail)
        trail.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [])
    assert cycles == []


LATE_IMPORT_REASONS = (
    "(optional extra)",  # mcp, anyio, tree_sitter, the OpenAI agents SDK: may not be installed
    "(off a one-line edit's path",  # the guard: tests/cli/test_cli.py::_NOT_ON_THE_TINY_PATH
    "(a circle:",  # the module named imports this one
    "(not on every platform",  # fcntl: _fd.require_posix reports its absence instead
    "(the lazy loader",  # patchtx/__init__.py's __getattr__
)


def test_every_import_inside_a_function_says_why() -> None:
    """docs/architecture.md, "Imports": imports stand at the top of the module; one inside a
    function says on its line which of the few reasons keeps it there."""
    package = ROOT / "src" / "patchtx"
    untold = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()

        def visit(node: ast.AST, in_function: bool, path: Path = path, lines: list[str] = lines) -> None:
            for child in ast.iter_child_nodes(node):
                if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                    line = lines[child.lineno - 1]
                    if not any(reason in line for reason in LATE_IMPORT_REASONS):
                        untold.append(f"{path.relative_to(package)}:{child.lineno}: {line.strip()}")
                visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

        visit(ast.parse(text), False)
    assert untold == []
