"""The syntax guard: does the patch leave each file it writes parseable in its language?

Every file a plan writes is parsed as the patch would leave it; when that shows errors, the file as
it was is parsed too, and only errors the patch introduces count (a file that was already broken is
refused only for new errors). Python goes through the standard library's parser (``ast.parse``, no
bytecode), JSON and TOML through ``json`` and ``tomllib``, in this process; the other languages
through tree-sitter grammars from ``tree-sitter-language-pack`` (the ``syntax`` extra), loaded on
first use in a process of their own (``isolated.py``: a grammar that crashes or hangs costs the
file's check, not the process). A file in a language with no parser here, a file larger than
``MAX_BYTES``, a tree-sitter language without the extra, and a file its grammar crashed on or took
too long over are written and reported as not checked.

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
import warnings
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from ..errors import SyntaxGuardError
from ..model import FileSyntax, SyntaxIssue, SyntaxReport

if TYPE_CHECKING:
    from typing import Any

    from ..model import Plan

MAX_BYTES = 1 << 20
"""Files larger than this are not parsed (reported as not checked): a parse of a 10 MB file costs
more than the whole apply of a patch to it."""
_CONTEXT = 2
"""Lines shown before and after an error's line in a refusal."""
_NEWLINE = re.compile(rb"\n")
_NON_SPACE = re.compile(rb"[^ \t\n\r\x0b\x0c]")
"""What bytes.strip() keeps: the first byte of a token."""
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
        warnings.simplefilter("ignore")  # the parser's SyntaxWarnings are not errors, nor output
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
    if language not in _STDLIB:
        return _check_with_grammar(path, language, before, after)
    try:
        return _check_stdlib(path, language, before, after)
    except (RecursionError, MemoryError, ValueError) as exc:
        return _beyond_limits(path, language, exc)


def _beyond_limits(path: str, language: str, exc: Exception) -> FileSyntax:
    """Valid text past a parser's own limits (nesting deeper than its stack, a number of more than
    4,300 digits, an expression too large to hold): not an error of the text."""
    return FileSyntax(path, "not_checked", language,
                      reason=f"beyond the parser's limits ({type(exc).__name__}: {str(exc)[:120]})")


# -- tree-sitter, in a process of its own ----------------------------------------------------------

GRAMMAR_SECONDS = 10.0
"""How long a grammar may take over one file (both versions, the first call's start of the process
included) before the file is written unchecked. A megabyte parses in well under a second; the Go
grammar's recovery from 20,000 errors takes 6 s."""
GRAMMAR_MEMORY = 1 << 30
"""The address space of the process the grammars run in (a parse of a megabyte takes tens of MB)."""
_GRAMMARS: list[Any] = []  # the one Isolated of this process, made on first use
_INSTALLED: list[bool] = []


def _grammars_installed() -> bool:
    """Whether the ``syntax`` extra is installed (looked for, not imported: the grammars load in
    the child)."""
    if not _INSTALLED:
        import importlib.util  # (off a one-line edit's path: asked once, by a file with a grammar)

        _INSTALLED.append(importlib.util.find_spec("tree_sitter_language_pack") is not None)
    return _INSTALLED[0]


def _check_with_grammar(path: str, language: str, before: bytes | None, after: bytes) -> FileSyntax:
    """The tree-sitter grammars are native code patchtx did not write, and some crash on valid
    files (tree-sitter-yaml 0.7 writes past a buffer on 300 nested mappings and segfaults); one
    file must not end the process (``patchtx check``, a ``patchtx mcp`` server and every later call
    of its agent). They run in a child process (``isolated.py``) with a time and a memory limit: a
    crash, a hang or a runaway there is a file written unchecked, saying so."""
    if not _grammars_installed():
        return FileSyntax(path, "not_checked", language,
                          reason=f"no {_NAMES[language]} grammar installed (pip install 'patchtx[syntax]')")
    from .isolated import Failed, Isolated  # (off a one-line edit's path)

    if not _GRAMMARS:
        _GRAMMARS.append(Isolated("patchtx.plan.syntax:grammar_check", seconds=GRAMMAR_SECONDS, memory=GRAMMAR_MEMORY))
    try:
        answer = _GRAMMARS[0].call({"path": path, "language": language}, before, after)
    except Failed as failed:
        return FileSyntax(path, "not_checked", language,
                          reason=f"the {_NAMES[language]} grammar {failed.reason} on this file")
    return FileSyntax(path, answer["status"], answer["language"],
                      tuple(SyntaxIssue(**error) for error in answer["errors"]), answer["reason"])


