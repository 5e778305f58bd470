"""The damage hunt (issue 37): real edits of real files, written as a clean Codex patch, then damaged
the way models damage patches, alone and in pairs; each run of patchtx (and of Codex's binary
beside it) is classified against the intent: ``intended`` (the real edit written), ``refused``
(an error, nothing written) or ``wrong`` (anything else: a success that is not the real edit).

**The oracle** is independent of patchtx (nothing is imported from it) and brute force. A damaged
case is *determined* when the damaged text has exactly one reading consistent with the file: each
damage applied admits a set of readings of the text (``READINGS``: a whole hunk shifted by any
offset, any one context line stale, any order of the hunks, a line number or trailing white space
or a lost space taken off or kept, ...), the literal text always among them, and every reading is
placed by exact matching, every placement enumerated (``results``): the case is determined when
all the readings' placements make one file, which is then the real edit. A text cut short
(``truncate``) admits any ending, so it is never determined. Runs are counted separately on
determined and undetermined cases; on either, a success that is not the real edit is ``wrong``.

Base edits come from git history (``--repo``: a fetched repository, each modified text file of a
commit whose change is small) or from the replay corpus (``--replay``: this project's own history,
tests/replay/cases). Third-party files are read from the mirrors at run time, never committed.

    .venv/bin/python benchmarks/damage_hunt.py --repo /work/.mirror/pallets+click/repo \\
        --repo /work/.mirror/psf+requests/repo --edits 60 --pairs 8 [--codex] [--markdown]
    .venv/bin/python benchmarks/damage_hunt.py --replay tests/replay/cases --edits 200

tests/intake/test_damage_hunt.py runs it on the replay corpus (a small count by default, the full
count under ``--full-examples``) and asserts that no run is wrong.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import itertools
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

EXTENSIONS = (".py", ".js", ".ts", ".rs", ".md", ".yml", ".yaml", ".toml", ".json", ".rst", ".txt",
              ".sh", ".cfg", ".html", ".css")
MAX_BYTES = 40_000
MAX_CHANGED = 40
MAX_HUNKS = 4


# ---------------------------------------------------------------------------- base edits
@dataclass(frozen=True)
class Edit:
    source: str  # "owner/name@commit:path"
    path: str
    before: str
    after: str


def _usable(before: str, after: str) -> bool:
    if before == after or not before or not after:
        return False
    if "\r" in before or "\r" in after or not before.endswith("\n") or not after.endswith("\n"):
        return False
    if len(before) > MAX_BYTES or "\x00" in before:
        return False
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
    groups = list(matcher.get_grouped_opcodes(3))
    return 0 < changed <= MAX_CHANGED and len(groups) <= MAX_HUNKS


def edits_from_git(mirror: str, limit: int, scan: int = 3000) -> Iterator[Edit]:
    """Up to ``limit`` edits of modified text files from the newest ``scan`` commits of a git
    repository, spread over them (every k-th usable file change)."""
    label = Path(mirror).parent.name.replace("+", "/") if Path(mirror).name == "repo" else Path(mirror).name
    log = subprocess.run(["git", "-C", mirror, "log", "--no-merges", "--diff-filter=M", "--name-only",
                          "--format=@%H %P", f"-n{scan}", "HEAD"], capture_output=True, text=True,
                         check=True, errors="replace").stdout
    changes: list[tuple[str, str, str]] = []
    commit = parent = ""
    for line in log.splitlines():
        if line.startswith("@"):
            shas = line[1:].split()
            commit, parent = shas[0], (shas[1] if len(shas) > 1 else "")
        elif line and parent and line.endswith(EXTENSIONS):
            changes.append((commit, parent, line))
    batch = subprocess.Popen(["git", "-C", mirror, "cat-file", "--batch"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert batch.stdin is not None and batch.stdout is not None

    def blob(spec: str) -> str | None:
        batch.stdin.write(spec.encode() + b"\n")  # type: ignore[union-attr]
        batch.stdin.flush()  # type: ignore[union-attr]
        header = batch.stdout.readline().split()  # type: ignore[union-attr]
        if len(header) < 3:
            return None
        data = batch.stdout.read(int(header[2]))  # type: ignore[union-attr]
        batch.stdout.read(1)  # type: ignore[union-attr]
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    rng = random.Random(label)
    rng.shuffle(changes)
    found = 0
    seen_paths: Counter[str] = Counter()
    try:
        for commit, parent, path in changes:
            if found >= limit:
                break
            if seen_paths[path] >= 3:  # (spread over the repository's files)
                continue
            before, after = blob(f"{parent}:{path}"), blob(f"{commit}:{path}")
            if before is None or after is None or not _usable(before, after):
                continue
            seen_paths[path] += 1
            found += 1
            yield Edit(f"{label}@{commit[:10]}:{path}", path, before, after)
    finally:
        batch.stdin.close()
        batch.wait()


def edits_from_replay(folder: Path) -> Iterator[Edit]:
    """The edits of the replay corpus (this project's own history: tests/replay/cases)."""
    for case_path in sorted(folder.glob("*.json.gz")):
        with gzip.open(case_path, "rb") as data:
            case = json.loads(data.read())
        for path, before in sorted(case["before"].items()):
            after = case["after"].get(path)
            if after is not None and path.endswith(EXTENSIONS) and _usable(before, after):
                yield Edit(f"{case['repo']}@{case['commit'][:10]}:{path}", path, before, after)


# ---------------------------------------------------------------------------- the patch as written
@dataclass
class Hunk:
    """A section as written: its header line, its body lines as written (prefix and text), and
    whether ``*** End of File`` follows it."""

    header: str
    body: list[str]
    eof: bool = False
    origin: int = 0  # which hunk of the clean patch it is (for its line numbers)


@dataclass
class Written:
    """A Codex patch of one file as written, before any text-level damage."""

    path: str
    hunks: list[Hunk]
    pre: list[str] = field(default_factory=list)  # lines between the Update line and the first @@


def render(written: Written) -> str:
    out = ["*** Begin Patch", f"*** Update File: {written.path}", *written.pre]
    for hunk in written.hunks:
        out += [hunk.header, *hunk.body] + (["*** End of File"] if hunk.eof else [])
    return "\n".join([*out, "*** End Patch"]) + "\n"


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _enclosing(lines: list[str], first: int, floor: int) -> int | None:
    """The nearest line above ``first`` (not above ``floor``) less indented than the first
    non-blank line from ``first`` on: the function or block a hunk is in."""
    here = next((lines[i] for i in range(first, len(lines)) if lines[i].strip()), "")
    level = _indent(here)
    for i in range(first - 1, floor - 1, -1):
        if lines[i].strip() and _indent(lines[i]) < level:
            return i
    return None


def clean_patch(edit: Edit, rng: random.Random) -> tuple[Written, list[tuple[int, int]]] | None:
    """The edit as a Codex patch with some context and, at times, anchors; with each hunk's
    (old start, new start), 0-based. None when no such patch is determined on the file."""
    old, new = split(edit.before), split(edit.after)
    for context, anchors in ((rng.choice([1, 2, 3]), rng.random() < 0.5), (3, True), (5, True)):
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        hunks, starts, previous_end = [], [], 0
        for group in matcher.get_grouped_opcodes(context):
            i1, j1, i2 = group[0][1], group[0][3], group[-1][2]
            body = []
            for tag, a1, a2, b1, b2 in group:
                if tag == "equal":
                    body += [" " + line for line in old[a1:a2]]
                else:
                    body += ["-" + line for line in old[a1:a2]] + ["+" + line for line in new[b1:b2]]
            header = "@@"
            if anchors:
                at = _enclosing(old, i1, previous_end)
                if at is not None and old[at] == old[at].rstrip() and old[at] not in old[previous_end:at]:
                    header = "@@ " + old[at]
            hunks.append(Hunk(header, body, eof=i2 == len(old) and rng.random() < 0.5, origin=len(hunks)))
            starts.append((i1, j1))
            previous_end = i2
        written = Written(edit.path, hunks)
        if hunks and results(old, read_clean(written), 2) == {edit.after}:
            return written, starts
    return None


# ---------------------------------------------------------------------------- damage
TEXT_KINDS = ("no_begin_end", "crlf", "truncate", "json", "fence")
"""Damage done to the text around the hunks, in the order it is done (after the others)."""


def _pick(rng: random.Random, hunks: list[Hunk]) -> list[Hunk]:
    return hunks if len(hunks) == 1 or rng.random() < 0.5 else [rng.choice(hunks)]


def _body_text(line: str) -> str:
    return line[1:] if line[:1] in (" ", "+", "-") else line


def lost_space(w: Written, rng: random.Random, starts: list[tuple[int, int]]) -> bool:
    """Context lines written without their leading space."""
    changed = False
    for hunk in _pick(rng, w.hunks):
        for i, line in enumerate(hunk.body):
            if line.startswith(" "):
                hunk.body[i] = line[1:]
                changed = True
    return changed


def reindent(w: Written, rng: random.Random, starts: list[tuple[int, int]]) -> bool:
    """A whole hunk's lines shifted by the same indentation (blank lines left as they are)."""
    changed = False
    for hunk in _pick(rng, w.hunks):
        texts = [_body_text(line) for line in hunk.body if _body_text(line).strip()]
        by = rng.choice([2, 4, 4, 8])
        if rng.random() < 0.5 and texts and all(t.startswith(" " * by) for t in texts):
            hunk.body = [line if not _body_text(line).strip() else line[0] + line[1 + by:] for line in hunk.body]
        else:
            hunk.body = [line if not _body_text(line).strip() else line[0] + " " * by + line[1:]
                         for line in hunk.body]
        changed = changed or bool(texts)
    return changed


def line_numbers(w: Written, rng: random.Random, starts: list[tuple[int, int]]) -> bool:
    """Every body line numbered as a numbered view of the file shows it (``12: text``): context
    and removed lines by the old file, added lines by the new."""
    for hunk, (old_at, new_at) in zip(w.hunks, starts, strict=True):
        o, n = old_at + 1, new_at + 1
        body = []
        for line in hunk.body:
            kind, text = line[0], line[1:]
            number = n if kind == "+" else o
            body.append(f"{kind}{number}: {text}")
            o += kind != "+"
            n += kind != "-"
        hunk.body = body
    return True


def shuffle(w: Written, rng: random.Random, starts: list[tuple[int, int]]) -> bool:
    """The hunks out of file order."""
    if len(w.hunks) < 2:
        return False
    order = list(range(len(w.hunks)))
    while order == sorted(order):
        rng.shuffle(order)
    w.hunks = [w.hunks[i] for i in order]
    return True


def duplicate(w: Written, rng: random.Random, starts: list[tuple[int, int]]) -> bool:
    """One hunk written twice."""
    i = rng.randrange(len(w.hunks))
    w.hunks.insert(i + 1 if rng.random() < 0.7 else len(w.hunks), _with_body(w.hunks[i], list(w.hunks[i].body)))
    return True


def stale_context(w: Written, rng: random.Random, starts: list[tuple[int, int]]) -> bool:
    """One context line as it stood before the file changed (a character of it different)."""
    spots = [(h, i) for h, hunk in enumerate(w.hunks) for i, line in enumerate(hunk.body)
             if line.startswith(" ") and any(c.isalnum() for c in line)]
    if not spots:
        return False
    h, i = rng.choice(spots)
    line = w.hunks[h].body[i]
    at = rng.choice([k for k, c in enumerate(line) if c.isalnum()])
    other = "x" if line[at] != "x" else "y"
    w.hunks[h].body[i] = line[:at] + other + line[at + 1:]
    return True


def unified_headers(w: Written, rng: random.Random, starts: list[tuple[int, int]]) -> bool:
    """A unified diff's file header and hunk headers (with their counts) inside the envelope."""
    w.pre = [f"--- a/{w.path}", f"+++ b/{w.path}"]
    for hunk, (old_at, new_at) in zip(w.hunks, starts, strict=True):
        olds = sum(1 for line in hunk.body if line[:1] in " -")
        news = sum(1 for line in hunk.body if line[:1] in " +")
        hunk.header = f"@@ -{old_at + 1},{olds} +{new_at + 1},{news} @@"
        hunk.eof = False
    return True


def trailing_ws(w: Written, rng: random.Random, starts: list[tuple[int, int]]) -> bool:
    """The same white space added at the end of every line of a hunk."""
    suffix = rng.choice([" ", "  ", "\t"])
    for hunk in _pick(rng, w.hunks):
        hunk.body = [line + suffix for line in hunk.body]
    return True


def anchor_unindented(w: Written, rng: random.Random, starts: list[tuple[int, int]],
                      old: list[str] | None = None) -> bool:
    """Each hunk's anchor (the block it is in) written without its indentation."""
    assert old is not None
    changed = False
    previous_end = 0
    for hunk, (old_at, _) in zip(w.hunks, starts, strict=True):
        at = _enclosing(old, old_at, previous_end)
        previous_end = old_at + sum(1 for line in hunk.body if line[:1] in " -")
        if at is not None and _indent(old[at]) and old[at].strip() and old[at] == old[at].rstrip():
            hunk.header = "@@ " + old[at].strip()
            changed = True
    return changed


STRUCTURE: dict[str, Callable[..., bool]] = {
    "lost_space": lost_space, "reindent": reindent, "line_numbers": line_numbers,
    "shuffle": shuffle, "duplicate": duplicate, "stale_context": stale_context,
    "unified_headers": unified_headers, "trailing_ws": trailing_ws,
    "anchor_unindented": anchor_unindented,
}
ORDER = ("anchor_unindented", "unified_headers", "stale_context", "reindent", "trailing_ws",
         "shuffle", "duplicate", "line_numbers", "lost_space")
"""The order damage is done to the hunks (readings undo it in the reverse order)."""
KINDS = (*ORDER, *TEXT_KINDS)


def damage_text(text: str, kind: str, rng: random.Random) -> str:
    if kind == "no_begin_end":
        which = rng.choice(["begin", "end", "both"])
        lines = text.split("\n")
        if which in ("begin", "both"):
            lines = lines[1:]
        if which in ("end", "both"):
            lines = [line for line in lines if line != "*** End Patch"]
        return "\n".join(lines)
    if kind == "crlf":
        return text.replace("\n", "\r\n")
    if kind == "truncate":
        low = text.index("@@")
        high = max(low + 3, len(text.rstrip("\r\n")) - 1)
        return text[: rng.randrange(low + 3, high)]
    if kind == "json":
        return json.dumps({"input": text})
    if kind == "fence":
        return "```diff\n" + text + ("" if text.endswith("\n") else "\n") + "```\n"
    raise ValueError(kind)


@dataclass
class Case:
    edit: Edit
    kinds: tuple[str, ...]
    written: Written  # after the damage to the hunks
    text: str  # the patch as sent


def make_case(edit: Edit, clean: Written, starts: list[tuple[int, int]], kinds: tuple[str, ...],
              rng: random.Random) -> Case | None:
    written = Written(clean.path, [_with_body(h, list(h.body)) for h in clean.hunks], list(clean.pre))
    old = split(edit.before)
    for kind in ORDER:
        if kind in kinds:
            extra = {"old": old} if kind == "anchor_unindented" else {}
            if not STRUCTURE[kind](written, rng, [starts[h.origin] for h in written.hunks], **extra):
                return None
    text = render(written)
    for kind in TEXT_KINDS:
        if kind in kinds:
            text = damage_text(text, kind, rng)
    return Case(edit, kinds, written, text)


# ---------------------------------------------------------------------------- readings
@dataclass(frozen=True)
class Line:
    kind: str  # " ", "-" or "+"
    text: str
    any_text: bool = False  # a stale context line: stands for whatever the file has there


@dataclass(frozen=True)
class Reading:
    anchor: str | None
    loose_anchor: bool  # the anchor stands for a file line equal to it but for indentation
    lines: tuple[Line, ...]
    eof: bool
    stated: int | None  # the 0-based line a unified hunk header states


Readings = list[list[list[Reading]]]
"""Alternatives for the whole file's hunks, each a list (one per hunk, in order) of the readings
that hunk may have independently of the others."""

LIMIT = 5000
"""Readings of one hunk, or alternatives, past this many: the case counts as not determined
(the hunt prints how many cases that was)."""


class TooMany(Exception):
    pass


def _strict(hunk: Hunk, *, loose_anchor: bool, stated: int | None, stale: int | None) -> Reading | None:
    """A hunk read exactly as Codex's grammar says (None: some line has no prefix, or the line
    read as stale is no context line)."""
    if any(line[:1] not in (" ", "+", "-") for line in hunk.body):
        return None
    anchor = hunk.header[3:] if hunk.header.startswith("@@ ") and stated is None else None
    if anchor is not None and not anchor.strip():
        anchor = None
    lines = [Line(line[0], line[1:]) for line in hunk.body]
    if stale is not None:
        if lines[stale].kind != " ":
            return None
        lines[stale] = Line(" ", lines[stale].text, any_text=True)
    return Reading(anchor, loose_anchor, tuple(lines), hunk.eof, stated)


@dataclass
class Raw:
    """A reading on the way: each hunk's possible texts (independent of the other hunks'), and
    what the readings so far found."""

    options: list[list[Hunk]]
    stated: list[int | None]
    loose_anchor: bool = False
    stale: tuple[int, int] | None = None  # (hunk, body line) read as stale


def _each(raw: Raw, undo: Callable[[Hunk], list[Hunk]]) -> Raw:
    options = []
    for hunk_options in raw.options:
        more = [other for hunk in hunk_options for other in undo(hunk)]
        if len(more) > LIMIT:
            raise TooMany
        options.append(more)
    return replace(raw, options=options)


def _with_body(hunk: Hunk, body: list[str]) -> Hunk:
    return Hunk(hunk.header, body, hunk.eof, hunk.origin)


def _unlost_space(file_lines: set[str]) -> Callable[[Hunk], list[Hunk]]:
    def undo(hunk: Hunk) -> list[Hunk]:
        # A line without a prefix is a context line that lost its space. Lines with a prefix
        # too: the hunk's every ' ' line may be one (its whole text, space included, the line:
        # told only once a shift is undone, so both readings are kept), and a '+' or '-' line may
        # be one where its whole text is a line of the file.
        ambiguous = [i for i, line in enumerate(hunk.body) if line[:1] in ("+", "-") and line in file_lines]
        if len(ambiguous) > 12:
            raise TooMany
        out = []
        for spaced in (False, True):
            base = [" " + line if line[:1] not in ("+", "-") and (spaced or line[:1] != " ") else line
                    for line in hunk.body]
            if spaced and base == [line if line[:1] in (" ", "+", "-") else " " + line for line in hunk.body]:
                continue
            for chosen in itertools.product([False, True], repeat=len(ambiguous)):
                body = list(base)
                for i, yes in zip(ambiguous, chosen, strict=True):
                    if yes:
                        body[i] = " " + hunk.body[i]
                out.append(_with_body(hunk, body))
        return out
    return undo


def _unindented(hunk: Hunk) -> list[Hunk]:
    out = [hunk]
    texts = [_body_text(line) for line in hunk.body if _body_text(line).strip()]
    for by in range(1, 17):
        if texts and all(t.startswith(" " * by) for t in texts):
            out.append(_with_body(hunk, [line if not _body_text(line).strip() else line[0] + line[1 + by:]
                                         for line in hunk.body]))
        out.append(_with_body(hunk, [line if not _body_text(line).strip() else line[0] + " " * by + line[1:]
                                     for line in hunk.body]))
    return out


def _untrailed(hunk: Hunk) -> list[Hunk]:
    out = [hunk]
    for suffix in (" ", "  ", "\t", "   ", "    "):
        if hunk.body and all(line.endswith(suffix) for line in hunk.body):
            out.append(_with_body(hunk, [line[: len(line) - len(suffix)] for line in hunk.body]))
    return out


_NUMBER = re.compile(r"^([ +\-])\d+: ")
_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _raw_readings(raw: Raw, kind: str, file_lines: set[str]) -> list[Raw]:
    """Every way ``raw`` may have been before the damage ``kind`` (the literal text among them)."""
    if kind == "lost_space":
        return [_each(raw, _unlost_space(file_lines))]
    if kind == "reindent":
        return [_each(raw, _unindented)]
    if kind == "trailing_ws":
        return [_each(raw, _untrailed)]
    if kind == "line_numbers":
        if all(_NUMBER.match(line) for options in raw.options for hunk in options for line in hunk.body):
            return [raw, _each(raw, lambda h: [_with_body(h, [_NUMBER.sub(r"\1", line) for line in h.body])])]
        return [raw]
    if kind == "shuffle":
        if len(raw.options) > 6:
            raise TooMany
        return [replace(raw, options=[raw.options[i] for i in order], stated=[raw.stated[i] for i in order])
                for order in itertools.permutations(range(len(raw.options)))]
    if kind == "duplicate":
        out = [raw]
        for i in range(len(raw.options)):
            if any(j != i and raw.options[j] == raw.options[i] for j in range(len(raw.options))):
                out.append(replace(raw, options=raw.options[:i] + raw.options[i + 1:],
                                   stated=raw.stated[:i] + raw.stated[i + 1:]))
        return out
    if kind == "stale_context":
        out = [raw]
        for h, options in enumerate(raw.options):
            for i in range(len(options[0].body)):
                out.append(replace(raw, stale=(h, i)))
        return out
    if kind == "unified_headers":
        stated = []
        for options in raw.options:
            match = _HEADER.match(options[0].header)
            stated.append(None if match is None else int(match.group(1)) - 1)
        return [replace(raw, stated=stated)]
    if kind == "anchor_unindented":
        return [raw, replace(raw, loose_anchor=True)]
    raise ValueError(kind)


def readings(case_kinds: tuple[str, ...], written: Written, old: list[str]) -> Readings:
    """Every reading of the damaged hunks ``written`` that the damage ``case_kinds`` admits."""
    raws = [Raw([[Hunk(h.header, list(h.body), h.eof, h.origin)] for h in written.hunks],
                [None] * len(written.hunks))]
    file_lines = set(old)
    for kind in reversed(ORDER):
        if kind in case_kinds:
            raws = [more for raw in raws for more in _raw_readings(raw, kind, file_lines)]
            if len(raws) > LIMIT:
                raise TooMany
    out: Readings = []
    for raw in raws:
        if "unified_headers" in case_kinds and None in raw.stated:
            continue
        per_hunk = []
        for h, options in enumerate(raw.options):
            stale = raw.stale[1] if raw.stale is not None and raw.stale[0] == h else None
            read = [_strict(hunk, loose_anchor=raw.loose_anchor, stated=raw.stated[h], stale=stale)
                    for hunk in options]
            per_hunk.append(list(dict.fromkeys(r for r in read if r is not None)))
        if all(per_hunk):
            out.append(per_hunk)
    return out


def read_clean(written: Written) -> list[list[Reading]]:
    hunks = [_strict(h, loose_anchor=False, stated=None, stale=None) for h in written.hunks]
    assert all(h is not None for h in hunks)
    return [[h] for h in hunks]  # type: ignore[list-item]


# ---------------------------------------------------------------------------- placement, exactly
def split(text: str) -> list[str]:
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n") if text else []


def results(old: list[str], hunks: list[list[Reading]], limit: int) -> set[str]:
    """The files the hunks make, applied literally at every placement exact matching allows (Codex's
    rule: in order, each after the one before and after its anchor's first occurrence from there; a
    pure insertion without anchor at the end; ``*** End of File`` at the end; a unified header's
    stated line where it states one), up to ``limit`` of them."""
    n = len(old)
    by_text: dict[str, list[int]] = {}
    loose: dict[str, list[int]] = {}
    for i, line in enumerate(old):
        by_text.setdefault(line, []).append(i)
        loose.setdefault(line.strip(), []).append(i)
    found: set[str] = set()

    def fits(hunk: Reading, start: int) -> bool:
        at = start
        for line in hunk.lines:
            if line.kind == "+":
                continue
            if at >= n or (not line.any_text and old[at] != line.text):
                return False
            at += 1
        return not hunk.eof or at == n

    def walk(number: int, cursor: int, out: list[str], tail: list[str]) -> None:
        if len(found) >= limit:
            return
        if number == len(hunks):
            found.add("".join(line + "\n" for line in out + old[cursor:] + tail))
            return
        for hunk in hunks[number]:
            place(number, hunk, cursor, out, tail)
            retry = _without_trailing_blank(hunk)
            if retry is not None:
                place(number, retry, cursor, out, tail)

    def place(number: int, hunk: Reading, cursor: int, out: list[str], tail: list[str]) -> None:
        olds = [line for line in hunk.lines if line.kind != "+"]
        floor = cursor
        anchored: list[int] = []
        if hunk.anchor is not None:
            table = loose if hunk.loose_anchor else by_text
            key = hunk.anchor.strip() if hunk.loose_anchor else hunk.anchor
            anchored = [a for a in table.get(key, []) if a >= cursor]
            if hunk.loose_anchor:
                anchored = sorted(set(anchored) | {a for a in by_text.get(hunk.anchor, []) if a >= cursor})
            if not anchored:
                return
        if not olds:
            if hunk.anchor is None:
                walk(number + 1, cursor, out, tail + [line.text for line in hunk.lines])
                return
            starts = [a + 1 for a in anchored]
        else:
            if anchored:
                # (With a loose anchor, any of the lines it may stand for: each is a reading.)
                firsts = [anchored[0]] if not hunk.loose_anchor else anchored
                floor = min(firsts) + 1
            if hunk.stated is not None:
                starts = [hunk.stated] if hunk.stated >= floor else []
            else:
                first = next((line for line in olds if not line.any_text), None)
                if first is None:
                    starts = list(range(floor, n - len(olds) + 1))
                else:
                    offset = olds.index(first)
                    starts = [s - offset for s in by_text.get(first.text, []) if s - offset >= floor]
        for start in starts:
            if not fits(hunk, start):
                continue
            made, at = [], start
            for line in hunk.lines:
                if line.kind == " ":
                    made.append(old[at])
                elif line.kind == "+":
                    made.append(line.text)
                at += line.kind != "+"
            walk(number + 1, at, out + old[cursor:start] + made, tail)

    walk(0, 0, [], [])
    return found


def _without_trailing_blank(hunk: Reading) -> Reading | None:
    """Codex's retry of a hunk whose last old line is blank: without that line (and without the
    last new line, when that is blank too); None when it has no such line."""
    old = [i for i, line in enumerate(hunk.lines) if line.kind != "+"]
    new = [i for i, line in enumerate(hunk.lines) if line.kind != "-"]
    if not old or hunk.lines[old[-1]].text != "" or hunk.lines[old[-1]].any_text:
        return None
    drop_new = new[-1] if new and hunk.lines[new[-1]].text == "" else None
    lines = []
    for i, line in enumerate(hunk.lines):
        in_old, in_new = line.kind != "+" and i != old[-1], line.kind != "-" and i != drop_new
        if in_old or in_new:
            lines.append(replace(line, kind=" " if in_old and in_new else "-" if in_old else "+"))
    return replace(hunk, lines=tuple(lines))


def determined(case: Case) -> bool:
    """Whether the damaged text has exactly one reading consistent with the file (see the module)."""
    if "truncate" in case.kinds:
        return False
    old = split(case.edit.before)
    try:
        alternatives = readings(case.kinds, case.written, old)
    except TooMany:
        return False
    made: set[str] = set()
    for hunks in alternatives:
        made |= results(old, hunks, 2)
        if len(made) > 1:
            return False
    return made == {case.edit.after}


# ---------------------------------------------------------------------------- running
def _verdict(ok: bool, after: str | None, case: Case) -> str:
    if not ok:
        return "refused" if after == case.edit.before else "wrong"
    return "intended" if after == case.edit.after else "wrong"


def run_patchtx(case: Case, scratch: Path, **options: object) -> tuple[str, str]:
    """patchtx's verdict on the case (as a host runs it: repairs on), and the error's kind or the
    repairs reported."""
    sys.path.insert(0, str(REPO / "src"))
    from patchtx.api import plan_patch
    from patchtx.errors import PatchtxError

    root = Path(tempfile.mkdtemp(dir=scratch))
    try:
        target = root / case.edit.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(case.edit.before.encode())
        try:
            plan = plan_patch(case.text, root, **options)  # type: ignore[arg-type]
        except PatchtxError as error:
            return _verdict(False, case.edit.before, case), error.kind
        except Exception as error:  # noqa: BLE001 (an internal error is a wrong outcome)
            return "wrong", f"crash: {type(error).__name__}: {error}"
        others = [t for t in plan.targets if t.path != case.edit.path]
        mine = next((t for t in plan.targets if t.path == case.edit.path), None)
        after = case.edit.before if mine is None else (
            None if mine.after is None else mine.after.decode("utf-8", "replace"))
        note = ",".join(r.kind for r in plan.repairs)
        if others:
            return "wrong", "other paths: " + ",".join(t.path for t in others)
        return _verdict(True, after, case), note
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_codex(case: Case, scratch: Path, binary: str) -> str:
    root = Path(tempfile.mkdtemp(dir=scratch))
    try:
        target = root / case.edit.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(case.edit.before.encode())
        env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "LC_ALL": "C.UTF-8",
               "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS": "1"}
        try:
            run = subprocess.run([binary, case.text], cwd=root, env=env, capture_output=True,
                                 timeout=30, check=False)
        except (OSError, ValueError, subprocess.TimeoutExpired):  # (a NUL in the text: no argv)
            return "refused"
        others = [p for p in root.rglob("*") if p.is_file() and p != target]
        after = target.read_bytes().decode("utf-8", "replace") if target.exists() else None
        if others:
            return "wrong"
        return _verdict(run.returncode == 0, after, case)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def cases_of(edits: list[Edit], pairs: int, seed: int) -> Iterator[Case]:
    """For each edit: its clean patch damaged by each kind alone, and by ``pairs`` pairs."""
    all_pairs = list(itertools.combinations(KINDS, 2))
    for number, edit in enumerate(edits):
        rng = random.Random(f"{seed}:{number}:{edit.source}")
        clean = clean_patch(edit, rng)
        if clean is None:
            continue
        written, starts = clean
        combos = [(kind,) for kind in KINDS] + [tuple(p) for p in rng.sample(all_pairs, min(pairs, len(all_pairs)))]
        for kinds in combos:
            case = make_case(edit, written, starts, kinds, rng)
            if case is not None:
                yield case


