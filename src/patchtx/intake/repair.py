"""The front door's repair step: a patch text in a shape models often send, read as the patch it
means when it means exactly one (docs/format.md, "Repairs").

The rule: a text that parses as sent is never changed, but for one shape: a Codex patch whose
file headers have stars after their path (grok's ``*** Add File: a.py ***``), which would name a
file ``a.py ***``. A text that does not is tried against the
repairs below, in order, each at most once, each a rule over the text alone whose result has one
meaning: the patch inside a JSON wrapper or a code fence, a leading byte-order mark, PowerShell's
`` `n `` newlines, decorated or missing envelope markers, an empty section ('@@' twice), a unified
diff inside the envelope. The
first text that parses is the patch, and every repair made on the way is reported with it
(``Patch.repairs``). Repairs that need a file's content (line-number prefixes, a context line
without its space, indentation...) are made where the file is read (``repair_update``); the parse
here only marks the lines they will check (``parse(unprefixed_context=True)``).

A text none of them turns into a patch is refused with the error of the last text tried, whose
hint names the repairs already made (so that one retry fixes everything). ``strict`` (the
``--strict`` option) skips this module: Codex's grammar, nothing else.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from .._record import replace
from ..errors import HunkParseError, ParseError
from ..formats.codex import (
    ADD_FILE,
    BEGIN_PATCH,
    CODEX,
    DELETE_FILE,
    END_OF_FILE,
    END_PATCH,
    HEREDOC_OPENERS,
    MOVE_TO,
    UPDATE_FILE,
    parse,
    require_text,
)
from ..formats.registry import detect
from ..formats.unified_placement import UNIFIED
from ..model import Repair, UpdateFile
from ..place.normalise import WHITESPACE

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..model import Patch

_HEADERS = (ADD_FILE.rstrip(), DELETE_FILE.rstrip(), UPDATE_FILE.rstrip())
_NAMING = (*_HEADERS, MOVE_TO.rstrip())
# Patterns as text, compiled by ``re`` at first use and cached there: most patches need one or two
# of them, and compiling them all at import cost every one-line edit ~3 ms.
_DECORATED_NAME = r"(?m)^\*\*\* (?:Add File|Delete File|Update File|Move to): .*[ \t]\*{2,}[ \t]*\r?$"
_ABSOLUTE_NAME = r"(?m)^(?:---|\+\+\+|diff --git) (?:[ab]/)?/(?!dev/null\s*$)"
_DECORATED_END_OF_FILE = r"(?i)\*{2,}\s*end[ _-]?of[ _-]?file\b[\s*:=-]*"
_DECORATED = r"(?i)\*{2,}\s*(begin|end)[ _-]?patch\b[\s*:=-]*"
_DECORATED_PATH = r"(?<![ \t])[ \t]+\*{2,}[ \t]*$"
"""Stars after a file header's path. (The look-behind starts a match only where a run of white
space starts, where the leftmost match starts anyway: tried from inside the run too, a search
went back over the whole run from each of its characters, 26 s for a header of 20,000 spaces.)"""
_SHELL_HEREDOC = r"(?s)(?:apply_patch|applypatch)[ \t]*<<-?[ \t]*(['\"]?)([A-Za-z_][\w-]*)\1[ \t]*\n(.*?)\n?\2[ \t]*"
_UNIFIED_STARTS = ("diff --git ", "diff --cc ", "diff --combined ", "--- ")
"""How a unified diff's text starts (its first file header)."""
_COMMAND_WORDS = frozenset({"apply_patch", "applypatch", "bash", "sh", "zsh", "-c", "-lc", "-l"})
"""The words a command array may hold beside its patch: Codex's ``["apply_patch", PATCH]`` and
``["bash", "-lc", "apply_patch <<'EOF'..."]``."""
_DIRECTORY_KEY = r"(?i)dir|cwd|root|path|folder|workspace|repo|base|project"
"""A JSON key that may name where the patch's paths start (``workdir``, ``cwd``, ``root``,
``project_dir``, ``path``...): one that names the root itself (``""``, ``"."``) changes nothing."""
_NAMING_KEYS = frozenset({"name", "id", "call_id", "tool_call_id", "tool_use_id", "type", "tool",
                          "tool_name", "recipient_name"})
