"""Break a real file the way models do, as a patch: the syntax-breaking corpus of issue 27.

Each mutation is made at a place tree-sitter's parse of the intact file shows to be code (a bracket
that closes something, a string's closing quote, a statement of a block), so that the result is
broken by construction; where an independent parser is at hand (the standard library for Python,
JSON and TOML, Node for JavaScript, PyYAML for YAML if installed) the test also asks it. Kinds:

- ``unbalanced``: a closing bracket deleted;
- ``half_block``: a block deleted from its middle line to its end, closing bracket included (for
  Python: a block's whole body, the header left without one);
- ``lost_indent``: a statement (Python) or mapping entry (YAML) between two siblings dedented;
- ``unclosed_string``: a one-line string's closing quote deleted;
- ``dropped_comma``: a comma between two members of a multi-line JSON object deleted.

``line`` is where the break is (1-based, in the broken file), ``also`` other lines a parser may
rightly name (the opening bracket of a deleted closer, the header of a deleted body).
"""

from __future__ import annotations

import difflib
import random
from dataclasses import dataclass, field

from patchtx.plan.syntax import language_of

QUOTES = frozenset({'"', "'"})
STRING_TYPES = frozenset({"string", "string_literal", "interpreted_string_literal", "double_quote_scalar",
                          "single_quote_scalar", "raw_string_literal"})
SIMPLE_PYTHON = frozenset({"expression_statement", "return_statement", "pass_statement", "raise_statement",
                           "assert_statement", "import_statement", "import_from_statement", "assignment",
                           "augmented_assignment", "call", "continue_statement", "break_statement"})


@dataclass
class Mutation:
    kind: str
    after: bytes
    line: int
    also: tuple[int, ...] = field(default=())

    def accepts(self, reported: int) -> bool:
        """Whether an error reported at ``reported`` names the break: within two lines of it, or
        one of ``also``."""
        return abs(reported - self.line) <= 2 or reported in self.also


def _nodes(root: object) -> list[object]:
    out = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))  # type: ignore[attr-defined]
    return out


def _parse(language: str, data: bytes) -> object:
    from tree_sitter_language_pack import get_parser

    return get_parser(language).parse(data).root_node  # type: ignore[arg-type]


def _delete(data: bytes, start: int, end: int) -> bytes:
    return data[:start] + data[end:]


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def mutations(path: str, data: bytes, *, per_kind: int = 2, seed: int = 27) -> list[Mutation]:
    """Up to ``per_kind`` mutations of each kind that applies to ``path``'s language."""
    language = language_of(path)
    assert language is not None, path
    root = _parse(language, data)
    assert not root.has_error, f"{path} does not parse to begin with"  # type: ignore[attr-defined]
    nodes = _nodes(root)
    rng = random.Random(f"{seed}:{path}")
    found: list[Mutation] = []

    def pick(candidates: list[Mutation]) -> None:
        rng.shuffle(candidates)
        found.extend(candidates[:per_kind])

    lines = data.split(b"\n")

    # unbalanced: a closing bracket of code deleted
    closers = []
    for node in nodes:
        if node.type in (")", "]", "}") and node.parent is not None and node.parent.children[-1] == node:
            opener = node.parent.start_point[0] + 1
            after = _delete(data, node.start_byte, node.end_byte)
            found_line = _line_of(after, node.start_byte)
            closers.append(Mutation("unbalanced", after, found_line, (opener,)))
    pick(closers)

    # half_block: a multi-line block deleted from its middle line to its end
    blocks = []
    for node in nodes:
        first, last = node.start_point[0], node.end_point[0]
        if language == "python":
            if node.type != "block" or node.parent is None or last - first < 1:
                continue
            header = node.parent.start_point[0]
            start = data.rfind(b"\n", 0, node.start_byte) + 1
            end = data.find(b"\n", node.end_byte)
            after = data[:start] + data[end + 1:] if end >= 0 else data[:start]
            blocks.append(Mutation("half_block", after, header + 1, (header + 2,)))
            continue
        if last - first < 3 or not node.children or node.children[-1].type not in ("}", "]", ")"):
            continue
        middle = (first + last) // 2 + 1
        start = sum(len(line) + 1 for line in lines[:middle])
        end = sum(len(line) + 1 for line in lines[:last + 1])
        after = data[:start] + data[end:]
        blocks.append(Mutation("half_block", after, middle + 1, (middle, first + 1)))
    if language not in ("yaml",):
        pick(blocks)

    # lost_indent: a statement (Python) or an entry (YAML) between two siblings dedented
    dedents = []
    if language in ("python", "yaml"):
        parent_types = ("block",) if language == "python" else ("block_mapping",)
        for node in nodes:
            if node.type not in parent_types:
                continue
            children = [c for c in node.children if c.type != "comment"]
            for current, following in zip(children, children[1:], strict=False):
                row = current.start_point[0]
                if current.end_point[0] != row or following.start_point[0] != row + 1:
                    continue
                if language == "python" and current.type not in SIMPLE_PYTHON:
                    continue
                text = lines[row]
                indent = len(text) - len(text.lstrip(b" "))
                step = 4 if language == "python" else 1
                if indent < step or current.start_point[1] != indent:
                    continue
                new_lines = list(lines)
                new_lines[row] = text[step:]
                dedents.append(Mutation("lost_indent", b"\n".join(new_lines), row + 1, (row + 2,)))
    pick(dedents)

    # unclosed_string: a one-line string's closing quote deleted
    strings = []
    for node in nodes:
        if node.type not in STRING_TYPES or node.start_point[0] != node.end_point[0]:
            continue
        text = data[node.start_byte:node.end_byte]
        if len(text) < 2 or chr(text[-1]) not in QUOTES or text[-1] != text[0] or text.startswith(b'"""'):
            continue
        after = _delete(data, node.end_byte - 1, node.end_byte)
        strings.append(Mutation("unclosed_string", after, node.start_point[0] + 1))
    pick(strings)

    # dropped_comma: JSON members
    if language == "json":
        commas = [Mutation("dropped_comma", _delete(data, n.start_byte, n.end_byte), n.start_point[0] + 1,
                           (n.start_point[0] + 2,))
                  for n in nodes if n.type == "," and n.parent is not None and n.parent.type == "object"
                  and n.start_point[0] != n.parent.end_point[0]]
        pick(commas)
    return found


def unified_patch(path: str, before: bytes, after: bytes) -> str:
    """The change as a git-style unified diff (3 lines of context)."""
    old = before.decode("utf-8").splitlines(keepends=True)
    new = after.decode("utf-8").splitlines(keepends=True)
    out = [f"diff --git a/{path} b/{path}\n"]
    for line in difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def independently_broken(path: str, data: bytes) -> bool | None:
    """Whether a parser other than the guard's tree-sitter grammar finds ``data`` broken (None: no
    such parser here). For Python, JSON and TOML it is the standard library (the guard's own)."""
    language = language_of(path)
    if language in ("python", "json", "toml"):
        from patchtx.plan.syntax import _first_error

        return _first_error(language, path, data) is not None
    if language == "yaml":
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            return None
        try:
            list(yaml.safe_load_all(data))
        except yaml.YAMLError:
            return True
        return False
    if language == "javascript":
        import shutil
        import subprocess
        import tempfile

        if shutil.which("node") is None:
            return None
        with tempfile.NamedTemporaryFile(suffix=".js") as handle:
            handle.write(data)
            handle.flush()
            return subprocess.run(["node", "--check", handle.name], capture_output=True).returncode != 0
    return None
