"""The syntax guard: does the patch leave each file it writes parseable in its language?

Every file a plan writes is parsed as the patch would leave it; when that shows errors, the file as
it was is parsed too, and only errors the patch introduces count (a file that was already broken is
refused only for new errors). Python goes through the standard library's compiler, JSON and TOML
through ``json`` and ``tomllib``; the other languages through tree-sitter grammars from
``tree-sitter-language-pack`` (the ``syntax`` extra), loaded on first use. A file in a language with
no parser here, a file larger than ``MAX_BYTES`` and, without the extra, a tree-sitter language are
written and reported as not checked.

Modes (``PlanOptions.syntax``): ``off`` (no parsing at all), ``warn`` (apply, and report the errors
in the result), ``refuse`` (a patch that introduces an error is refused, ``syntax_error``, nothing
written). Planning calls ``check_plan`` on the Plan's per-file before and after bytes.

How errors compare. A tree-sitter parse lists every error (ERROR and MISSING nodes): an error of the
new file is new unless the old file has the same kind of error starting with the same text (as a
multiset; see ``_tree_sitter_errors``). The standard library's parsers stop at the first error:
when both versions fail, the new
file's error counts as the patch's only if it is on a line the patch wrote and is not the old file's
first error (same message, same line text); anything past a pre-existing error is unseen, and the
file is reported as having its old errors.
"""

from __future__ import annotations

import json
import re
import tomllib
import warnings
from difflib import SequenceMatcher

from .errors import SyntaxGuardError
from .model import FileSyntax, SyntaxIssue, SyntaxReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .model import Plan

MAX_BYTES = 1 << 20
"""Files larger than this are not parsed (reported as not checked): a parse of a 10 MB file costs
more than the whole apply of a patch to it."""
_CONTEXT = 2
"""Lines shown before and after an error's line in a refusal."""
_HEADER_LINE = re.compile(r" after .* on line (\d+)$")
"""CPython's "expected an indented block after 'if' statement on line 48": the header's line."""

# File name endings -> language. Only languages whose history replay through the guard showed no
# false refusal are listed (benchmarks/README.md, "The syntax guard"); the language pack has many
# more grammars, each to be replayed before it is added (CSS was, and refused Sass named .css).
_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".json": "json", ".jsonc": "json", ".toml": "toml",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".yaml": "yaml", ".yml": "yaml",
}
_STDLIB = frozenset({"python", "json", "toml"})
_NAMES = {"python": "Python", "json": "JSON", "toml": "TOML", "javascript": "JavaScript",
          "typescript": "TypeScript", "tsx": "TSX", "go": "Go", "rust": "Rust", "yaml": "YAML"}
# JSON files that tools read as JSON with comments and trailing commas (JSONC).
_JSONC_NAMES = ("tsconfig", "jsconfig", "devcontainer", ".eslintrc", "settings", "launch", "tasks",
                "extensions", "keybindings")