"""The keys of a JSON wrapper that change nothing of what its patch does: a tool call's name, id
and type (``{"type": "function", "id": "call_1", "function": {"name": "apply_patch",
"arguments": ...}}``, Anthropic's ``tool_use``, the Responses API's ``call_id``). Any other key
beside the patch may ask something of it that taking the patch out would lose: ``dry_run``,
``check``, ``reverse``, ``strip``, a folder (``cd``, ``target``, ``in``, ``wd``...)."""
_JSON_DEPTH = 32
"""How deep a JSON text may nest to be read as a wrapper (a tool call's is a few levels deep):
deeper text is not a wrapper, and is never handed to the decoder, whose recursion it would
exhaust (``[`` a thousand times)."""
_NOT_JSON = object()


def parse_repaired(text: str, *, strip: int | None = None, reverse: bool = False,
                   unidiff_zero: bool = False) -> Patch:
    """``parser.parse``, with the front door's repairs tried when the text does not parse."""
    require_text(text)  # (no repair makes text that is not Unicode, or a diff's bytes, a patch)
    repairs: list[Repair] = []
    named = _decorated_names(text)
    if named is not None:
        # (A repair made to a text that parses: it would name a file 'a.py ***'.)
        text, repair = named
        repairs.append(repair)
    absolute = _absolute_names(text, strip, reverse, unidiff_zero)
    if absolute is not None:
        return absolute
    try:
        return replace(parse(text, strip=strip, reverse=reverse, unidiff_zero=unidiff_zero),
                       repairs=tuple(repairs))
    except ParseError as error:
        last = error
    current = text
    tried: set[str] = {repair.kind for repair in repairs}
    while True:
        step = _next_repair(current, tried)
        if step is None:
            break
        current, repair = step
        tried.add(repair.kind)
        repairs.append(repair)
        try:
            patch = parse(current, strip=strip, reverse=reverse, unidiff_zero=unidiff_zero)
        except ParseError as error:
            last = error
            continue
        return replace(patch, repairs=tuple(repairs))
    if (isinstance(last, HunkParseError) and str(last.details.get("codex_message", "")).startswith(
            ("Unexpected line found in update hunk", "Expected update hunk to start"))
            or last.details.get("reading_by_counts")):
        # A body line without its prefix: read as context, for the update to check it stands in
        # the file there (repair_update); refused there, with this error, when it does not. (A
        # unified hunk that agrees with its counts only so: its readings, for the update to
        # choose the one that stands in the file, unified_placement.read_by_counts.)
        try:
            patch = parse(current, strip=strip, reverse=reverse, unidiff_zero=unidiff_zero,
                          unprefixed_context=True)
        except ParseError:
            pass
        else:
            return replace(patch, repairs=tuple(repairs))
    why = _why_not(current)
    if why:
        last.hint = f"{why} {last.hint}".rstrip()
    if repairs:
        made = "; ".join(f"{r.detail} ({r.where})" for r in repairs)
        last.hint = (f"{last.hint} Before this error patchtx repaired the text: {made}; line "
                     "numbers count in the text so repaired. Send the corrected patch itself."
                     ).lstrip()
    raise last


def _next_repair(text: str, tried: set[str]) -> tuple[str, Repair] | None:
    for kind, rule in _RULES:
        if kind in tried:
            continue
        if kind == "missing_end_marker" and not tried & _CLOSING_WRAPPERS:
            continue  # a bare text without its End line may have been cut off: see _missing_end
        found = rule(text)
        if found is not None and found[0] != text:
            return found
    return None


# -- the rules, in the order they are tried ---------------------------------------------------
def _byte_order_mark(text: str) -> tuple[str, Repair] | None:
    stripped = text.lstrip(WHITESPACE)
    if not stripped.startswith("\ufeff"):
        return None
    return stripped.lstrip("\ufeff"), Repair(
        "byte_order_mark", "patch line 1",
        "removed a byte-order mark (U+FEFF) before the first line")


