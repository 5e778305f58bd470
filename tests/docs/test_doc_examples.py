"""Run the examples in docs/*.md so the documentation cannot drift from the code.

Convention: a fenced block whose info string is ``before PATH`` is a file of the example tree
(``no-eol`` drops the block's final newline); ``patch`` is applied to a fresh copy of that tree;
``after PATH`` is the expected file afterwards; ``error KIND`` expects a refusal of that kind whose
message starts with the block's text (workspace paths shown relative). ``/WORKSPACE`` in a patch
stands for the example tree's absolute path. ``python`` blocks in
api.md-style pages are executed in order in a temporary directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


@dataclass
class Example:
    tree: dict[str, str]
    patch: str
    line: int
    checks: list[tuple[str, str, str]] = field(default_factory=list)


def _examples(page: Path) -> list[Example]:
    text = page.read_text(encoding="utf-8")
    examples: list[Example] = []
    tree: dict[str, str] = {}
    fresh = True
    for match in FENCE.finditer(text):
        words = match.group(1).split()
        body = match.group(2)
        if not words:
            continue
        if "no-eol" in words:
            body = body[:-1]
        kind = words[0]
        if kind == "before":
            if fresh:
                tree = {}
                fresh = False
            tree[words[1]] = body
        elif kind == "patch":
            examples.append(Example(dict(tree), body, text.count("\n", 0, match.start()) + 1))
        elif kind in ("after", "error") and examples:
            examples[-1].checks.append((kind, words[1], body))
            fresh = True
    return examples


PAGES = sorted(DOCS.glob("*.md"))
CASES = [(page.name, ex) for page in PAGES for ex in _examples(page)]


def test_docs_have_examples() -> None:
    assert len([c for c in CASES if c[0] == "format.md"]) >= 5


@pytest.mark.parametrize(("page", "example"), CASES, ids=[f"{p}:{e.line}" for p, e in CASES])
def test_doc_example(page: str, example: Example, tmp_path: Path) -> None:
    for name, content in example.tree.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(content.encode())
    assert example.checks, f"{page}:{example.line}: a patch example needs an after or error block"
    expects_error = [c for c in example.checks if c[0] == "error"]
    patch = example.patch.replace("/WORKSPACE", str(tmp_path.resolve()))
    if expects_error:
        _, kind, text = expects_error[0]
        with pytest.raises(PatchtxError) as caught:
            patchtx.apply_patch(patch, tmp_path)
        assert caught.value.kind == kind
        shown = caught.value.message.replace(str(tmp_path.resolve()) + "/", "")
        assert shown.startswith(text.strip()), shown
        for name, content in example.tree.items():
            assert (tmp_path / name).read_bytes() == content.encode()
        return
    patchtx.apply_patch(patch, tmp_path)
    for _, name, content in example.checks:
        assert (tmp_path / name).read_bytes() == content.encode(), name


def _python_blocks(page: Path) -> list[str]:
    return [m.group(2) for m in FENCE.finditer(page.read_text(encoding="utf-8"))
            if m.group(1).strip() == "python"]


@pytest.mark.parametrize("page", [p for p in PAGES if _python_blocks(p)], ids=lambda p: p.name)
def test_doc_python_blocks_run_in_order(page: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for number, block in enumerate(_python_blocks(page), 1):
        try:
            exec(compile(block, f"{page.name}[python block {number}]", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the failure message is the point
            raise AssertionError(f"{page.name}: python block {number} failed: {exc!r}") from exc