def grammar_check(args: dict[str, str], before: bytes | None, after: bytes) -> dict[str, Any]:
    """``_check_with_grammar``'s work, in the child: the file's FileSyntax as JSON."""
    path, language = args["path"], args["language"]
    parser = _tree_sitter_parser(language)
    if parser is None:
        result = FileSyntax(path, "not_checked", language,
                            reason=f"no {_NAMES[language]} grammar installed (pip install 'patchtx[syntax]')")
    else:
        try:
            result = _compare_tree_sitter(path, language, parser, before, after)
        except (RecursionError, MemoryError, ValueError) as exc:
            result = _beyond_limits(path, language, exc)
    answer: dict[str, Any] = result.to_json()
    return answer


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
    lines = _Lines(after)
    placed: dict[tuple[int, int], SyntaxIssue] = {}
    for issue, last_line in introduced:
        issue = _at_written_line(issue, last_line, written, lines)
        placed.setdefault((issue.line, issue.column), issue)  # one error per place
    return FileSyntax(path, "errors", language, tuple(placed[key] for key in sorted(placed)[:5]))


def _at_written_line(issue: SyntaxIssue, last_line: int, written: list[int], lines: _Lines) -> SyntaxIssue:
    """Where to show an error the patch introduced. A parser names where it gave up, which is often
    not where the patch broke the file: an ERROR region starts where the construct it could not
    finish starts (a whole YAML mapping, the file's first line), a missing closing bracket is
    noticed at the end of the file. The file parsed before the patch, so the break is where the
    patch wrote: the first line it wrote inside the error's region, else the last line it wrote
    before the error (the parser's own place is kept in the message). ``written`` is sorted: each
    error is placed by a search, not a walk over every written line."""
    if not written:
        return issue
    near = bisect_left(written, issue.line - 1)
    if near < len(written) and written[near] <= issue.line + 1:
        return issue  # the patch wrote within a line of the parser's place
    first_inside = bisect_left(written, issue.line)
    if first_inside < len(written) and written[first_inside] <= last_line:
        line = written[first_inside]
    elif first_inside > 0:
        line = written[first_inside - 1]
    else:
        return issue
    return SyntaxIssue(line, lines.indent(line) + 1, f"{issue.message} (the parser stops at line {issue.line})")


class _Lines:
    """Where each line of ``data`` starts, found once, so that placing each of many errors is a
    search (tens of thousands of errors on one line were each counted from the file's start)."""

    # (Hand-written, not a record: a cache filled as it is asked, not a value.)
    __slots__ = ("data", "starts", "_indents", "_stripped", "_last_column")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0, *(m.end() for m in _NEWLINE.finditer(data))]
        self._indents: dict[int, int] = {}
        self._stripped: dict[int, bytes] = {}
        self._last_column: tuple[int, int, int] | None = None

    def number(self, offset: int) -> int:
        """The 1-based number of the line holding byte ``offset``."""
        return bisect_right(self.starts, offset)

    def text(self, number: int) -> bytes:
        """Line ``number`` (1-based) without its line break."""
        start = self.starts[number - 1]
        end = self.starts[number] - 1 if number < len(self.starts) else len(self.data)
        return self.data[start:end]

    def stripped(self, number: int) -> bytes:
        if number not in self._stripped:
            self._stripped[number] = self.text(number).strip()
        return self._stripped[number]

    def indent(self, number: int) -> int:
        """How many characters of white space line ``number`` starts with."""
        if number not in self._indents:
            text = self.text(number).decode("utf-8", "replace")
            self._indents[number] = len(text) - len(text.lstrip())
        return self._indents[number]

    def column(self, number: int, offset: int) -> int:
        """The 1-based character column of byte ``offset`` on line ``number``. Errors come in file
        order, so each is counted on from the one before it on the same line."""
        start = self.starts[number - 1]
        last = self._last_column
        if last is not None and last[0] == number and last[1] <= offset:
            start, counted = last[1], last[2]
        else:
            counted = 0
        counted += len(self.data[start:offset].decode("utf-8", "replace"))
        self._last_column = (number, offset, counted)
        return counted + 1


# -- the standard library's parsers ----------------------------------------------------------------