def _json_wrapper(text: str) -> tuple[str, Repair] | None:
    stripped = text.strip(WHITESPACE)
    if not stripped or stripped[0] not in "{[\"":
        return None
    value = _json_value(stripped)
    if value is _NOT_JSON:
        return None
    if _other_keys(value):
        return None  # what another key asks (a dry run, another folder...) would be lost
    if _command_around_patch(value):
        return None  # a command's words (cd, -p, -C...) would change where or how it applies
    found: list[str] = []
    _patch_strings(value, found, 0)
    distinct = list(dict.fromkeys(found))
    if len(distinct) != 1:
        return None
    shape = ("a JSON string" if isinstance(value, str) else
             "a JSON array" if isinstance(value, list) else "a JSON object")
    return distinct[0], Repair(
        "json_wrapper", "the whole text",
        f"took the patch out of {shape} (send the patch text itself, not the call's JSON)")


def _json_value(text: str) -> object:
    """The JSON value ``text`` holds, or ``_NOT_JSON``: not JSON, or nested deeper than
    ``_JSON_DEPTH`` (told before decoding, from the brackets outside its strings)."""
    if text[:1] in ("{", "[") and _nested_deeper(text, _JSON_DEPTH):
        return _NOT_JSON
    try:
        return json.loads(text, object_pairs_hook=_distinct_keys)
    except ValueError:
        return _NOT_JSON


_JSON_SPECIALS = re.compile(r'[][{}"\\]')


def _nested_deeper(text: str, limit: int) -> bool:
    """Whether the brackets of a JSON text, outside its strings, nest deeper than ``limit``: one
    pass over the characters that open or close a string or a bracket, in linear time (a pattern
    that skips whole strings went back over the text from every quote of an unterminated one: 40 KB
    of escaped quotes took a minute)."""
    depth, in_string, escaped = 0, False, -1
    for found in _JSON_SPECIALS.finditer(text):
        at, char = found.start(), found.group()
        if at == escaped:
            continue  # (the character after a backslash, in a string)
        if in_string:
            if char == "\\":
                escaped = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def _distinct_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object whose keys are distinct; a key given twice is no wrapper (ValueError): the
    decoder would keep the last value and drop the other, a second patch or another folder
    (``{"input": A, "input": B}``, ``{"cwd": "sub", "cwd": "."}``), as serde refuses a duplicate
    field."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a key given twice")
    return value


def _other_keys(value: object, depth: int = 0) -> list[str]:
    """The keys of a JSON value (and of a JSON text inside one of its strings: a tool call's
    ``arguments``) that neither lead to its patch nor only name or identify the tool call
    (``_NAMING_KEYS``), nor name the root as the folder; each as ``key=value``, for the
    refusal."""
    if depth > 4:
        return []
    if isinstance(value, dict):
        found: list[str] = []
        for key, item in value.items():
            if _leads_to_patch(item, depth + 1):
                found.extend(_other_keys(item, depth + 1))
            elif not (str(key).lower() in _NAMING_KEYS and not isinstance(item, (dict, list))
                      or re.search(_DIRECTORY_KEY, str(key)) and item in (None, "", ".", "./")):
                found.append(f"{key}={json.dumps(item)[:40]}")
        return found
    if isinstance(value, list):
        return [key for item in value for key in _other_keys(item, depth + 1)]
    if isinstance(value, str) and value.strip(WHITESPACE)[:1] in ("{", "["):
        inner = _json_value(value.strip(WHITESPACE))
        return [] if inner is _NOT_JSON else _other_keys(inner, depth + 1)
    return []


def _leads_to_patch(value: object, depth: int) -> bool:
    found: list[str] = []
    _patch_strings(value, found, depth)
    return bool(found)


