"""Issue 42 item 1: the README's top is what a newcomer reads in a minute; the details live in docs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _top() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8").split("\n---\n", 1)[0]


def test_readme_top_is_short_names_python_and_both_commands() -> None:
    top = _top()
    assert "Python >= 3.11" in top
    blocks = re.findall(r"```bash\n(.*?)```", top, re.S)
    assert len(blocks) == 2 and "patchtx apply --root /tmp/patchtx-demo" in blocks[0]
    assert blocks[1].strip() == "bash scripts/test.sh"
    after_tests = top.split(blocks[1], 1)[1].split("For everyday use", 1)[0]
    # One sentence on the test time, no timing tables at several commits.
    assert after_tests.count(". ") + after_tests.count(".\n") <= 1, after_tests
    assert len(top.split()) <= 250


def test_test_command_details_moved_to_docs() -> None:
    dev = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    assert "docs/development.md" in _top()
    for detail in ("--full-examples", "PATCHTX_NO_CODEX", "--fresh-servers", "CI=true"):
        assert detail in dev and detail not in _top()
    requires = re.search(r'requires-python = "([^"]+)"', (ROOT / "pyproject.toml").read_text())
    assert requires and requires.group(1) == ">=3.11"
