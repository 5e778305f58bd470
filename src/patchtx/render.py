"""Plans and results as text: Codex's success summary, our summary line, unified diffs, JSON."""

from __future__ import annotations

from .model import ChangeKind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .errors import PatchtxError
    from .model import FileChange, Plan, Result
    from .txn.kept import HistoryEntry

STATUS_NAMES = {
    ChangeKind.ADD: "added",
    ChangeKind.UPDATE: "modified",
    ChangeKind.DELETE: "deleted",
    ChangeKind.MOVE: "moved",
}


def codex_summary(plan: Plan) -> str:
    """Codex's stdout on success: adds, then updates (moves by destination), then deletes."""
    groups: dict[str, list[str]] = {"A": [], "M": [], "D": []}
    for change in plan.changes:
        letter = "M" if change.kind in (ChangeKind.UPDATE, ChangeKind.MOVE) else change.kind.value
        groups[letter].append(change.spelled)
    lines = ["Success. Updated the following files:"]
    for letter in ("A", "M", "D"):
        lines.extend(f"{letter} {path}" for path in groups[letter])
    return "\n".join(lines) + "\n"


def _lines(data: bytes | None) -> list[bytes]:
    """Lines with their own endings, split on LF, CRLF and CR only, as the text model does (and as
    ``bytes.splitlines`` does, in C). Lines stay bytes: only the few shown in a diff are decoded."""
    return data.splitlines(keepends=True) if data else []


Edit = tuple[int, int, int, int]
_DIFFLIB_BUDGET = 4_000_000
"""Largest old×new line product handed to difflib; above it the changed middle is one edit."""


def _computed_edits(old: list[bytes], new: list[bytes]) -> list[Edit]:
    """Changed ranges of two line lists: difflib's when affordable, else the middle between the
    common prefix and suffix (linear, never slow, maybe not minimal)."""
    if len(old) * len(new) <= _DIFFLIB_BUDGET:
        import difflib

        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    if prefix == len(old) == len(new):
        return []
    return [(prefix, len(old) - suffix, prefix, len(new) - suffix)]


def _edits_fit(old: list[bytes], new: list[bytes], edits: list[Edit]) -> bool:
    """The matcher's ranges are in the text model's lines; re-splitting the bytes can merge a
    lone-CR line with a following empty LF line. Use the ranges only if every line outside them
    is the same on both sides (a C-speed slice comparison)."""
    old_at = new_at = 0
    for old_start, old_end, new_start, new_end in sorted(edits):
        if old_start - old_at != new_start - new_at or old[old_at:old_start] != new[new_at:new_start]:
            return False
        old_at, new_at = old_end, new_end
    return len(old) - old_at == len(new) - new_at and old[old_at:] == new[new_at:]


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


class _Side:
    """One side of a diff by line number; only the lines a hunk shows are made into text."""

    __slots__ = ("size", "_texts", "_endings", "_raw")

    def __init__(self, raw: list[bytes] | None = None, texts: Sequence[str] = (),
                 endings: Sequence[str] = ()) -> None:
        self._raw, self._texts, self._endings = raw, texts, endings
        self.size = len(raw) if raw is not None else len(texts)

    def reach(self, line: int, steps: int) -> int:
        """The line ``steps`` lines after ``line`` (before, if negative), within the file."""
        return min(self.size, line + steps) if steps > 0 else max(0, line + steps)

    def shown(self, start: int, stop: int) -> list[str]:
        if self._raw is not None:
            return [line.decode("utf-8", "replace") for line in self._raw[start:stop]]
        return list(map(str.__add__, self._texts[start:stop], self._endings[start:stop]))

    def block(self, prefix: str, start: int, stop: int) -> str:
        """``_block(prefix, self.shown(start, stop))``."""
        if start >= stop:
            return ""
        if self._raw is None:
            endings = self._endings[start:stop]
            if endings and endings.count("\n") == len(endings):
                # LF endings only (the rule): one join of the texts, no line made text + ending
                # (an identity test per line for the count).
                return prefix + ("\n" + prefix).join(self._texts[start:stop]) + "\n"
        return _block(prefix, self.shown(start, stop))


_NO_EOL = b"\n\\ No newline at end of file"


