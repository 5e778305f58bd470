"""The replay harness's oracle: is a Codex patch *determined* on the files it edits?

Deliberately independent of patchtx (no import from it) and brute force: exact string matching
only, every placement enumerated. It reads only the subset of the `*** Begin Patch` format that
benchmarks/replay.py writes (one optional `@@ ANCHOR` per section, `*** End of File`, Add, Delete,
Update with an optional `*** Move to:`), so that a test can judge a stored patch text without
trusting anything else stored beside it.

A file's sections are *determined* when they have exactly one placement in file order:
- each section's old lines (context and `-` lines) equal the file's lines at its start, and it
  starts at or after the previous section's end (sections never overlap);
- a section with an anchor starts after an occurrence of the anchor line that lies at or after the
  previous section's end;
- a pure insertion (no old lines) with an anchor goes right after an occurrence of the anchor; one
  without an anchor goes at the end of the file;
- a section marked `*** End of File` ends at the file's end.
Placements are distinct when some section starts elsewhere; counting stops at two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"


@dataclass(frozen=True)
class Section:
    """One `@@` section: its anchor (or None), its body lines as written (each starting with ` `,
    `-` or `+`) and whether it is pinned to the end of the file."""

    anchor: str | None
    body: tuple[str, ...]
    end_of_file: bool = False

    @property
    def old(self) -> tuple[str, ...]:
        return tuple(line[1:] for line in self.body if line[0] in " -")

    @property
    def new(self) -> tuple[str, ...]:
        return tuple(line[1:] for line in self.body if line[0] in " +")


@dataclass
class FileOp:
    kind: str  # "add", "delete" or "update"
    path: str
    move_to: str | None = None
    add_lines: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)


def render_patch(ops: list[FileOp]) -> str:
    """The patch text of ``ops``: the one writer of the format in the harness."""
    out = [BEGIN]
    for op in ops:
        if op.kind == "add":
            out.append(ADD + op.path)
            out.extend("+" + line for line in op.add_lines)
        elif op.kind == "delete":
            out.append(DELETE + op.path)
        else:
            out.append(UPDATE + op.path)
            if op.move_to is not None:
                out.append(MOVE + op.move_to)
            for section in op.sections:
                out.append("@@" if section.anchor is None else "@@ " + section.anchor)
                out.extend(section.body)
                if section.end_of_file:
                    out.append(END_OF_FILE)
    out.append(END)
    return "\n".join(out) + "\n"


def parse_patch(text: str) -> list[FileOp]:
    """Read a patch written by ``render_patch`` (raises ValueError on anything else)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != BEGIN or lines[-1] != END:
        raise ValueError("not a patch written by the replay harness")
    ops: list[FileOp] = []
    i = 1
    while i < len(lines) - 1:
        line = lines[i]
        i += 1
        if line.startswith(ADD):
            ops.append(FileOp("add", line[len(ADD):]))
            while i < len(lines) - 1 and lines[i].startswith("+"):
                ops[-1].add_lines.append(lines[i][1:])
                i += 1
        elif line.startswith(DELETE):
            ops.append(FileOp("delete", line[len(DELETE):]))
        elif line.startswith(UPDATE):
            ops.append(FileOp("update", line[len(UPDATE):]))
            if lines[i].startswith(MOVE):
                ops[-1].move_to = lines[i][len(MOVE):]
                i += 1
            while i < len(lines) - 1 and (lines[i] == "@@" or lines[i].startswith("@@ ")):
                anchor = None if lines[i] == "@@" else lines[i][3:]
                i += 1
                body: list[str] = []
                while i < len(lines) - 1 and lines[i][:1] in (" ", "-", "+"):
                    body.append(lines[i])
                    i += 1
                end_of_file = lines[i] == END_OF_FILE
                if end_of_file:
                    i += 1
                ops[-1].sections.append(Section(anchor, tuple(body), end_of_file))
        else:
            raise ValueError(f"unexpected line {i} in a replay patch: {line!r}")
    return ops


def count_placements(lines: list[str], sections: list[Section], limit: int = 2) -> int:
    """How many placements ``sections`` have in ``lines`` (see the module doc), at most ``limit``."""
    n = len(lines)
    by_text: dict[str, list[int]] = {}
    for index, line in enumerate(lines):
        by_text.setdefault(line, []).append(index)

    def starts(section: Section) -> list[int]:
        """Every start where the section's old lines match, ignoring order and anchors."""
        if not section.old:
            return [n]  # a pure insertion without anchor: at the end of the file
        k = len(section.old)
        found = [s for s in by_text.get(section.old[0], []) if lines[s:s + k] == list(section.old)]
        return [s for s in found if s + k == n] if section.end_of_file else found

    candidates = []
    for section in sections:
        if not section.old and section.anchor is not None:
            after_anchor = [a + 1 for a in by_text.get(section.anchor, [])]
            candidates.append([s for s in after_anchor if not section.end_of_file or s == n])
        else:
            candidates.append(starts(section))

    @cache
    def count(i: int, lowest: int) -> int:
        if i == len(sections):
            return 1
        section = sections[i]
        if section.anchor is not None:
            anchors = [a for a in by_text.get(section.anchor, []) if a >= lowest]
            if not anchors:
                return 0
            # Pure insertion: right after an anchor occurrence. Otherwise: after the first one.
            floor = lowest if not section.old else anchors[0] + 1
        else:
            floor = lowest
        total = 0
        for start in candidates[i]:
            if start < floor:
                continue
            if section.anchor is not None and not section.old and start - 1 < lowest:
                continue
            total += count(i + 1, start + len(section.old))
            if total >= limit:
                return limit
        return total

    return count(0, 0)


def split_lines(text: str) -> list[str]:
    """A file's lines as git and the patch format see them: split on LF, final LF not a line."""
    if text == "":
        return []
    body = text[:-1] if text.endswith("\n") else text
    return body.split("\n")


def is_determined(patch_text: str, before: dict[str, str]) -> bool:
    """Every Update of the patch has exactly one placement in its file's text in ``before``."""
    for op in parse_patch(patch_text):
        if op.kind == "update":
            text = before.get(op.path)
            if text is None or count_placements(split_lines(text), op.sections) != 1:
                return False
    return True