@dataclass
class Row:
    case: Case
    determined: bool
    patchtx: str
    note: str
    codex: str | None = None


def hunt(edits: list[Edit], pairs: int, seed: int, codex: str | None = None,
         limit: int | None = None) -> list[Row]:
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="damage-hunt-"))
    try:
        for case in cases_of(edits, pairs, seed):
            if limit is not None and len(rows) >= limit:
                break
            verdict, note = run_patchtx(case, scratch)
            rows.append(Row(case, determined(case), verdict, note,
                            None if codex is None else run_codex(case, scratch, codex)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


VERDICTS = ("intended", "refused", "wrong")


def table(rows: list[Row]) -> str:
    """The table by damage kind (a pair counts under both its kinds), determined and not."""
    with_codex = any(row.codex is not None for row in rows)
    head = "| damage | cases | determined: patchtx i / r / w |" + (" Codex i / r / w |" if with_codex else "") + \
        " undetermined: patchtx i / r / w |" + (" Codex i / r / w |" if with_codex else "")
    out = [head, "|" + "---|" * (head.count("|") - 1)]

    def cell(subset: list[Row], who: str) -> str:
        counts = Counter(getattr(row, who) for row in subset)
        return " / ".join(str(counts[v]) for v in VERDICTS)

    for kind in (*KINDS, "(alone)", "(pairs)", "all"):
        if kind == "all":
            subset = rows
        elif kind == "(alone)":
            subset = [r for r in rows if len(r.case.kinds) == 1]
        elif kind == "(pairs)":
            subset = [r for r in rows if len(r.case.kinds) == 2]
        else:
            subset = [r for r in rows if kind in r.case.kinds]
        det = [r for r in subset if r.determined]
        und = [r for r in subset if not r.determined]
        line = f"| {kind} | {len(subset)} | {cell(det, 'patchtx')} |"
        if with_codex:
            line += f" {cell(det, 'codex')} |"
        line += f" {cell(und, 'patchtx')} |"
        if with_codex:
            line += f" {cell(und, 'codex')} |"
        out.append(line)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", action="append", default=[], help="a git repository (a fetched mirror)")
    parser.add_argument("--replay", type=Path, help="a replay corpus folder (tests/replay/cases)")
    parser.add_argument("--edits", type=int, default=60, help="edits per repository")
    parser.add_argument("--pairs", type=int, default=8, help="pairs of damage per edit")
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--codex", action="store_true", help="run Codex's binary beside")
    parser.add_argument("--wrong", type=Path, help="write every wrong run here (JSON lines)")
    args = parser.parse_args(argv)
    edits: list[Edit] = []
    for mirror in args.repo:
        edits += list(edits_from_git(mirror, args.edits))
    if args.replay:
        edits += list(edits_from_replay(args.replay))[: args.edits]
    binary = None
    if args.codex:
        sys.path.insert(0, str(REPO))
        from tests.differential.codex_binary import find_codex_apply_patch

        binary = str(find_codex_apply_patch())
    began = time.monotonic()
    rows = hunt(edits, args.pairs, args.seed, binary)
    print(f"{len(edits)} edits, {len(rows)} cases, {time.monotonic() - began:.0f} s")
    print(table(rows))
    det = [r for r in rows if r.determined]
    share = sum(r.patchtx == "intended" for r in det) / max(len(det), 1)
    print(f"\ndetermined {len(det)}, undetermined {len(rows) - len(det)}; patchtx applied as intended "
          f"{share:.1%} of determined; wrong: {sum(r.patchtx == 'wrong' for r in rows)}")
    if args.wrong:
        with args.wrong.open("w") as out:
            for r in rows:
                if r.patchtx == "wrong":
                    out.write(json.dumps({"source": r.case.edit.source, "kinds": r.case.kinds,
                                          "determined": r.determined, "note": r.note, "path": r.case.edit.path,
                                          "before": r.case.edit.before, "after": r.case.edit.after,
                                          "patch": r.case.text}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