def _patch_strings(value: object, found: list[str], depth: int) -> None:
    """Every string inside a JSON value that is a patch (or a shell heredoc calling apply_patch
    with one), looking into strings that are JSON themselves (a tool call's ``arguments``)."""
    if depth > 4:
        return
    if isinstance(value, dict):
        for item in value.values():
            _patch_strings(item, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _patch_strings(item, found, depth + 1)
    elif isinstance(value, str):
        stripped = value.strip(WHITESPACE)
        heredoc = re.fullmatch(_SHELL_HEREDOC, stripped)
        if heredoc is not None:
            found.append(heredoc.group(3))
        elif _looks_like_patch(stripped):
            found.append(value)
        elif stripped[:1] in ("{", "[", '"'):
            inner = _json_value(stripped)
            if inner is not _NOT_JSON:
                _patch_strings(inner, found, depth + 1)


def _looks_like_patch(text: str) -> bool:
    """Whether ``text`` is a patch and nothing else: it starts as a Codex patch or a unified diff
    starts (text before the diff, a shell command around it, is more than the patch)."""
    first = text.split("\n", 1)[0].strip(WHITESPACE)
    if first in HEREDOC_OPENERS or re.fullmatch(_DECORATED, first) or first.startswith(_HEADERS):
        return "\n" in text
    from ..formats.unified import looks_unified  # (off a one-line edit's path)

    return first.startswith(_UNIFIED_STARTS) and looks_unified(text)


def _holds_patch(text: str) -> bool:
    """Whether ``text`` holds a patch somewhere, with or without other text around it."""
    from ..formats.unified import looks_unified  # (off a one-line edit's path)

    return BEGIN_PATCH in text or looks_unified(text)


def _command_around_patch(value: object, depth: int = 0) -> str:
    """What a JSON value holds besides its patch that would change how the patch applies, as
    the refusal names it: a string with more than the patch (``cd sub && git apply <<'EOF'``
    before a diff, ``patch -p0 <<EOF``, any text), or a command array whose other words are
    more than ``apply_patch`` run by a shell (``["git", "apply", "-p0", DIFF]``); "" if none.
    patchtx runs no command: their directories and options would be lost."""
    if depth > 4:
        return ""
    if isinstance(value, dict):
        return next((found for item in value.values()
                     if (found := _command_around_patch(item, depth + 1))), "")
    if isinstance(value, list):
        found = next((found for item in value if (found := _command_around_patch(item, depth + 1))), "")
        if found:
            return found
        words = [item for item in value if isinstance(item, str)]
        patches = [word for word in words if _is_patch_string(word)]
        others = [word for word in words if word not in patches]
        if patches and any(word.strip(WHITESPACE) not in _COMMAND_WORDS for word in others):
            return " ".join(others)
        return ""
    if isinstance(value, str):
        stripped = value.strip(WHITESPACE)
        if _is_patch_string(stripped):
            return ""
        if stripped[:1] in ("{", "["):  # (a tool call's arguments string)
            inner = _json_value(stripped)
            if inner is not _NOT_JSON:
                return _command_around_patch(inner, depth + 1)
        if _holds_patch(stripped):
            return stripped.split("\n", 1)[0].strip(WHITESPACE)[:120]
    return ""


def _is_patch_string(text: str) -> bool:
    """A JSON string that is a patch, or Codex's shell heredoc that runs apply_patch on one."""
    stripped = text.strip(WHITESPACE)
    return re.fullmatch(_SHELL_HEREDOC, stripped) is not None or _looks_like_patch(stripped)


def _code_fence(text: str) -> tuple[str, Repair] | None:
    stripped = text.strip(WHITESPACE)
    match = re.fullmatch(r"(`{3,}|~{3,})[^\n`]*\n(.*?)\n?\1[ \t]*", stripped, re.DOTALL)
    if match is None:
        return None
    return match.group(2) + "\n", Repair(
        "code_fence", "patch lines 1 and last",
        "removed the markdown code fence around the patch")


def _powershell_newlines(text: str) -> tuple[str, Repair] | None:
    # One line, every backtick an escape PowerShell's double quotes would have turned into a
    # newline, a CR or a tab: the text went through a quoting that kept them literal.
    text = text.strip(WHITESPACE)
    if "\n" in text or "`n" not in text or re.search(r"`(?![nrt])", text):
        return None
    decoded = text.replace("`r`n", "\n").replace("`n", "\n").replace("`t", "\t").replace("`r", "\r")
    if not _looks_like_patch(decoded.strip(WHITESPACE)):
        return None
    return decoded, Repair(
        "powershell_newlines", "the whole text",
        "read PowerShell's `n (and `r, `t) escapes as the line breaks (and CRs, tabs) they stand "
        "for (send real line breaks)")


def _decorated_markers(text: str) -> tuple[str, Repair] | None:
    lines = text.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip(WHITESPACE)]
    if not filled:
        return None
    changed = []
    for index, marker in ((filled[0], BEGIN_PATCH), (filled[-1], END_PATCH)):
        line = lines[index].strip(WHITESPACE)
        match = re.fullmatch(_DECORATED, line)
        if (line != marker and match is not None
                and match.group(1).lower() == marker.split()[1].lower()):
            changed.append(f"patch line {index + 1}: '{line}'")
            lines[index] = marker
    last = lines[filled[-1]].rstrip(WHITESPACE)
    if (last.endswith("\\n" + END_PATCH) and not changed
            and not any(line.strip(WHITESPACE) == END_PATCH for line in lines)):
        # The End line glued to the last line by an escaped line break (a JSON string's \n
        # written out): no line of a file ends with '\n*** End Patch'.
        lines[filled[-1]] = last[: -len("\\n" + END_PATCH)]
        lines.insert(filled[-1] + 1, END_PATCH)
        changed.append(f"patch line {filled[-1] + 1}: '\\n{END_PATCH}' at the end of a line")
    changed.extend(_undecorated_lines(lines))
    if not changed:
        return None
    numbers = [c.split(":")[0].split()[-1] for c in changed]
    return "\n".join(lines), Repair(
        "decorated_marker", f"patch line{'s' if len(numbers) > 1 else ''} {', '.join(numbers)}",
        f"read {' and '.join(c.split(': ', 1)[1] for c in changed)} without the stars around "
        f"(a marker is '{BEGIN_PATCH}', '{END_PATCH}' or '*** Update File: PATH', nothing else "
        "on the line)")