def _offset_hunks(before: bytes, after: bytes, edits: Sequence[Edit],
                  offsets: Sequence[Edit], context: int) -> str:
    """The hunks of a diff whose edits come with the byte offsets of their line bounds
    (``FileChange.edit_offsets``), as text that starts with a line break and ends without one.

    Lines are never split out: each block of lines with one prefix is one slice and one replace
    of the bytes, and the whole is decoded once (the same text as decoding each line: UTF-8
    resynchronises at every ASCII byte, and every piece starts and ends at one). The trick that
    makes a block one slice: both sides get a line break put in front, so that the bytes from a
    line's start offset to a later line's start offset are ``"\\n" + line + ... + "\\n" + line``,
    a break *before* every line, where the prefix goes; the break that ends the block's last line
    is the next block's first. A file's unterminated last line is the one exception.

    (The sides are never copied with that break in front: a copy of a 7.6 MB file costs 1-6 ms,
    most of it page faults in a fresh process. Offset ``i`` of the broken-in side is offset
    ``i - 1`` of the file, and its offset 0 is the break put in front.)"""
    old_size, new_size = len(before), len(after)
    old_open = old_size > 0 and before[-1] != 10  # last line without a break: "\ No newline" after it
    new_open = new_size > 0 and after[-1] != 10
    pairs = sorted(zip(edits, offsets, strict=True))
    out: list[bytes] = []

    def emit(side: bytes, start: int, stop: int, prefix: bytes, open_end: bool, size: int) -> None:
        """The block of ``side``'s lines from offset ``start`` to ``stop``, each after ``prefix``
        (a break and the diff mark); a last line without a break gets the "No newline" line."""
        end = size if open_end and stop == size else stop - 1
        block = side[start - 1:end] if start else b"\n" + side[:end]
        out.append(block.replace(b"\n", prefix))
        if end == size:
            out.append(_NO_EOL)

    count = len(pairs)
    index = 0
    while index < count:
        # One hunk: the edits whose gaps two context runs would cover.
        end = index + 1
        while end < count and pairs[end][0][0] - pairs[end - 1][0][1] <= 2 * context:
            end += 1
        first_edit, first_at = pairs[index]
        last_edit, last_at = pairs[end - 1]
        # Context bounds, a C-level find per line: in ``old`` the break before the line starting
        # at offset ``at`` is at index ``at``.
        lo_at, steps = first_at[0], context
        while steps and lo_at:
            lo_at = before.rfind(b"\n", 0, lo_at - 1) + 1
            steps -= 1
        old_lo = first_edit[0] - (context - steps)
        hi_at, steps = last_at[1], context
        while steps and hi_at < old_size:
            hi_at = before.find(b"\n", hi_at) + 1 or old_size
            steps -= 1
        old_hi = last_edit[1] + (context - steps)
        new_lo = first_edit[2] - (first_edit[0] - old_lo)
        new_hi = last_edit[3] + (old_hi - last_edit[1])
        if old_hi - old_lo > 1 and new_hi - new_lo > 1:
            out.append(b"\n@@ -%d,%d +%d,%d @@" % (old_lo + 1, old_hi - old_lo, new_lo + 1,
                                                   new_hi - new_lo))
        else:
            out.append(f"\n@@ -{_range(old_lo, old_hi)} +{_range(new_lo, new_hi)} @@".encode())
        cursor = lo_at
        for _edit, (old_start, old_end, new_start, new_end) in pairs[index:end]:
            if cursor < old_start:  # context: at the file's end only before an empty edit
                emit(before, cursor, old_start, b"\n ", old_open, old_size)
            if old_start < old_end:
                emit(before, old_start, old_end, b"\n-", old_open, old_size)
            if new_start < new_end:
                emit(after, new_start, new_end, b"\n+", new_open, new_size)
            cursor = old_end
        if cursor < hi_at:
            emit(before, cursor, hi_at, b"\n ", old_open, old_size)
        index = end
    return b"".join(out).decode("utf-8", "replace")


def _block(prefix: str, lines: list[str]) -> str:
    """Diff lines with one prefix, joined in C; every line but a file's last ends with a line
    break."""
    if not lines:
        return ""
    text = prefix + prefix.join(lines)
    if not lines[-1].endswith(("\n", "\r")):
        text += "\n\\ No newline at end of file\n"
    return text