def language_of(path: str) -> str | None:
    """The language the guard parses ``path`` as, from its name (None: not checked)."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return None if dot <= 0 else _LANGUAGES.get(name[dot:].lower())


def check_plan(plan: Plan, mode: str) -> SyntaxReport | None:
    """The guard on every file ``plan`` writes (None when ``mode`` is off). Under ``refuse``, a
    file the patch leaves with new errors raises SyntaxGuardError."""
    if mode == "off":
        return None
    baselines = {c.path: c.before for c in plan.changes if c.source is not None or c.copied_from is not None}
    files = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # compile's SyntaxWarnings are not errors, nor output
        for target in plan.targets:
            if target.after is None:
                continue
            before = target.before if target.before is not None else baselines.get(target.path)
            files.append(check_file(target.path, before, target.after))
    report = SyntaxReport(mode, tuple(files))
    if mode == "refuse" and report.introduced:
        raise refusal(report.introduced[0], {t.path: t.after for t in plan.targets}, report)
    return report


def check_file(path: str, before: bytes | None, after: bytes) -> FileSyntax:
    """What the guard says of ``path`` going from ``before`` (None: a new file) to ``after``."""
    language = language_of(path)
    if language is None:
        return FileSyntax(path, "not_checked", reason="no parser for this kind of file")
    if len(after) > MAX_BYTES:
        return FileSyntax(path, "not_checked", language, reason=f"too large to check ({len(after):,} bytes;"
                          f" the guard parses files up to {MAX_BYTES // 1024:,} KiB)")
    try:
        if language in _STDLIB:
            return _check_stdlib(path, language, before, after)
        parser = _tree_sitter_parser(language)
        if parser is None:
            return FileSyntax(path, "not_checked", language,
                              reason=f"no {_NAMES[language]} grammar installed (pip install 'patchtx[syntax]')")
        return _compare_tree_sitter(path, language, parser, before, after)
    except (RecursionError, MemoryError, ValueError) as exc:
        # Valid text past a parser's own limits (nesting deeper than its stack, a number of more
        # than 4,300 digits, an expression too large to hold): not an error of the text.
        return FileSyntax(path, "not_checked", language,
                          reason=f"beyond the parser's limits ({type(exc).__name__}: {str(exc)[:120]})")


def _compare_tree_sitter(path: str, language: str, parser: Any, before: bytes | None, after: bytes) -> FileSyntax:
    new = _tree_sitter_errors(parser, after)
    if not new:
        return FileSyntax(path, "ok", language)
    old = _tree_sitter_errors(parser, before) if before else []
    remaining: dict[tuple[str, bytes], int] = {}
    for _, key, _ in old:
        remaining[key] = remaining.get(key, 0) + 1
    introduced = []
    for issue, key, last_line in new:
        if remaining.get(key):
            remaining[key] -= 1
        else:
            introduced.append((issue, last_line))
    if not introduced:
        return FileSyntax(path, "unchanged_errors", language)
    written = sorted(_written_lines(before or b"", after))
    placed: dict[tuple[int, int], SyntaxIssue] = {}
    for issue, last_line in introduced:
        issue = _at_written_line(issue, last_line, written, after)
        placed.setdefault((issue.line, issue.column), issue)  # one error per place
    return FileSyntax(path, "errors", language, tuple(placed[key] for key in sorted(placed)[:5]))


def _at_written_line(issue: SyntaxIssue, last_line: int, written: list[int], data: bytes) -> SyntaxIssue:
    """Where to show an error the patch introduced. A parser names where it gave up, which is often
    not where the patch broke the file: an ERROR region starts where the construct it could not
    finish starts (a whole YAML mapping, the file's first line), a missing closing bracket is
    noticed at the end of the file. The file parsed before the patch, so the break is where the
    patch wrote: the first line it wrote inside the error's region, else the last line it wrote
    before the error (the parser's own place is kept in the message)."""
    if not written or any(abs(issue.line - n) <= 1 for n in written):
        return issue
    inside = [n for n in written if issue.line <= n <= last_line]
    before = [n for n in written if n < issue.line]
    if inside:
        line = inside[0]
    elif before:
        line = before[-1]
    else:
        return issue
    text = _line(data, line).decode("utf-8", "replace")
    return SyntaxIssue(line, len(text) - len(text.lstrip()) + 1,
                       f"{issue.message} (the parser stops at line {issue.line})")


# -- the standard library's parsers ----------------------------------------------------------------

def _first_error(language: str, path: str, data: bytes) -> SyntaxIssue | None:
    """The first error the standard library's parser finds in ``data`` (None: it parses)."""
    if language == "python":
        try:
            compile(data, path, "exec", dont_inherit=True)  # (check_plan silences its warnings)
        except SyntaxError as exc:
            # "expected an indented block after 'if' statement on line 48" is noticed on the
            # next statement; the block that lost its body is the header's.
            header = _HEADER_LINE.search(exc.msg) if "on line" in exc.msg else None
            if header is not None:
                line = _line(data, int(header[1])).decode("utf-8", "replace")
                return SyntaxIssue(int(header[1]), len(line) - len(line.lstrip()) + 1, exc.msg)
            return SyntaxIssue(exc.lineno or 1, exc.offset or 1, exc.msg)
        except ValueError as exc:  # a NUL byte in the source
            return SyntaxIssue(1, 1, str(exc))
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return SyntaxIssue(data.count(b"\n", 0, exc.start) + 1, 1, "not UTF-8")
    if language == "json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return SyntaxIssue(exc.lineno, exc.colno, exc.msg)
        return None
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = re.search(r"\(at line (\d+), column (\d+)\)$", message)
        if where is None:  # "(at end of document)"
            return SyntaxIssue(text.count("\n") + 1, 1, message)
        return SyntaxIssue(int(where[1]), int(where[2]), message[:where.start()].strip())
    return None


def _check_stdlib(path: str, language: str, before: bytes | None, after: bytes) -> FileSyntax:
    new = _first_error(language, path, after)
    if new is None:
        return FileSyntax(path, "ok", language)
    if language == "json" and _is_jsonc(path, before):
        # JSON with comments and trailing commas (tsconfig.json, .vscode/settings.json...), which
        # the json module refuses: read with those blanked out, every other byte in its place.
        after, before = _blank_jsonc(after), None if before is None else _blank_jsonc(before)
        new = _first_error(language, path, after)
        if new is None:
            return FileSyntax(path, "ok", language)
    old = None if before is None else _first_error(language, path, before)
    if old is None:
        if before is not None:
            new = _at_written_line(new, new.line, sorted(_written_lines(before, after)), after)
        return FileSyntax(path, "errors", language, (new,))
    # Both fail, and each parser stops at its first error: the new one is the patch's if it sits
    # on a line the patch wrote and is not the old first error moved along.
    new_line = _line(after, new.line)
    same = new.message == old.message and new_line.strip() == _line(before, old.line).strip()  # type: ignore[arg-type]
    if not same and new.line in _written_lines(before, after):  # type: ignore[arg-type]
        return FileSyntax(path, "errors", language, (new,))
    return FileSyntax(path, "unchanged_errors", language)


def _is_jsonc(path: str, before: bytes | None) -> bool:
    """A JSON file read as JSON with comments: a name tools read so (tsconfig.json, .jsonc, ...),
    or one that held comments or trailing commas before the patch."""
    name = path.rpartition("/")[2].lower()
    if name.endswith(".jsonc") or name.startswith(_JSONC_NAMES):
        return True
    if before is None or _first_error("json", path, before) is None:
        return False
    return _first_error("json", path, _blank_jsonc(before)) is None


def _blank_jsonc(data: bytes) -> bytes:
    """``data`` with its comments and trailing commas turned into spaces (line breaks kept), so
    that the json module reads it and names the same lines and columns."""
    out = bytearray(data)
    at, size = 0, len(data)
    last_comma = -1
    while at < size:
        byte = data[at]
        if byte == 0x22:  # a string: skip it whole
            at += 1
            while at < size and data[at] != 0x22:
                at += 2 if data[at] == 0x5C else 1
            at += 1
            last_comma = -1
            continue
        if data.startswith(b"//", at) or data.startswith(b"/*", at):
            end = data.find(b"\n", at) if data[at + 1] == 0x2F else data.find(b"*/", at + 2) + 2
            end = size if end < 0 or end == 1 else end
            for i in range(at, end):
                if out[i] != 0x0A:
                    out[i] = 0x20
            at = end
            continue
        if byte == 0x2C:
            last_comma = at
        elif byte in (0x5D, 0x7D) and last_comma >= 0:  # ] or } right after a comma
            out[last_comma] = 0x20
            last_comma = -1
        elif byte not in b" \t\r\n":
            last_comma = -1
        at += 1
    return bytes(out)


def _line(data: bytes, number: int) -> bytes:
    """Line ``number`` (1-based) of ``data``, found without splitting the whole file."""
    start = 0
    for _ in range(number - 1):
        start = data.find(b"\n", start) + 1
        if start == 0:
            return b""
    end = data.find(b"\n", start)
    return data[start:] if end < 0 else data[start:end]


def _written_lines(before: bytes, after: bytes) -> set[int]:
    """1-based numbers of the lines of ``after`` the patch wrote: lines that are not lines of
    ``before`` kept in place, and where it only deleted, the lines on either side of the cut."""
    old, new = before.split(b"\n"), after.split(b"\n")
    written: set[int] = set()
    for tag, _, _, low, high in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            written.update(range(low + 1, high + 1))
        elif tag == "delete":
            written.update(n for n in (low, low + 1) if 1 <= n <= len(new))
    return written


# -- tree-sitter -----------------------------------------------------------------------------------

_PARSERS: dict[str, Any] = {}


def _tree_sitter_parser(language: str) -> Any:
    """A tree-sitter parser for ``language``, loaded once per process (None without the extra)."""
    if language in _PARSERS:
        return _PARSERS[language]
    try:
        from tree_sitter_language_pack import get_parser  # (optional extra)
    except ImportError:
        parser = None
    else:
        try:
            parser = get_parser(language)  # type: ignore[arg-type]
        except LookupError:
            parser = None
    _PARSERS[language] = parser
    return parser


def _tree_sitter_errors(parser: Any, data: bytes) -> list[tuple[SyntaxIssue, tuple[str, bytes], int]]:
    """Every ERROR and MISSING node of ``data``'s tree, each with a key that says what it is and
    the text of its line (how an error is recognised in the other version of the file), and the
    last line it spans."""
    tree = parser.parse(data)
    root = tree.root_node
    stopped = _next_token(data, root.end_byte)  # the parse may give up before the end (YAML)
    if not root.has_error and stopped is None:
        return []
    found = []
    if stopped is not None:
        line = data.count(b"\n", 0, stopped) + 1
        start = data.rfind(b"\n", 0, stopped) + 1
        end = data.find(b"\n", stopped)
        text = data[start:] if end < 0 else data[start:end]
        issue = SyntaxIssue(line, len(data[start:stopped].decode("utf-8", "replace")) + 1,
                            f"unexpected {text[stopped - start:stopped - start + 40].decode('utf-8', 'replace')!r}")
        found.append((issue, ("stopped", text.strip()), line))
    if not root.has_error:
        return found
    cursor = root.walk()
    while True:
        node = cursor.node
        descend = False
        if node.is_missing:
            kind = f"missing {node.type}"
        elif node.is_error:
            kind = "error"
        else:
            kind = ""
            descend = node.has_error
        if kind:
            row, column = node.start_point
            start = data.rfind(b"\n", 0, node.start_byte) + 1
            end = data.find(b"\n", node.start_byte)
            line_text = data[start:] if end < 0 else data[start:end]
            character = len(data[start:node.start_byte].decode("utf-8", "replace")) + 1
            message = f"expected {node.type}" if node.is_missing else _unexpected(data, node)
            # An ERROR node ends where the parser gave up: the token after it is where it could
            # not go on (the last line the error concerns).
            gave_up = _next_token(data, node.end_byte) if node.is_error else None
            last = node.end_point[0] + 1 if gave_up is None else data.count(b"\n", 0, gave_up) + 1
            # Recognised in the other version by what it is and the text it starts with (the
            # line of a zero-width MISSING node): not by its line number, which the patch shifts.
            own = data[node.start_byte:node.end_byte].split(b"\n", 1)[0].strip()[:40]
            found.append((SyntaxIssue(row + 1, character, message), (kind, own or line_text.strip()), last))
            descend = not node.is_missing and any(child.has_error for child in node.children)
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


def _next_token(data: bytes, at: int) -> int | None:
    """The offset of the first byte after ``at`` that is not white space (None: only white space)."""
    rest = data[at:].lstrip()
    return len(data) - len(rest) if rest else None


def _unexpected(data: bytes, node: Any) -> str:
    text = data[node.start_byte:min(node.end_byte, node.start_byte + 40)].decode("utf-8", "replace")
    first = text.split("\n", 1)[0].strip()
    return f"unexpected {first!r}" if first else "syntax error"


# -- the refusal -----------------------------------------------------------------------------------

def refusal(file: FileSyntax, contents: dict[str, bytes | None], report: SyntaxReport) -> SyntaxGuardError:
    """One paragraph, as a miss is: where, the lines as the patch would leave them with the error
    marked, that nothing was written, and what to do."""
    first = file.errors[0]
    language = _NAMES.get(file.language or "", file.language or "")
    more = f" ({len(file.errors)} errors in all)" if len(file.errors) > 1 else ""
    headline = (f"Refusing the patch: it would leave {file.path} with a {language} syntax error at line"
                f" {first.line}, column {first.column}: {first.message}{more}.")
    after = contents.get(file.path) or b""
    shown = _excerpt(after, first.line, first.column)
    hint = ("The file as the patch would leave it:\n" + shown +
            "\nFix the patch so that the file still parses, and send it again.")
    return SyntaxGuardError(headline, hint=hint, path=file.path,
                            details={"syntax": report.to_json(), "syntax_line": first.line,
                                     "syntax_column": first.column})


def _excerpt(data: bytes, line: int, column: int) -> str:
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    low, high = max(1, line - _CONTEXT), max(line, min(len(lines), line + _CONTEXT))
    width = len(str(high))
    out = []
    for number in range(low, high + 1):
        text = lines[number - 1].rstrip("\r") if number <= len(lines) else ""
        if len(text) > 200:
            text = text[:200] + " ..."
        out.append(f"{'>' if number == line else ' '} {number:>{width}} | {text}")
        if number == line:
            out.append(f"  {' ' * width} | {' ' * (column - 1)}^")
    return "\n".join(out)
