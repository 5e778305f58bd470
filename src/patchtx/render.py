"""Plans as text: unified diffs, the diffstat, each file's JSON entry, errors and the undo history
as text and JSON. (A result's report and JSON are ``result``'s; Codex's success text is the
drop-in's, in ``cli``.)"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

from ._record import replace
from .formats.gitquote import quote
from .model import ChangeKind
from .place.rewrite import common_ends
from .place.textfile import looks_binary

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .errors import PatchtxError
    from .model import FileChange, Plan
    from .place.rewrite import Edit
    from .txn.kept import HistoryEntry

STATUS_NAMES = {
    ChangeKind.ADD: "added",
    ChangeKind.UPDATE: "modified",
    ChangeKind.DELETE: "deleted",
    ChangeKind.MOVE: "moved",
}


_DIFFLIB_BUDGET = 4_000_000
"""Largest old×new line product handed to difflib; above it the changed middle is one edit."""

_NO_NEWLINE = b"\n\\ No newline at end of file\n"

_STEPS = 8
"""Lines ``_Side.start_after`` steps one by one; a longer way costs less jumped and counted."""


class _Side:
    """One side of a diff: its bytes, and the steps from one line start to another. A line ends
    with an LF, as git reads lines: a CR is part of its line (a CRLF line is shown with its CR, a
    lone CR does not end a line, though the text model splits there: ``git apply`` reads the
    diff's lines at LFs only); the last line may have no break. Only the lines a hunk shows are
    ever found."""

    __slots__ = ("data", "size", "_average")

    def __init__(self, data: bytes) -> None:
        self.data, self.size = data, len(data)
        self._average = 0.0

    def line_start(self, at: int) -> int:
        """The start of the line that holds byte ``at``."""
        return self.data.rfind(b"\n", 0, at) + 1

    def forward(self, at: int, lines: int) -> tuple[int, int]:
        """Up to ``lines`` lines on from the line start ``at``: the line start reached and the
        lines stepped (fewer at the end)."""
        stepped, size, data = 0, self.size, self.data
        while stepped < lines and at < size:
            at = data.find(b"\n", at) + 1 or size
            stepped += 1
        return at, stepped

    def back(self, at: int, lines: int) -> tuple[int, int]:
        """Up to ``lines`` lines back from the line start ``at``: the line start reached and the
        lines stepped (fewer at the start)."""
        stepped, data = 0, self.data
        while stepped < lines and at > 0:
            at = data.rfind(b"\n", 0, at - 1) + 1
            stepped += 1
        return at, stepped

    def breaks(self, start: int, stop: int) -> int:
        """The line breaks between two line starts."""
        return self.data.count(b"\n", start, stop)

    def line_count(self) -> int:
        return self.breaks(0, self.size) + (self.size > 0 and self.data[-1] != 10)

    def is_line_start(self, at: int) -> bool:
        """Whether a line starts at ``at`` (after a break)."""
        return at == 0 or at == self.size or self.data[at - 1] == 10

    def lines(self) -> list[bytes]:
        """Every line, with its break."""
        lines = self.data.split(b"\n")
        last = lines.pop()
        return [line + b"\n" for line in lines] + ([last] if last else [])

    def has_lone_cr(self) -> bool:
        """Whether a CR ends a line of the text model that is no line of git's."""
        data = self.data
        return b"\r" in data and data.count(b"\r") != data.count(b"\r\n")

    def start_after(self, at: int, lines: int) -> int | None:
        """The start of the line ``lines`` lines after the one that starts at ``at``, or None past
        the end. A long way is jumped: by the side's average line length, counting the breaks
        jumped over, then stepping the rest of the way."""
        if lines > _STEPS and at < self.size:
            if not self._average:  # from the lines of the first 64 KiB: a guess is enough
                sample = self.line_start(min(self.size - 1, 65536))
                self._average = sample / self.breaks(0, sample) if sample else float(self.size)
            jump = self.line_start(min(self.size - 1, at + int(lines * self._average)))
            passed = self.breaks(at, jump)
            if passed > lines:
                jump, _ = self.back(jump, passed - lines)
                passed = lines
            at, lines = jump, lines - passed
        reached, stepped = self.forward(at, lines)
        return reached if stepped == lines else None

    def block(self, out: list[bytes], mark: bytes, start: int, stop: int) -> None:
        """Append the lines from line start ``start`` to ``stop``, each after ``mark``; a last line
        without a break is followed by git's "No newline at end of file" line."""
        data = self.data
        out.append(mark)
        if data[stop - 1] == 10:  # a mark after every LF but the last
            out.append(data[start : stop - 1].replace(b"\n", b"\n" + mark))
            out.append(b"\n")
        else:
            out.append(data[start:stop].replace(b"\n", b"\n" + mark))
            out.append(_NO_NEWLINE)


def _computed_edits(old: list[bytes], new: list[bytes]) -> list[Edit]:
    """Changed ranges of two line lists: difflib's when affordable, else the middle between the
    common prefix and suffix (linear, never slow, maybe not minimal)."""
    if len(old) * len(new) <= _DIFFLIB_BUDGET:
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    head, tail = common_ends(old, new)
    if head == len(old) == len(new):
        return []
    return [(head, len(old) - tail, head, len(new) - tail)]


def _locate(old: _Side, new: _Side, edits: Sequence[Edit]) -> list[Edit] | None:
    """The byte offsets of the edits' line bounds, found by walking both sides; None when the
    edits do not describe these bytes: they overlap or run past the end, or the lines outside them
    differ."""
    offsets: list[Edit] = []
    old_at = new_at = old_line = new_line = 0
    for old_start, old_end, new_start, new_end in sorted(edits):
        if (old_start < old_line or old_start - old_line != new_start - new_line
                or old_end < old_start or new_end < new_start):
            return None
        old_from = old.start_after(old_at, old_start - old_line)
        if old_from is None:
            return None
        new_from = new_at + old_from - old_at  # the same lines, the same bytes
        if old.data[old_at:old_from] != new.data[new_at:new_from] or not new.is_line_start(new_from):
            return None
        old_to = old.start_after(old_from, old_end - old_start)
        new_to = new.start_after(new_from, new_end - new_start)
        if old_to is None or new_to is None:
            return None
        offsets.append((old_from, old_to, new_from, new_to))
        old_at, new_at, old_line, new_line = old_to, new_to, old_end, new_end
    return offsets if old.data[old_at:] == new.data[new_at:] else None


def _located_edits(change: FileChange, old: _Side, new: _Side) -> tuple[Sequence[Edit], Sequence[Edit]]:
    """The changed line ranges of an operation and the byte offsets of their bounds: the planner's
    own when its byte path found them; one range over everything when a side has no lines (an
    add, a delete, a file emptied or filled); the planner's ranges located in the bytes when they
    describe them; else difflib's ranges of the two sides' lines. Lines are git's (see ``_Side``):
    with a lone CR on either side, the planner's ranges count other lines and are not used."""
    # The planner counts the text model's lines; they are git's unless a lone CR splits one.
    planned = None if old.has_lone_cr() or new.has_lone_cr() else change.edits
    if planned is not None and change.edit_offsets is not None:
        return planned, change.edit_offsets
    if not old.size or not new.size:
        old_lines, new_lines = old.line_count(), new.line_count()
        if not (old_lines or new_lines):
            return [], []
        return [(0, old_lines, 0, new_lines)], [(0, old.size, 0, new.size)]
    if planned is not None:
        offsets = _locate(old, new, planned)
        if offsets is not None:
            return planned, offsets
    edits = _computed_edits(old.lines(), new.lines())
    located = _locate(old, new, edits)
    assert located is not None  # ranges of the byte lines themselves always describe them
    return edits, located


def _hunk_header(old_lo: int, old_hi: int, new_lo: int, new_hi: int) -> bytes:
    """``@@ -first,count +first,count @@`` for two line ranges, as git writes it: 1-based, a count
    of one left out, an empty range named by the line before it."""
    if old_hi - old_lo > 1 and new_hi - new_lo > 1:  # the common case, in one format
        return b"@@ -%d,%d +%d,%d @@\n" % (old_lo + 1, old_hi - old_lo, new_lo + 1, new_hi - new_lo)
    return b"@@ -%b +%b @@\n" % (_range(old_lo, old_hi), _range(new_lo, new_hi))


def _range(start: int, stop: int) -> bytes:
    length = stop - start
    if length == 1:
        return b"%d" % (start + 1)
    return b"%d,%d" % (start + 1 if length else start, length)


def _hunks(old: _Side, new: _Side, edits: Sequence[Edit], offsets: Sequence[Edit], context: int) -> str:
    """The hunks of a diff, given each edit's line range and the byte offsets of its bounds. Edits
    whose gap two runs of ``context`` lines would cover share a hunk. Each run of lines with one
    mark is one slice of the bytes, and the whole is decoded once, invalid UTF-8 shown as
    U+FFFD (the same text as decoding line by line: UTF-8 resynchronises at every line break)."""
    pairs = sorted(zip(edits, offsets, strict=True))
    out: list[bytes] = []
    index, count = 0, len(pairs)
    while index < count:
        end = index + 1
        while end < count and pairs[end][0][0] - pairs[end - 1][0][1] <= 2 * context:
            end += 1
        (first, first_at), (last, last_at) = pairs[index], pairs[end - 1]
        lo_at, before = old.back(first_at[0], context)
        hi_at, after = old.forward(last_at[1], context)
        out.append(_hunk_header(first[0] - before, last[1] + after, first[2] - before, last[3] + after))
        cursor = lo_at
        for _edit, (old_start, old_end, new_start, new_end) in pairs[index:end]:
            if cursor < old_start:
                old.block(out, b" ", cursor, old_start)
            if old_start < old_end:
                old.block(out, b"-", old_start, old_end)
            if new_start < new_end:
                new.block(out, b"+", new_start, new_end)
            cursor = old_end
        if cursor < hi_at:
            old.block(out, b" ", cursor, hi_at)
        index = end
    return b"".join(out).decode("utf-8", "replace")


def _git_mode(permissions: int | None) -> str:
    return "100755" if permissions is not None and permissions & 0o111 else "100644"


def _name_line(marker: str, name: str) -> str:
    """A ``---``/``+++`` line; git ends a name holding a space with a tab, so that a reader knows
    where it ends."""
    quoted = quote(name)
    return f"{marker} {quoted}\t\n" if " " in quoted and not quoted.startswith('"') else f"{marker} {quoted}\n"


def git_header(change: FileChange) -> str:
    """The ``diff --git`` line and git's extended headers of one operation: new and deleted file
    modes, a mode change, a rename."""
    old_path = change.source or change.copied_from or change.path
    lines = [f"diff --git {quote('a/' + old_path)} {quote('b/' + change.path)}"]
    if change.kind is ChangeKind.ADD and change.overwrote is None and change.copied_from is None:
        lines.append(f"new file mode {_git_mode(change.new_mode)}")
    elif change.kind is ChangeKind.DELETE:
        lines.append(f"deleted file mode {_git_mode(change.old_mode)}")
    elif (change.old_mode is not None and change.new_mode is not None
          and _git_mode(change.old_mode) != _git_mode(change.new_mode)):
        lines += [f"old mode {_git_mode(change.old_mode)}", f"new mode {_git_mode(change.new_mode)}"]
    if change.kind is ChangeKind.MOVE:
        lines += [f"rename from {quote(old_path)}", f"rename to {quote(change.path)}"]
    elif change.copied_from is not None:
        lines += [f"copy from {quote(old_path)}", f"copy to {quote(change.path)}"]
    return "\n".join(lines) + "\n"


def unified_diff(change: FileChange, context: int = 3) -> str:
    """A git diff of one operation (``git apply`` takes it), rendered from both sides' bytes and
    where each changed line range starts and ends in them. No side is split into lines or decoded
    whole: what a diff costs follows the lines it shows (a 200,000-line file with thousands of
    hunks is the case this serves). The planner's byte path hands over the offsets; for any other
    change they are found in the bytes."""
    if change.copied_from is not None and change.overwrote is None:
        # Shown as git shows a copy: the edits made to the copied file.
        change = replace(change, before=change.copied, source=change.copied_from)
    old_name = f"a/{change.source or change.path}" if change.before is not None else "/dev/null"
    new_name = f"b/{change.path}" if change.after is not None else "/dev/null"
    if change.kind is ChangeKind.ADD and change.overwrote is None and change.copied_from is None:
        old_name = "/dev/null"
    header = git_header(change)
    if change.before != change.after and looks_binary(change.before or change.after or b""):
        from .formats.gitbinary import binary_diff  # (off a one-line edit's path)

        return header + binary_diff(change.before, change.after)  # (as git diff --binary)
    old, new = _Side(change.before or b""), _Side(change.after or b"")
    edits, offsets = _located_edits(change, old, new)
    if not edits:
        return "" if header.count("\n") == 1 else header  # a diff --git line alone is no change to git
    names = _name_line("---", old_name) + _name_line("+++", new_name)
    return header + names + _hunks(old, new, edits, offsets, context)


def diff_texts(plan: Plan) -> list[str]:
    """The unified diff of each file of ``plan`` (``Plan.files``), in order."""
    return [unified_diff(change) for change in plan.files]


def diffs_within(plan: Plan, limit: int) -> str | None:
    """``plan``'s diffs joined when they are at most ``limit`` lines, else None, found without
    rendering past the limit: a change whose planned line ranges alone change more lines than
    ``limit`` is not rendered at all (a 20,000-hunk patch would spend a tenth of its time on a
    diff nobody is shown)."""
    texts: list[str] = []
    lines = 0
    for change in plan.files:
        if change.edits is not None and \
                sum(old_end - old_start + new_end - new_start
                    for old_start, old_end, new_start, new_end in change.edits) > limit - lines:
            return None
        text = unified_diff(change)
        lines += text.count("\n")
        if lines > limit:
            return None
        texts.append(text)
    return "".join(texts)


def file_entries(plan: Plan, *, with_diff: bool = True,
                 rendered: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per-file status entries; ``rendered`` is ``diff_texts(plan)`` when the caller has it already."""
    texts = (rendered if rendered is not None else diff_texts(plan)) if with_diff else None
    entries = []
    for index, change in enumerate(plan.files):
        entry: dict[str, Any] = {"path": change.path, "status": STATUS_NAMES[change.kind]}
        if change.source is not None:
            entry["from"] = change.source
        if change.copied_from is not None:
            entry["copied_from"] = change.copied_from
        if (change.old_mode is not None and change.new_mode is not None
                and _git_mode(change.old_mode) != _git_mode(change.new_mode)):
            entry["old_mode"], entry["new_mode"] = _git_mode(change.old_mode), _git_mode(change.new_mode)
        if texts is not None:
            entry["diff"] = texts[index]
        entries.append(entry)
    return entries


def shown_path(path: str) -> str:
    """``path`` for a terminal: as it is when every character prints, else quoted as git quotes it
    (a CR, an escape sequence or a right-to-left override in a name a patch chose could otherwise
    overwrite or disguise the line that reports it)."""
    if path.isprintable():
        return path
    return quote(path)


_BOLD, _GREEN, _RED, _CYAN = "\033[1m", "\033[32m", "\033[31m", "\033[36m"
_COLOURS = (("+++", _BOLD), ("---", _BOLD), ("+", _GREEN), ("-", _RED), ("@@", _CYAN))


def coloured_diff(text: str) -> str:
    """Git diff text with git's default colours: the header of each file (``diff --git`` to its
    first ``@@``, modes, renames and copies included) bold, additions green, removals red, hunk
    headers cyan. Inside hunks a removed line that starts with ``--`` stays red."""
    out = []
    in_header: bool | None = None  # None: no diff --git line yet (text before the diffs)
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git "):
            in_header = True
        if in_header is None:
            colour = next((code for prefix, code in _COLOURS if line.startswith(prefix)), None)
        elif line.startswith("@@"):
            in_header, colour = False, _CYAN
        elif in_header:
            colour = _BOLD
        else:
            colour = _GREEN if line.startswith("+") else _RED if line.startswith("-") else None
        if colour is None:
            out.append(line)
        else:
            body = line.rstrip("\r\n")
            out.append(f"{colour}{body}\033[0m{line[len(body):]}")
    return "".join(out)


_BINARY = "\nGIT binary patch\n"
"""What a rendered diff of a binary change holds (``gitbinary.binary_diff``)."""


def _line_counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by one rendered unified diff (its headers, ``rename from``,
    ``---``, ``+++`` and the like, are before its first hunk and not counted)."""
    added = removed = 0
    in_hunks = False
    # Split at LF only, as git reads the diff: str.splitlines also splits at a CR, a form feed or
    # U+2028 inside a line, and a '-' or '+' after one was counted as a line of its own.
    for line in diff.split("\n"):
        if not in_hunks:
            in_hunks = line.startswith("@@")
        elif line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed


def diffstat(plan: Plan, rendered: Sequence[str] | None = None) -> str:
    """What ``git apply --stat`` prints for the same change: `` name | count +++--`` per
    operation (names and bars scaled as git scales them for 80 columns), then the totals line."""
    texts = rendered if rendered is not None else diff_texts(plan)
    counts = [_line_counts(text) for text in texts]
    names = [quote(change.path) for change in plan.files]
    width = max([len(name) for name in names]
                + [len(quote(c.source)) for c in plan.files if c.source], default=0)
    most = max((added + removed for added, removed in counts), default=0)
    lines = []
    for name, (added, removed), text in zip(names, counts, texts, strict=True):
        shown_width = min(width, 50)
        if len(name) > shown_width:
            cut = len(name) + 3 - shown_width
            slash = name.find("/", cut)
            name = "..." + name[slash if slash >= 0 else cut:]
        bar = 70 - shown_width if shown_width + most > 70 else most
        plus, minus = added, removed
        if most > 0:
            total = ((added + removed) * bar + most // 2) // most
            plus = (added * bar + most // 2) // most
            minus = total - plus
        if _BINARY in text:  # (as git apply --stat shows a binary patch)
            lines.append(f" {name:<{shown_width}} |  Bin")
            continue
        lines.append(f" {name:<{shown_width}} |{added + removed:5d} {'+' * plus}{'-' * minus}")
    files = len(plan.files)
    inserted = sum(added for added, _ in counts)
    deleted = sum(removed for _, removed in counts)
    if not files:
        return " 0 files changed\n"
    totals = f" {files} file{'s' if files != 1 else ''} changed"
    if inserted or not deleted:
        totals += f", {inserted} insertion{'s' if inserted != 1 else ''}(+)"
    if deleted or not inserted:
        totals += f", {deleted} deletion{'s' if deleted != 1 else ''}(-)"
    return "\n".join([*lines, totals]) + "\n"


def numstat(plan: Plan, rendered: Sequence[str] | None = None) -> str:
    """What ``git apply --numstat`` prints: ``added<TAB>removed<TAB>name`` per operation."""
    texts = rendered if rendered is not None else diff_texts(plan)
    return "".join(("-\t-" if _BINARY in text else f"{added}\t{removed}") + f"\t{quote(change.path)}\n"
                   for change, (added, removed), text
                   in zip(plan.files, map(_line_counts, texts), texts, strict=True))


def _similarity(change: FileChange) -> int:
    """A rename's or copy's similarity in percent, as git's ``similarity index`` gives it (a
    patch that does not say is measured: the share of lines the two sides have in common)."""
    before = change.copied if change.copied_from is not None else change.before
    if before == change.after:
        return 100
    old, new = (before or b"").splitlines(), (change.after or b"").splitlines()
    return int(difflib.SequenceMatcher(None, old, new, autojunk=False).ratio() * 100)


def change_summary(plan: Plan) -> str:
    """What ``git apply --summary`` prints: creations, deletions, renames, copies and mode
    changes, one line each (a change of content alone prints nothing)."""
    lines = []
    for change in plan.files:
        if change.source is not None or change.copied_from is not None:
            old_name = quote(change.source if change.source is not None else str(change.copied_from))
            new_name = quote(change.path)
            what = "rename" if change.source is not None else "copy"
            # git folds the directories the two names share: rename dir/{a => b} (100%).
            common = 0
            while True:
                old_slash, new_slash = old_name.find("/", common), new_name.find("/", common)
                if old_slash < 0 or old_slash != new_slash or old_name[:old_slash] != new_name[:new_slash]:
                    break
                common = old_slash + 1
            score = _similarity(change)
            if common:
                lines.append(f" {what} {old_name[:common]}{{{old_name[common:]} => {new_name[common:]}}} ({score}%)")
            else:
                lines.append(f" {what} {old_name} => {new_name} ({score}%)")
            if change.copied_from is not None:
                continue
        elif change.kind is ChangeKind.ADD:
            lines.append(f" create mode {_git_mode(change.new_mode)} {quote(change.path)}")
            continue
        elif change.kind is ChangeKind.DELETE:
            lines.append(f" delete mode {_git_mode(change.old_mode)} {quote(change.path)}")
            continue
        if (change.old_mode is not None and change.new_mode is not None
                and _git_mode(change.old_mode) != _git_mode(change.new_mode)):
            name = "" if change.source is not None else f" {quote(change.path)}"
            lines.append(f" mode change {_git_mode(change.old_mode)} => {_git_mode(change.new_mode)}{name}")
    return "".join(line + "\n" for line in lines)


def result_schema() -> dict[str, Any]:
    """The JSON Schema of the result shape (``docs/result.schema.json``; shipped in the package)."""
    import importlib.resources  # (off a one-line edit's path)

    schema: dict[str, Any] = json.loads(
        importlib.resources.files("patchtx").joinpath("result.schema.json").read_text(encoding="utf-8"))
    return schema


def log_json(entries: Sequence[HistoryEntry], untrusted: Sequence[str]) -> dict[str, Any]:
    """``patchtx log --json`` and the MCP ``log`` tool's JSON: ``{"ok": true, "transactions":
    [...]}``, each with the ``paths`` it changed, and ``untrusted``: kept journals this user's
    patchtx did not sign (never undone), when there are any."""
    payload: dict[str, Any] = {"ok": True, "transactions": [entry.to_json() for entry in entries]}
    if untrusted:
        payload["untrusted"] = list(untrusted)
    return payload


def log_text(entries: Sequence[HistoryEntry]) -> str:
    """``patchtx log``'s lines: id, local time, summary, bytes of originals kept, intent; then
    the files it changed (the first few), indented."""
    from datetime import datetime  # (off a one-line edit's path)

    if not entries:
        return "The undo history is empty.\n"
    lines = []
    for entry in entries:
        when = datetime.fromisoformat(entry.committed_at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        # (an intent is a model's text: a terminal escape in it is shown, as in a path, not obeyed)
        intent = f"  {shown_path(entry.intent)}" if entry.intent else ""
        lines.append(f"{entry.transaction_id}  {when}  {shown_path(entry.summary)}  {_size(entry.bytes):>9}{intent}\n")
        named = ", ".join(shown_path(path) for path in entry.paths[:_LOGGED_PATHS])
        more = len(entry.paths) - _LOGGED_PATHS
        lines.append(f"    {named}{f' and {more:,} more' if more > 0 else ''}\n")
    return "".join(lines)


_LOGGED_PATHS = 5
"""Files named per transaction by ``log_text``."""


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    value = count / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def error_json(error: PatchtxError, *, root: str | None = None, dry_run: bool = False) -> dict[str, Any]:
    """The same shape for a refusal: ``ok`` false, nothing planned, the error object (its path
    relative to the workspace ``root``)."""
    return {
        "ok": False,
        "dry_run": dry_run,
        "summary": None,
        "counts": None,
        "files": [],
        "transaction": None,
        "recovered": None,
        "intent": None,
        "repairs": [],
        "syntax": error.details.get("syntax"),
        "verify": error.details.get("verify"),
        "error": error.to_json(root),
    }