def _whole_file(before: bytes | None, after: bytes | None) -> str | None:
    """The one hunk of a diff where one side has no lines (an add, a delete, a file emptied or
    filled), made by one decode and one replace; None when it is not that case, or when the
    file has CR line breaks (left to the line model's split)."""
    if before and after or not (before or after):
        return None
    data = before or after
    assert data is not None
    if b"\r" in data:
        return None
    size = data.count(b"\n") + (data[-1] != 10)
    prefix = "-" if before else "+"
    text = data.decode("utf-8", "replace")
    if before:
        ranges = f"@@ -{_range(0, size)} +0,0 @@\n{prefix}"
    else:
        ranges = f"@@ -0,0 +{_range(0, size)} @@\n{prefix}"
    if text[-1] == "\n":
        return ranges + text[:-1].replace("\n", "\n" + prefix) + "\n"
    return ranges + text.replace("\n", "\n" + prefix) + "\n\\ No newline at end of file\n"


def _git_mode(permissions: int | None) -> str:
    return "100755" if permissions is not None and permissions & 0o111 else "100644"


def _name_line(marker: str, name: str) -> str:
    """A ``---``/``+++`` line; git ends a name holding a space with a tab, so that a reader knows
    where it ends."""
    from .gitquote import quote

    quoted = quote(name)
    return f"{marker} {quoted}\t\n" if " " in quoted and not quoted.startswith('"') else f"{marker} {quoted}\n"


def git_header(change: FileChange) -> str:
    """The ``diff --git`` line and git's extended headers of one operation: new and deleted file
    modes, a mode change, a rename."""
    from .gitquote import quote

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
    """A git diff of one operation (``git apply`` takes it). Updates carry their changed ranges
    from the matcher, so even a 200,000-line file with thousands of hunks renders in linear
    time."""
    if change.copied_from is not None and change.overwrote is None:
        # Shown as git shows a copy: the edits made to the copied file.
        from ._record import replace

        change = replace(change, before=change.copied, source=change.copied_from)
    old_name = f"a/{change.source or change.path}" if change.before is not None else "/dev/null"
    new_name = f"b/{change.path}" if change.after is not None else "/dev/null"
    if change.kind is ChangeKind.ADD and change.overwrote is None and change.copied_from is None:
        old_name = "/dev/null"
    header = git_header(change)
    bare = header.count("\n") == 1  # a diff --git line alone is no change to git
    names = _name_line("---", old_name) + _name_line("+++", new_name)
    # The matcher's line numbers leave a byte-order mark out; here it is part of the first line.
    bom = (change.before or b"").startswith(b"\xef\xbb\xbf") or (change.after or b"").startswith(b"\xef\xbb\xbf")
    if change.edits is not None and change.edit_offsets is not None and not bom:
        if not change.edits:
            return "" if bare else header
        hunks = _offset_hunks(change.before or b"", change.after or b"", change.edits,
                              change.edit_offsets, context)
        return f"{header}{names[:-1]}{hunks}\n"
    whole = _whole_file(change.before, change.after)
    if whole is not None:
        return f"{header}{names}{whole}"
    decoded = change.lines
    old: _Side
    new: _Side
    if change.edits is not None and decoded is not None and not bom:
        edits = list(change.edits)
        old = _Side(texts=decoded.old_texts, endings=decoded.old_endings)
        new = _Side(texts=decoded.new_texts, endings=decoded.new_endings)
    else:
        old_raw, new_raw = _lines(change.before), _lines(change.after)
        if change.edits is not None and not bom and _edits_fit(old_raw, new_raw, list(change.edits)):
            edits = list(change.edits)
        else:
            edits = _computed_edits(old_raw, new_raw)
        old, new = _Side(old_raw), _Side(new_raw)
    if not edits:
        return "" if bare else header
    out = [header, names]
    group: list[Edit] = []
    groups: list[list[Edit]] = []
    for edit in sorted(edits):
        if group and edit[0] - group[-1][1] > 2 * context:
            groups.append(group)
            group = []
        group.append(edit)
    groups.append(group)
    for group in groups:
        old_lo = old.reach(group[0][0], -context)
        old_hi = old.reach(group[-1][1], context)
        new_lo = group[0][2] - (group[0][0] - old_lo)
        new_hi = group[-1][3] + (old_hi - group[-1][1])
        out.append(f"@@ -{_range(old_lo, old_hi)} +{_range(new_lo, new_hi)} @@\n")
        cursor = old_lo
        for old_start, old_end, new_start, new_end in group:
            out.append(old.block(" ", cursor, old_start))
            out.append(old.block("-", old_start, old_end))
            out.append(new.block("+", new_start, new_end))
            cursor = old_end
        out.append(old.block(" ", cursor, old_hi))
    return "".join(out)


def diff_texts(plan: Plan) -> list[str]:
    """The unified diff of each change of ``plan``, in order."""
    return [unified_diff(change) for change in plan.changes]