def _undecorated_lines(lines: list[str]) -> list[str]:
    """The file headers with stars after their path (grok's '*** Update File: a.py ***': no file
    name ends in a space and stars) and the decorated '*** End of File ***' lines, set right in
    ``lines``; what was changed, as ``_decorated_markers`` says it."""
    changed = []
    for index, line in enumerate(lines):
        stripped = line.strip(WHITESPACE)
        if stripped.startswith(_NAMING) and re.search(_DECORATED_PATH, stripped):
            lines[index] = re.sub(_DECORATED_PATH, "", stripped)
        elif stripped != END_OF_FILE and re.fullmatch(_DECORATED_END_OF_FILE, stripped):
            lines[index] = END_OF_FILE
        else:
            continue
        changed.append(f"patch line {index + 1}: '{stripped}'")
    return changed


def _decorated_names(text: str) -> tuple[str, Repair] | None:
    """The decorated markers' repair of a Codex patch whose file headers have stars after their
    path, made whether or not it parses (it would name a file 'a.py ***')."""
    if (detect(text) is not CODEX or (" **" not in text and "\t**" not in text)
            or re.search(_DECORATED_NAME, text) is None):  # (a search of a big text, asked last)
        return None
    return _decorated_markers(text)


def _absolute_names(text: str, strip: int | None, reverse: bool, unidiff_zero: bool,
                    ) -> Patch | None:
    """A unified diff that names files by their absolute paths (``--- a//home/u/proj/x.py``, as
    an agent's tools print them), read with those names kept whole: the planner takes a name
    inside the root as that file and refuses one outside it. Read as written, git's rule strips
    one component and names ``home/u/proj/x.py`` under the root. Not with an explicit ``-p``."""
    if strip is not None or detect(text) is not UNIFIED or re.search(_ABSOLUTE_NAME, text) is None:
        return None
    try:
        patch = parse(text, reverse=reverse, unidiff_zero=unidiff_zero, absolute_names=True)
    except ParseError:
        return None
    named = [hunk.line for hunk in patch.hunks if hunk.path.startswith("/")
             or (isinstance(hunk, UpdateFile) and (hunk.move_to or "").startswith("/"))]
    if not named:
        return None
    return replace(patch, repairs=(Repair(
        "absolute_paths", f"patch line{'s' if len(named) > 1 else ''} {', '.join(map(str, named))}",
        "read the diff's absolute file names as the workspace's files they name (a diff names "
        "files relative to the root: '--- a/src/x.py')"),))