def _first_error(language: str, path: str, data: bytes) -> SyntaxIssue | None:
    """The first error the standard library's parser finds in ``data`` (None: it parses)."""
    # (Each parser's module is imported by the first file of its language: a patch to a text
    # file, with the guard on, as on the command line, loads none of them.)
    if language == "python":
        import ast  # (off a one-line edit's path: the first Python file checked loads it)

        try:
            # The parser alone: compile() would also build bytecode, which costs as much again and
            # grows faster than the file (module-level comprehensions: 4 s for 570 KB, 37 s for
            # 1.1 MB, where ast.parse takes 0.5 and 0.9 s; benchmarks/README.md, "The syntax guard").
            ast.parse(data, path)  # (check_plan silences its warnings)
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
    import tomllib  # (off a one-line edit's path: the first TOML file checked loads it)

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
    """Each version parsed once: the new one, then the old one only when the new one fails (a JSON
    file read as JSON with comments once more, blanked)."""
    new = _first_error(language, path, after)
    if new is None:
        return FileSyntax(path, "ok", language)
    # JSON with comments and trailing commas (tsconfig.json, .vscode/settings.json...), which the
    # json module refuses, is read with those blanked out, every other byte in its place: a file of
    # a name tools read so, or one that held comments or trailing commas before the patch.
    name = path.rpartition("/")[2].lower()
    named_jsonc = language == "json" and (name.endswith(".jsonc") or name.startswith(_JSONC_NAMES))
    if named_jsonc:
        after, before = _blank_jsonc(after), None if before is None else _blank_jsonc(before)
        new = _first_error(language, path, after)
        if new is None:
            return FileSyntax(path, "ok", language)
    old = None if before is None else _first_error(language, path, before)
    if language == "json" and not named_jsonc and old is not None:
        assert before is not None
        blanked = _blank_jsonc(before)
        if _first_error(language, path, blanked) is None:
            after = _blank_jsonc(after)
            new = _first_error(language, path, after)
            if new is None:
                return FileSyntax(path, "ok", language)
            before, old = blanked, None
    if old is None:
        if before is not None:
            new = _at_written_line(new, new.line, sorted(_written_lines(before, after)), _Lines(after))
        return FileSyntax(path, "errors", language, (new,))
    # Both fail, and each parser stops at its first error: the new one is the patch's if it sits
    # on a line the patch wrote and is not the old first error moved along.
    assert before is not None
    new_line = _line(after, new.line)
    same = new.message == old.message and new_line.strip() == _line(before, old.line).strip()
    if not same and new.line in _written_lines(before, after):
        return FileSyntax(path, "errors", language, (new,))
    return FileSyntax(path, "unchanged_errors", language)


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
    last_old, last_new = -1, -1
    for kept_old, kept_new in [*_kept_lines(old, new), (len(old), len(new))]:
        if kept_new > last_new + 1:  # lines written in place of old ones, or inserted
            written.update(range(last_new + 2, kept_new + 1))
        elif kept_old > last_old + 1:  # only deleted: the lines on either side of the cut
            written.update(n for n in (kept_new, kept_new + 1) if 1 <= n <= len(new))
        last_old, last_new = kept_old, kept_new
    return written


_SMALL_GAP = 100
"""A stretch this short on both sides is compared for its longest matches (difflib, which costs
more than its length squared); a longer one is cut at lines found once on each side first. Only
stretches holding a change get here: the same start and end of a stretch are kept first."""
_ANCHOR_DEPTH = 16
"""How many times a gap between kept lines is cut again at lines of its own; past that, the gap
counts as rewritten (no real edit nests so deep: each level needs lines found once in the gap that
were not found once around it)."""


def _kept_lines(old: list[bytes], new: list[bytes]) -> list[tuple[int, int]]:
    """The lines ``new`` keeps from ``old``, as pairs of indices in order: the same start and end
    of both, then, in what is left, difflib's longest matches when it is short, else a patience
    diff (the lines found once on each side, in the longest run that keeps their order, as
    anchors, each gap between them handled the same way). A longest-match diff alone costs the
    square of the file's lines on files with many repeated lines (a megabyte of them: hours)."""
    kept: list[tuple[int, int]] = []
    gaps = [(0, len(old), 0, len(new), 0)]
    while gaps:
        old_low, old_high, new_low, new_high, depth = gaps.pop()
        while old_low < old_high and new_low < new_high and old[old_low] == new[new_low]:
            kept.append((old_low, new_low))
            old_low, new_low = old_low + 1, new_low + 1
        while old_low < old_high and new_low < new_high and old[old_high - 1] == new[new_high - 1]:
            old_high, new_high = old_high - 1, new_high - 1
            kept.append((old_high, new_high))
        if old_low == old_high or new_low == new_high:
            continue
        if old_high - old_low <= _SMALL_GAP and new_high - new_low <= _SMALL_GAP:
            from difflib import SequenceMatcher  # (off a one-line edit's path: a file left with errors)

            matcher = SequenceMatcher(None, old[old_low:old_high], new[new_low:new_high], autojunk=False)
            for i, j, size in matcher.get_matching_blocks():
                kept.extend((old_low + i + k, new_low + j + k) for k in range(size))
            continue
        if depth == _ANCHOR_DEPTH:
            continue
        anchors = _anchors(old, new, old_low, old_high, new_low, new_high)
        for anchor_old, anchor_new in anchors:
            kept.append((anchor_old, anchor_new))
            gaps.append((old_low, anchor_old, new_low, anchor_new, depth + 1))
            old_low, new_low = anchor_old + 1, anchor_new + 1
        if anchors:
            gaps.append((old_low, old_high, new_low, new_high, depth + 1))
    kept.sort()
    return kept