def file_entries(plan: Plan, *, with_diff: bool = True,
                 rendered: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per-file status entries; ``rendered`` is ``diff_texts(plan)`` when the caller has it already."""
    texts = (rendered if rendered is not None else diff_texts(plan)) if with_diff else None
    entries = []
    for index, change in enumerate(plan.changes):
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


def summary_line(result: Result) -> str:
    verb = "Would apply" if result.dry_run else "Applied"
    return f"{verb}: {result.plan.summary}\n"


def recovery_lines(result: Result) -> list[str]:
    """What the recovery that ran before the patch did (none: no lines)."""
    if result.recovery is None:
        return []
    return ["Before applying, " + line[0].lower() + line[1:] for line in result.recovery.summary.splitlines()]


def human_report(result: Result, *, diffs: bool = True, rendered: Sequence[str] | None = None,
                 max_files: int | None = None) -> str:
    """The summary line, one line per file, then (``diffs``) the diffs, taken from ``rendered``
    when the caller has rendered them already. Past ``max_files`` files the list ends with a
    count, so that the output stays proportional to what a person reads."""
    plan = result.plan
    lines = recovery_lines(result)
    lines.append(summary_line(result).rstrip("\n"))
    shown = plan.changes if max_files is None else plan.changes[:max_files]
    for change in shown:
        name = f"{change.source} -> {change.path}" if change.source else change.path
        if change.copied_from is not None:
            name += f" (copy of {change.copied_from})"
        lines.append(f"  {change.kind.value} {name}")
    if len(shown) < len(plan.changes):
        rest = len(plan.changes) - len(shown)
        lines.append(f"  ... and {rest:,} more file{'s' if rest != 1 else ''} (--stat or --json lists them all)")
    text = "\n".join(lines) + "\n"
    if diffs:
        text += "".join(rendered if rendered is not None else map(unified_diff, plan.changes))
    return text


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


def _line_counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by one rendered unified diff (its headers, ``rename from``,
    ``---``, ``+++`` and the like, are before its first hunk and not counted)."""
    added = removed = 0
    in_hunks = False
    for line in diff.splitlines():
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
    from .gitquote import quote

    texts = rendered if rendered is not None else diff_texts(plan)
    counts = [_line_counts(text) for text in texts]
    names = [quote(change.path) for change in plan.changes]
    width = max([len(name) for name in names]
                + [len(quote(c.source)) for c in plan.changes if c.source], default=0)
    most = max((added + removed for added, removed in counts), default=0)
    lines = []
    for name, (added, removed) in zip(names, counts, strict=True):
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
        lines.append(f" {name:<{shown_width}} |{added + removed:5d} {'+' * plus}{'-' * minus}")
    files = len(plan.changes)
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


def result_json(result: Result, *, with_diff: bool = True,
                rendered: Sequence[str] | None = None) -> dict[str, Any]:
    """The one machine-readable result shape (``docs/result.schema.json``) for a success: every
    key always present, ``error`` null; an undo adds ``undone``."""
    plan = result.plan
    out: dict[str, Any] = {
        "ok": True,
        "dry_run": result.dry_run,
        "summary": plan.summary,
        "counts": plan.summary_counts(),
        "files": file_entries(plan, with_diff=with_diff, rendered=rendered),
        "transaction": result.transaction_id,
        "recovered": None if result.recovery is None else [t.to_json() for t in result.recovery.transactions],
        "intent": plan.intent,
        "error": None,
    }
    for key in ("undone", "redone"):
        if key in result.extra:
            out[key] = result.extra[key]
    return out


def result_schema() -> dict[str, Any]:
    """The JSON Schema of the result shape (``docs/result.schema.json``; shipped in the package)."""
    import json
    from importlib import resources

    schema: dict[str, Any] = json.loads(
        resources.files("patchtx").joinpath("result.schema.json").read_text(encoding="utf-8"))
    return schema


def log_text(entries: Sequence[HistoryEntry]) -> str:
    """``patchtx log``'s lines: id, local time, summary, bytes of originals kept, intent."""
    if not entries:
        return "The undo history is empty.\n"
    from datetime import datetime

    lines = []
    for entry in entries:
        when = datetime.fromisoformat(entry.committed_at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        intent = f"  {entry.intent}" if entry.intent else ""
        lines.append(f"{entry.transaction_id}  {when}  {entry.summary}  {_size(entry.bytes):>9}{intent}\n")
    return "".join(lines)


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
        "error": error.to_json(root),
    }