def _empty_sections(text: str) -> tuple[str, Repair] | None:
    """A bare '@@' line right after another: an empty section, which Codex's grammar refuses
    ('Unexpected line found in update hunk: '@@''); the second opens the same section."""
    lines = text.split("\n")
    kept: list[str] = []
    dropped: list[int] = []
    for number, line in enumerate(lines, 1):
        if line.rstrip(WHITESPACE) == "@@" and kept and kept[-1].rstrip(WHITESPACE) == "@@":
            dropped.append(number)
            continue
        kept.append(line)
    if not dropped:
        return None
    return "\n".join(kept), Repair(
        "empty_section", f"patch line{'s' if len(dropped) > 1 else ''} "
        + ", ".join(map(str, dropped)),
        "dropped a bare '@@' line right after another (an empty section; one '@@' opens a section)")


def _missing_begin(text: str) -> tuple[str, Repair] | None:
    stripped = text.lstrip(WHITESPACE)
    first = stripped.split("\n", 1)[0].strip(WHITESPACE)
    if not first.startswith(_HEADERS):
        return None
    if any(line.strip(WHITESPACE) == BEGIN_PATCH for line in stripped.split("\n")):
        return None
    return f"{BEGIN_PATCH}\n{stripped}", Repair(
        "missing_begin_marker", "patch line 1",
        f"added the missing '{BEGIN_PATCH}' line before '{first[:60]}'")


def _missing_end(text: str) -> tuple[str, Repair] | None:
    """A patch without its End Patch line is closed only when both show it whole: a wrapper
    closes after it (a code fence, a JSON string: ``_CLOSING_WRAPPERS``), so its writer ended
    the text there, and its last line is one a cut cannot have shortened into another meaning
    (``_ends_whole``). A bare text is never closed (``_next_repair``): a reply cut off at a line
    boundary, after a context line or a whole section, looks the same as a whole patch, and what
    the cut lost (the rest of a section, whole files) is not in it; its refusal names the cut.
    Nor is a wrapped one that ends in an added or removed line: the wrapper may have been closed
    around a cut text (a client completing a cut tool call's JSON), and '+kee' cut from '+keep'
    is a whole line too."""
    lines = text.rstrip(WHITESPACE).split("\n")
    if not lines or lines[0].strip(WHITESPACE) != BEGIN_PATCH:
        return None
    if any(line.strip(WHITESPACE) == END_PATCH for line in lines):
        return None
    if any(text[len(text.rstrip(WHITESPACE)):].split("\n")[1:]):
        # A line of white space last is a blank context line: what a cut right after any context
        # line's prefix space leaves (see _ends_whole).
        return None
    closed = "\n".join(lines) + f"\n{END_PATCH}\n"
    try:
        patch = parse(closed, unprefixed_context=True)
    except ParseError:
        return None
    if not patch.hunks or not _ends_whole(patch):
        return None
    return closed, Repair(
        "missing_end_marker", f"patch line {len(lines) + 1}",
        f"added the missing '{END_PATCH}' line after the last section")


def _ends_whole(patch: Patch) -> bool:
    """Whether a patch's last line proves that a cut there lost nothing it writes: a context line
    of an update's last section that is not blank (or its '*** End of File' line). Cut inside it,
    the line is another line (or the same, less trailing white space), which the update must find
    in the file where its section goes, exactly or by a pass that ignores trailing white space; a
    cut elsewhere leaves an added or removed line, an added file's line or a header last, whose
    text a cut shortens into another meaning the file cannot check ('+kee' for '+keep'). A blank
    context line is no proof, and ``_missing_end`` refuses a text with one at its end before
    asking: it is what a cut right after any context line's prefix space leaves (' ' of
    ' urllib3 ...'), and the placement's retry without a last blank line (Codex's) drops it
    unchecked, so the lines the cut lost were never asked for (two cut texts in a fence or a JSON
    string were written so in the damage hunt, benchmarks/README.md)."""
    last = patch.hunks[-1]
    if not isinstance(last, UpdateFile) or not last.chunks:
        return False
    chunk = last.chunks[-1]
    return chunk.is_end_of_file or bool(chunk.lines) and chunk.lines[-1][0] == " "


def _unified_in_envelope(text: str) -> tuple[str, Repair] | None:
    lines = text.strip(WHITESPACE).split("\n")
    if len(lines) < 3 or lines[0].strip(WHITESPACE) != BEGIN_PATCH:
        return None
    if lines[-1].strip(WHITESPACE) != END_PATCH:
        return None
    inner = "\n".join(lines[1:-1]) + "\n"
    if any(line.strip(WHITESPACE).startswith(_HEADERS) for line in lines[1:-1]):
        return None  # both formats in one text: which lines belong to which is not determined
    from ..formats.unified import looks_unified  # (off a one-line edit's path)

    if not looks_unified(inner):
        return None
    return inner, Repair(
        "unified_in_envelope", f"patch lines 1 and {len(lines)}",
        "read the unified diff inside the '*** Begin Patch' envelope as a unified diff (send "
        "either format alone)")