def _anchors(old: list[bytes], new: list[bytes], old_low: int, old_high: int, new_low: int,
             new_high: int) -> list[tuple[int, int]]:
    """The lines found exactly once in ``old[old_low:old_high]`` and once in ``new[new_low:
    new_high]``, the longest run of them in the same order on both sides (patience sorting)."""
    seen: dict[bytes, int] = {}
    for i in range(old_low, old_high):
        seen[old[i]] = -1 if old[i] in seen else i
    in_new: dict[bytes, int] = {}
    for j in range(new_low, new_high):
        if seen.get(new[j], -1) >= 0:
            in_new[new[j]] = -1 if new[j] in in_new else j
    pairs = sorted((j, seen[line]) for line, j in in_new.items() if j >= 0)
    # The longest run of pairs whose old index grows, by patience sorting: tops[k] is the pair
    # ending the best run of length k + 1 found so far, back[i] the pair before pair i in its run.
    tops: list[int] = []
    top_olds: list[int] = []
    back: list[int] = []
    for index, (_, i) in enumerate(pairs):
        pile = bisect_left(top_olds, i)
        back.append(tops[pile - 1] if pile else -1)
        if pile == len(tops):
            tops.append(index)
            top_olds.append(i)
        else:
            tops[pile], top_olds[pile] = index, i
    run = []
    at = tops[-1] if tops else -1
    while at >= 0:
        run.append((pairs[at][1], pairs[at][0]))
        at = back[at]
    run.reverse()
    return run


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
    last line it spans. Each error costs a search or a few bytes read near it, never a count from
    the file's start: 20,000 errors on one line took 5 s, 100,000 minutes."""
    tree = parser.parse(data)
    root = tree.root_node
    tokens = _Tokens(data)
    stopped = tokens.after(root.end_byte)  # the parse may give up before the end (YAML)
    if not root.has_error and stopped is None:
        return []
    lines = _Lines(data)
    found = []
    if stopped is not None:
        line = lines.number(stopped)
        text = lines.text(line)
        start = lines.starts[line - 1]
        issue = SyntaxIssue(line, lines.column(line, stopped),
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
            line = node.start_point[0] + 1
            start, end = node.start_byte, node.end_byte
            message = f"expected {node.type}" if node.is_missing else _unexpected(data, node)
            # An ERROR node ends where the parser gave up: the token after it is where it could
            # not go on (the last line the error concerns).
            gave_up = tokens.after(end) if node.is_error else None
            last = node.end_point[0] + 1 if gave_up is None else lines.number(gave_up)
            # Recognised in the other version by what it is and the text it starts with (the
            # line of a zero-width MISSING node): not by its line number, which the patch shifts.
            own = data[start:min(end, start + 256)].split(b"\n", 1)[0].strip()[:40]
            issue = SyntaxIssue(line, lines.column(line, start), message)
            found.append((issue, (kind, own or lines.stripped(line)), last))
            descend = not node.is_missing and any(child.has_error for child in node.children)
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


class _Tokens:
    """Where the next token after an offset starts (the first byte that is not white space): found
    by a search from the offset, once per offset (nested errors end at the same place)."""

    # (Hand-written, not a record: a cache filled as it is asked, not a value.)
    __slots__ = ("data", "_found")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._found: dict[int, int | None] = {}

    def after(self, at: int) -> int | None:
        """None: only white space from ``at`` on."""
        if at not in self._found:
            token = _NON_SPACE.search(self.data, at)
            self._found[at] = None if token is None else token.start()
        return self._found[at]


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
