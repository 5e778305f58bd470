"""docs/architecture.md lists every module of src/patchtx, one line each, and nothing else."""

from __future__ import annotations

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