_CLOSING_WRAPPERS = frozenset({"json_wrapper", "code_fence"})
"""The repairs whose wrapper closes after the patch (a JSON string parsed whole, a fence's closing
line): a patch taken out of one was not cut off, even without its End line."""
_RULES: list[tuple[str, Callable[[str], tuple[str, Repair] | None]]] = [
    ("byte_order_mark", _byte_order_mark),
    ("json_wrapper", _json_wrapper),
    ("code_fence", _code_fence),
    ("powershell_newlines", _powershell_newlines),
    ("decorated_marker", _decorated_markers),
    ("empty_section", _empty_sections),
    ("missing_begin_marker", _missing_begin),
    ("unified_in_envelope", _unified_in_envelope),
    ("missing_end_marker", _missing_end),
]


# -- what a refusal says of a shape not repaired -------------------------------------------------
def _why_not(text: str) -> str:
    """The cause of a text's refusal when it has a shape the rules above leave alone (its
    meaning is not determined), in a sentence the model can act on; "" otherwise."""
    stripped = text.strip(WHITESPACE)
    value = _json_value(stripped) if stripped[:1] in ("{", "[", '"') else _NOT_JSON
    if value is not _NOT_JSON:
        others = _other_keys(value)
        if others and _leads_to_patch(value, 0):
            named = ", ".join(others[:5]) + (" ..." if len(others) > 5 else "")
            return (f"The text is JSON holding a patch beside other keys ({named}): patchtx takes "
                    "the patch out of JSON only when every other key names or identifies the "
                    "tool call (name, id, type), since what another key asks (a dry run, a "
                    "check, a reverse, a path strip, another folder) would be lost, so it "
                    "applied nothing. Send the patch text itself, its paths relative to the "
                    "workspace root, and pass what the keys ask as the tool's own arguments.")
        command = _command_around_patch(value)
        if command:
            return (f"The text is JSON holding a shell command around the patch (\"{command}\"): "
                    "patchtx runs no command, and taking the patch out of it would lose what the "
                    "command says (a directory to change to, -p, -C, the text around the patch), "
                    "so it applied nothing. Send the patch text itself, its paths relative to "
                    "the workspace root.")
    if stripped[:1] in ("{", "[") or stripped.startswith('"*** '):
        return ("The text is JSON, not a patch (a tool call's arguments sent as the patch?); "
                "patchtx takes the patch out of JSON only when the JSON holds exactly one and "
                "every other key names or identifies the tool call. Send the patch text itself, "
                "starting with '*** Begin Patch'.")
    if "\n" not in stripped and "`n" in stripped:
        return ("The text is one line with PowerShell's `n where line breaks belong; patchtx reads "
                "`n as a line break only when every backtick in the text is `n, `r or `t. Send the "
                "patch with real line breaks.")
    first = stripped.split("\n", 1)[0].strip(WHITESPACE)
    if first.startswith("@@ ") or first == "@@":
        return ("The text starts with a hunk but names no file: write the file's header first "
                "('--- a/PATH' and '+++ b/PATH' before a unified hunk, or the envelope with "
                "'*** Update File: PATH').")
    lines = stripped.split("\n")
    if (first == BEGIN_PATCH and not any(line.strip(WHITESPACE) == END_PATCH for line in lines)
            and len(lines) > 1):
        last = text.rstrip(WHITESPACE).split("\n")
        return (f"The patch has no '*** End Patch' line: it may have been cut off after patch "
                f"line {len(last)} (\"{last[-1].rstrip(WHITESPACE)[:80]}\"), and what followed "
                "the cut (the rest of that line or section, other files) is not in it. patchtx "
                "closes a patch itself only when a wrapper around it ends after it (a closed code "
                "fence, a JSON string) and its last line is an unchanged line of the file that is "
                "not blank, which a cut cannot turn into another change; send the whole patch.")
    return ""
