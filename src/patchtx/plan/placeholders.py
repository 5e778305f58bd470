"""Lazy placeholders: the lines a model writes for code it left out, instead of the code.

Models asked for an edit often send the changed part of a file with a placeholder for the rest:
``// ... existing code ...`` (Cursor's, Morph's and Relace's prompts ask for it, in the file's
comment syntax), ``# ... rest of the function unchanged ...``, ``/* ... */``, a bare ``...`` line.
Applied as written, the placeholder becomes a line of the file and the lines it stood for are
lost. ``is_placeholder`` is the one definition of such a line (the guard below uses it, and so
can a merger of lazy snippets); ``find_placeholder`` is the guard's rule.

A line is a placeholder when, white space around it aside, it is

- a comment of the file's language (``#``, ``//``, ``--``, ``;``, ``%``, or on one line ``/* */``,
  ``{/* */}``, ``<!-- -->``, ``(* *)``; in Markdown only ``<!-- -->``, whose ``#`` is a heading;
  in plain text none) whose text is an ellipsis (``...``, ``…``) alone, or starts with one and
  names what it leaves out (``... existing code ...``, ``... (rest of the function unchanged)``),
  or ends with one after such words (``existing code ...``, ``rest of the file...``), or says in
  a sentence that the code is left as it is (``rest of the code remains unchanged``, ``existing
  code here``, ``(unchanged code)``);
- a bare ellipsis line, in a file whose language has no such statement (C-like languages, Go,
  Rust, JavaScript/TypeScript, JSON, CSS...): never in Python, where ``...`` is the Ellipsis a
  stub's body holds, nor in Markdown, text or YAML (``...`` ends a YAML document).

A comment that only mentions such words is no placeholder (``# retry the rest of the batch...``,
``# Other helper functions``, a section's title): the words must be what the comment says.

The guard (``find_placeholder``) asks more than the line: the hunk adds it; it stands where code
goes, not inside a comment (after a ``/*`` left open, or between two comment lines: an example's
elided output, ``#   ...``, is text) nor before the ``)`` of a parameter list (C's variadic
``...``); and neither the lines the hunk replaces nor the file hold a placeholder (a file that
does, a tutorial or a test of these very words, uses them as text).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import ContextNotFoundError, PlaceholderError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from ..formats.registry import Format
    from ..model import AddFile, Chunk, UpdateFile

BARE_ELLIPSIS_LANGUAGES = frozenset({
    "c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx", "m", "mm", "cs", "java", "kt", "kts",
    "scala", "go", "rs", "swift", "dart", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts",
    "vue", "svelte", "php", "json", "jsonc", "css", "scss", "less", "sql", "proto", "zig",
})
"""File extensions of languages in which a line holding only ``...`` is no statement: there it is
a placeholder. (Python, its stubs, Markdown, text and YAML use the line as it is.)"""

MARKUP = frozenset({"md", "markdown", "mdx", "html", "htm", "xml", "svg"})
"""Extensions whose only comment is ``<!-- -->`` (a Markdown line starting with ``#`` is a
heading)."""
PLAIN = frozenset({"txt", "text", "rst", "adoc", "csv", "tsv", "log"})
"""Extensions of text without comments: no line of theirs is taken for a placeholder."""

_LINE_MARKERS = ("#", "//", "--", ";", "%")
_ELLIPSES = ("...", "…")


class _Patterns:
    """The recogniser's patterns, compiled when a line first needs them (most added lines start
    with no comment marker, and this module loads with every edit)."""

    def __init__(self) -> None:
        self.ellipsis = re.compile(r"\.{3,}|…")
        self.line_comment = re.compile(r"(?:#+|//+|--|;+|%+)\s*(.*)")
        """A line comment and its text (``--`` only before a space or alone: ``--x`` is a
        decrement or an option; ``#include``, ``#[derive]`` hold no placeholder's words)."""
        self.block_comment = re.compile(r"\{?\s*(?:/\*+|<!--|\(\*)\s*(.*?)\s*(?:\*+/|-->|\*\))\s*\}?")
        self.markup_comment = re.compile(r"<!--\s*(.*?)\s*-->")
        self.after_ellipsis = re.compile(
            r"[(\[]?\s*(?:the\s+)?(?:"
            r"existing|unchanged|remaining|previous|other|same|original|rest|remainder|more|keep|"
            r"omitted|elided|snip|truncated|etc|code|implementation|implement|content|here|add|"
            r"include|insert|fill|your|logic|body|todo)\b", re.IGNORECASE)
        """Words a placeholder's text starts with after its ellipsis (``... existing code``,
        ``... (rest of the function unchanged)``, ``... other methods ...``, aider's laziness
        benchmark's ``...add logic here...``, ``...include the original method body...``)."""
        self.before_ellipsis = re.compile(
            r"[(\[]?\s*(?:the\s+)?(?:existing|unchanged|remaining|previous|other|original)\s+"
            r"(?:code|lines?|implementation|content|methods?|functions?|fields?|imports?|tests?|"
            r"cases?|logic|body|properties|styles?|rules?|config(?:uration)?|elements?|"
            r"components?|props)\b"
            r"|[(\[]?\s*(?:the\s+)?(?:rest|remainder)\s+of\b"
            r"|[(\[]?\s*keep\s+(?:the\s+)?existing\b", re.IGNORECASE)
        """Words a placeholder's text starts with when its ellipsis ends it (``existing code ...``)."""
        self.sentence = re.compile(
            r"[(\[]?\s*(?:"
            r"(?:(?:the\s+)?(?:rest|remainder)\s+of\s+(?:the\s+)?(?:\w+\s+){0,3}?"
            r"|(?:the\s+|all\s+)?(?:existing|unchanged|previous|original|other|remaining)\s+(?:\w+\s+){0,2}?)"
            r"(?:code|file|function|method|class|module|implementation|content|lines?|body|logic|"
            r"methods|functions|tests|component|styles|config(?:uration)?)"
            r"\s+(?:(?:remains?|stays?|is|are|goes)\s+(?:the\s+same|unchanged|as\s+(?:before|is)|here)"
            r"|unchanged|as\s+(?:before|is)|here|omitted|goes\s+here)"
            r"|(?:existing|unchanged)\s+code"
            r")\s*[.:]?\s*[)\]]?", re.IGNORECASE)
        """A whole comment saying the code is left as it is, without an ellipsis (``rest of the
        code remains unchanged``, ``existing code here``, ``(unchanged code)``); a title such as
        ``Other helper functions`` says nothing of the kind."""


_COMPILED: list[_Patterns] = []


def _patterns() -> _Patterns:
    if not _COMPILED:
        _COMPILED.append(_Patterns())
    return _COMPILED[0]


def _comment_text(stripped: str, extension: str, patterns: _Patterns) -> str | None:
    """The text of a comment that is the whole line, in the file's language; None if the line
    is no comment."""
    if extension in MARKUP:
        markup = patterns.markup_comment.fullmatch(stripped)
        return None if markup is None else markup.group(1)
    block = patterns.block_comment.fullmatch(stripped)
    if block is not None:
        return block.group(1)
    line = patterns.line_comment.fullmatch(stripped)
    if line is not None and (stripped[:1] != "-" or stripped[2:3] in ("", " ")):
        return line.group(1)
    return None


def is_placeholder(line: str, extension: str = "") -> bool:
    """Whether ``line`` is a lazy placeholder for code left out (see the module), in a file with
    the given ``extension`` (``extension_of``; ``""``: unknown, where a bare ``...`` line is not
    taken for one)."""
    stripped = line.strip()
    if not stripped or extension in PLAIN:
        return False
    if stripped in _ELLIPSES:
        return extension in BARE_ELLIPSIS_LANGUAGES
    if stripped[0] not in "#/-;%{<(":
        return False
    patterns = _patterns()
    text = _comment_text(stripped, extension, patterns)
    if text is None:
        return False
    text = text.strip()
    head = patterns.ellipsis.match(text)
    if head is not None:
        rest = text[head.end():].strip()
        return not rest.strip(".…()[]:,- ") or patterns.after_ellipsis.match(rest) is not None
    tail = patterns.ellipsis.search(text)
    if tail is not None and not text[tail.end():].strip(".…)] "):
        return patterns.before_ellipsis.match(text[:tail.start()]) is not None
    return patterns.sentence.fullmatch(text) is not None


def extension_of(path: str) -> str:
    """A path's extension as ``is_placeholder`` takes it: lower case, without its dot."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else ""


def is_comment(line: str, extension: str) -> bool:
    """Whether ``line`` belongs to a comment: it starts with a comment marker (or ``*``, a block
    comment's inner line) or ends one."""
    stripped = line.strip()
    if extension in MARKUP:
        return stripped.startswith("<!--") or stripped.endswith("-->")
    return stripped.startswith((*_LINE_MARKERS, "/*", "*")) or stripped.endswith("*/")


def _in_comment(lines: Sequence[str], at: int, extension: str) -> bool:
    """Whether line ``at`` stands inside a comment: after a ``/*`` that no ``*/`` closes above it,
    or between two comment lines (the nearest non-blank lines before and after it; a hunk's edge
    is no comment: code may stand there)."""
    for line in reversed(lines[:at]):
        opened, closed = line.rfind("/*"), line.rfind("*/")
        if opened >= 0 or closed >= 0:
            if opened > closed:
                return True
            break
    before = next((line for line in reversed(lines[:at]) if line.strip()), None)
    after = next((line for line in lines[at + 1:] if line.strip()), None)
    return (before is not None and after is not None and is_comment(before, extension)
            and is_comment(after, extension))


def _variadic(lines: Sequence[str], at: int) -> bool:
    """Whether a bare ``...`` at line ``at`` closes a parameter list (C's variadic parameters,
    written on a line of their own before the ``)``)."""
    after = next((line for line in lines[at + 1:] if line.strip()), "")
    return lines[at].strip() in _ELLIPSES and after.lstrip().startswith(")")


def find_placeholder(new: Sequence[str], added: Sequence[bool], removed: Sequence[str],
                     file_lines: Iterable[str], extension: str) -> str | None:
    """THE guard's rule, for one hunk: its new side ``new`` (``added``: which of those lines it
    adds), the lines ``removed`` it replaces, and the file's lines (read only when needed). The
    first added line that is a placeholder standing where code goes (not inside a comment), when
    no removed line is a placeholder and the file holds none; else None."""
    found = next((line for at, line in enumerate(new) if added[at] and is_placeholder(line, extension)
                  and not _in_comment(new, at, extension) and not _variadic(new, at)), None)
    if found is None or any(is_placeholder(line, extension) for line in removed):
        return None
    if any(is_placeholder(line, extension) for line in file_lines):
        return None
    return found


def is_elision(line: str) -> bool:
    """Whether ``line`` is aider's elision mark in a SEARCH/REPLACE block: ``...`` alone (the
    lines between the parts before and after it are left out)."""
    return line.strip() in _ELLIPSES


def refuse_elision(chunks: Sequence[Chunk], texts: Sequence[str], display: str,
                   miss: ContextNotFoundError) -> None:
    """A SEARCH/REPLACE block that matched nowhere and whose SEARCH lines hold aider's ``...``
    elision: refused saying so (``placeholder``), as patchtx never expands an elision (which
    lines it stands for, and so what the block replaces, the block does not say); where the file
    holds such a line itself (a Python stub's body), the mark may be text: the miss stands,
    saying it may be one. Returns when no SEARCH holds one."""
    for chunk in chunks:
        old = chunk.old_lines
        at = next((number for number, line in enumerate(old) if is_elision(line)), None)
        if at is None:
            continue
        said = (f"The SEARCH lines of the block on line {chunk.line} hold a '{old[at].strip()}' "
                f"line (their line {at + 1}): aider's way to leave out the lines between, which "
                "patchtx does not expand (the lines it stands for are not in the block, so what "
                "the block replaces is not told). Send each part as its own block, its SEARCH "
                "lines exactly as the file has them.")
        if any(is_elision(line) for line in texts):
            miss.hint = f"{said} {miss.hint}"
            return
        raise PlaceholderError(
            f"Refusing the SEARCH/REPLACE block on line {chunk.line} for {display}: its SEARCH "
            "lines leave lines out with '...'.", hint=said, path=display, line=chunk.line,
            details={"placeholder": old[at]})


# -- the guard on a staged patch (the planner asks it once a hunk is placed) -----------------------
def placeholder_in_update(hunk: UpdateFile, rel: str, content: bytes,
                          fmt: Format) -> PlaceholderError | None:
    """A hunk whose added lines hold a lazy placeholder (``find_placeholder``) is refused as
    ``placeholder`` (once the patch is staged), unless the host allows them (the planner asks).
    ``fmt`` is the patch's format."""
    extension = extension_of(rel)
    for chunk in hunk.chunks:
        if fmt.replaces_text:  # (a text's lines: those of its old text are kept)
            old = "\n".join(text for kind, text in chunk.lines if kind == "-").split("\n")
            new = "\n".join(text for kind, text in chunk.lines if kind == "+").split("\n")
            added = [line not in old for line in new]
        else:
            old, new = chunk.old_lines, chunk.new_lines
            added = [kind == "+" for kind, _ in chunk.lines if kind != "-"]
        found = find_placeholder(new, added, old, _lines(content), extension)
        if found is not None:
            from ..place.hints import visible  # (off a one-line edit's path)

            which = fmt.hunk_named(chunk, adding=True)
            return _placeholder_error(
                f"Refusing the patch: {which} adds the line \"{visible(found.strip())}\" to "
                f"{hunk.path}, a placeholder for code left out, not code: written as it is, it "
                "would stand in the file in place of the lines the hunk replaces, and they would "
                "be lost.", found, rel, chunk.line)
    return None


def placeholder_added(hunk: AddFile, rel: str, content: bytes | None) -> PlaceholderError | None:
    """A file added (or written over) whose lines hold a lazy placeholder: refused alike."""
    lines = hunk.contents.split("\n")
    found = find_placeholder(lines, [True] * len(lines), (), _lines(content), extension_of(rel))
    if found is None:
        return None
    from ..place.hints import visible  # (off a one-line edit's path)

    return _placeholder_error(
        f"Refusing the patch: the file {hunk.path} it adds (patch line {hunk.line}) holds the "
        f"line \"{visible(found.strip())}\", a placeholder for code left out, not code.",
        found, rel, hunk.line)


def _lines(content: bytes | None) -> Iterator[str]:
    """A file's lines, decoded only when asked for (most hunks hold no placeholder)."""
    if content:
        yield from content.decode("utf-8", "replace").splitlines()


def _placeholder_error(headline: str, line: str, rel: str, patch_line: int) -> PlaceholderError:
    return PlaceholderError(
        headline,
        hint="Write out the code the placeholder stands for (the lines that stay are context lines, "
             "or in both SEARCH and REPLACE), or send only the lines that change. A host that means "
             "to write such lines as text passes --allow-placeholders (allow_placeholders=True).",
        path=rel, line=patch_line, details={"placeholder": line})
