"""What the edit-protocol conformance suites share: the register of cases, and small helpers.

Each suite covers the tests of one reference implementation's own test suite, one case (at least)
per reference test, with files and texts of our own; a case names the test it follows with
``@follows(...)``. A case that shows a deliberate difference says which with
``@differs(..., key)``: ``key`` is the difference's label in the docs (``[key]`` in docs/format.md
or docs/integrations.md, where the reason is written), and the case asserts patchtx's documented
behaviour. ``tests/conformance/edit_protocols/test_suites.py`` checks that every reference test is
followed and every label documented; ``python -m tests.conformance.edit_protocols.cases`` prints
the counts.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

SUITES = {
    "anthropic": "tests.conformance.edit_protocols.test_anthropic_edit_tool",
    "openhands": "tests.conformance.edit_protocols.test_openhands_editor",
    "aider": "tests.conformance.edit_protocols.test_aider_editblock",
    "cline": "tests.conformance.edit_protocols.test_cline_diff",
}

REGISTER: dict[str, dict[str, str | None]] = {}
"""suite -> reference test -> None (the same behaviour) or the difference's label."""


def follows(suite: str, *tests: str) -> Callable[[F], F]:
    """Mark a case as doing what the reference ``tests`` (names in its suite) check."""
    return _mark(suite, tests, None)


def differs(suite: str, test: str, key: str) -> Callable[[F], F]:
    """Mark a case as showing the documented difference ``key`` from the reference ``test``."""
    return _mark(suite, (test,), key)


def _mark(suite: str, tests: tuple[str, ...], key: str | None) -> Callable[[F], F]:
    def mark(function: F) -> F:
        for test in tests:
            REGISTER.setdefault(suite, {})[test] = key
        return function

    return mark


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but patchtx's state folder, by relative path."""
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and ".patchtx" not in path.relative_to(root).parts}


def counts() -> dict[str, tuple[int, int, int]]:
    """suite -> (reference tests followed, the same behaviour, documented differences)."""
    out = {}
    for suite, module in SUITES.items():
        importlib.import_module(module)
        cases = REGISTER.get(suite, {})
        same = sum(key is None for key in cases.values())
        out[suite] = (len(cases), same, len(cases) - same)
    return out


if __name__ == "__main__":
    # (The suites register into the module under its package name, not into __main__.)
    from tests.conformance.edit_protocols.cases import counts as package_counts

    for suite, (total, same, different) in package_counts().items():
        print(f"{suite}: {total} reference tests followed, {same} the same, {different} documented differences")
