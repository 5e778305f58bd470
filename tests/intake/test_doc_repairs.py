"""docs/format.md, "Repairs": every repair kind has an example there, and each example's patch
block (``patch repairs=KIND,...``) reports exactly those repairs (tests/docs runs the blocks for
their result)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import patchtx
import patchtx.intake.repair

FORMAT = Path(__file__).resolve().parents[2] / "docs" / "format.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


def _examples() -> list[tuple[dict[str, str], str, list[str]]]:
    text = FORMAT.read_text(encoding="utf-8")
    section = text[text.index("## Repairs"):text.index("## Errors")]
    out, tree = [], {}
    for match in FENCE.finditer(section):
        words = match.group(1).split()
        if not words:
            continue
        if words[0] == "before":
            tree = {words[1]: match.group(2)}
        elif words[0] == "patch" and len(words) > 1 and words[1].startswith("repairs="):
            out.append((dict(tree), match.group(2), words[1][len("repairs="):].split(",")))
    return out


EXAMPLES = _examples()
SOURCES = "".join(path.read_text(encoding="utf-8")
                  for path in Path(patchtx.__file__).parent.rglob("*.py"))
KINDS = set(re.findall(r'Repair\(\s*"([a-z_]+)"', SOURCES)
            + re.findall(r'found\.append\(\("([a-z_]+)"', SOURCES))
"""Every repair kind the source makes (a Repair built with a literal kind, or one of
repair_update's adjustments)."""


def test_every_repair_kind_has_an_example() -> None:
    shown = {kind for _, _, kinds in EXAMPLES for kind in kinds}
    assert len(KINDS) >= 16
    assert KINDS <= shown, f"no example in docs/format.md for {sorted(KINDS - shown)}"
    table = FORMAT.read_text(encoding="utf-8")
    for kind in KINDS:
        assert f"| `{kind}` |" in table, kind


@pytest.mark.parametrize(("tree", "patch", "kinds"), EXAMPLES, ids=["+".join(e[2]) for e in EXAMPLES])
def test_example_reports_its_repairs(tree: dict[str, str], patch: str, kinds: list[str],
                                     tmp_path: Path) -> None:
    for name, content in tree.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    patch = patch.replace("/WORKSPACE", str(tmp_path.resolve()))  # (the tree's absolute path)
    result = patchtx.apply_patch(patch, tmp_path, durable=False)
    assert [repair.kind for repair in result.plan.repairs] == kinds
    for name, content in tree.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    (tmp_path / "NOTES.md").unlink(missing_ok=True)
    try:  # strict: refused, or (trailing white space, indentation) applied as Codex applies it
        strict = patchtx.apply_patch(patch, tmp_path, durable=False, strict=True)
    except patchtx.PatchtxError:
        return
    assert strict.plan.repairs == ()
    assert set(kinds) <= {"trailing_whitespace", "indentation"}
