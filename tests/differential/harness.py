"""One case through the real Codex binary and through patchtx's planner, and the verdict.

A ``Case`` is an input tree and a patch. ``check(case)`` materialises the tree twice, runs Codex's
``apply_patch`` in one copy and plans the patch with patchtx in the other (then applies the Plan's
targets itself: after-bytes written, ``None`` unlinked, ``remove_dirs`` removed), and compares the
two resulting trees and the two outcomes.

Every difference must be explained by one of the deliberate differences of DESIGN.md §2 and the
"Deliberate differences from Codex" table of docs/format.md, each an explicit, narrow predicate
below (the ``Allowed`` labels). Anything else raises ``Divergence`` with a full reproduction.
Several predicates are *counterfactual*: patchtx is re-run with the explicit option that restores
Codex's behaviour (``allow_overwrite``, ``first_match``), or patchtx's own placement and rewrite
functions are re-run with documented rules switched to Codex's (insertion point of an anchored pure
insertion, final newline, ending of added lines, order of lines added at the end of the file), and
the result must then equal Codex's bytes exactly.
"""

from __future__ import annotations

import functools
import itertools
import os
import posixpath
import re
import shutil
import stat
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchtx.api import plan_patch
from patchtx.cli import codex_summary
from patchtx.errors import (
    AlreadyAppliedError,
    AmbiguousContextError,
    BinaryFileError,
    ContextNotFoundError,
    FileExistsPatchError,
    NoChangeError,
    ParseError,
    PartlyAppliedError,
    PatchtxError,
    UnsafePathError,
)
from patchtx.formats.codex import parse, unwrap
from patchtx.model import AddFile, ChangeKind, DeleteFile, Hunk, Patch, Plan, UpdateFile
from patchtx.place.matching import Locator, Placement
from patchtx.place.rewrite import rewrite
from patchtx.place.textfile import BOM, TextFile, decode

from .codex_binary import CodexRun, run_codex

_UMASK = os.umask(0o022)
os.umask(_UMASK)
DEFAULT_MODE = 0o666 & ~_UMASK
"""Mode of a newly created file (what Codex gives a moved file)."""
ROOT_TOKEN = "{ROOT}"
"""Replaced in a patch by the absolute path of the workspace root of the run."""
OUTSIDE_TOKEN = "{OUTSIDE}"
"""Replaced by the folder that holds the root (somewhere patchtx must never write)."""


# -- the deliberate differences (DESIGN.md §2) ------------------------------------------------------
class Allowed:
    ATOMIC = "atomic: nothing applied when an operation fails (Codex keeps earlier ones)"
    OVERWRITE = "overwrite refused: Add/Move onto an existing file (Codex overwrites)"
    MOVE_TO_SELF = ("move to own path (also spelled through a symlinked folder inside the root) is an "
                    "update (Codex deletes the file)")
    UNSAFE_PATH = "unsafe path refused: absolute/../symlink leaving the root (Codex accepts)"
    AMBIGUOUS = "ambiguity refused (Codex takes the first match)"
    ANCHOR_INSERT = "pure insertion under @@ anchor goes after the anchor (Codex: end of file)"
    STACKED = "stacked @@ anchors accepted (Codex rejects them)"
    FINAL_NEWLINE = "final-newline state kept (Codex adds one)"
    BOM = "UTF-8 BOM kept on disk and ignored for matching (Codex: text of the first line)"
    ENDING = "added lines take the dominant line ending (Codex: the first one in the file)"
    MODE = "mode bits kept on move (Codex: default mode)"
    EMPTY_DIRS = "directories emptied by the patch removed (Codex leaves them)"
    BINARY = "binary (NUL) file refused"
    SYMLINK_LEAF = ("a symlink inside the root is never added onto, deleted or moved: refused "
                    "(Codex writes through it / removes it / moves its target)")
    RESERVED = "paths inside .git/ or .patchtx/ (at any depth) refused (Codex writes them)"
    WINDOWS_PATH = "a backslash or a drive-letter prefix in a path refused (Codex: a literal file name)"
    EOF_ORDER = ("pure insertion at end of file goes after a later chunk's lines added at the end "
                 "(Codex: chunk order)")
    APPLIED = "a patch already (or partly) in place refused (Codex applies it again)"
    REPAIRED = ("a malformed shape with one meaning repaired and reported (Codex refuses it, or "
                "applies its loose reading); --strict restores Codex's grammar")
    NO_CHANGE = ("a patch that changes nothing refused as no_change (Codex reports the file "
                 "modified; it adds at most a missing final newline)")
    INDENTATION = ("a hunk matched only with its white space ignored whose added lines' indentation "
                   "has no one reading (its lines shifted unalike against the file's) refused "
                   "(Codex writes them as sent); --strict restores Codex's")
    BLANK_RETRY = ("a hunk whose one old line is a blank line the file lacks refused where its other "
                   "lines could go at more than one line (Codex inserts them at the cursor); "
                   "first-match restores Codex's")


# Rules of patchtx's rewrite that can be switched to Codex's, for the counterfactual predicates.
REWRITE_RULES = (Allowed.ANCHOR_INSERT, Allowed.FINAL_NEWLINE, Allowed.ENDING, Allowed.EOF_ORDER)


class Divergence(AssertionError):
    """patchtx and Codex differ in a way that no deliberate difference explains."""


class HarnessError(RuntimeError):
    """The harness's model of patchtx is out of step with patchtx itself (not a divergence)."""


# -- cases and trees ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    name: str
    patch: str
    files: Mapping[str, bytes] = field(default_factory=dict)
    modes: Mapping[str, int] = field(default_factory=dict)
    dirs: Sequence[str] = ()
    links: Mapping[str, str] = field(default_factory=dict)

    def text_for(self, root: Path) -> str:
        return self.patch.replace(ROOT_TOKEN, str(root)).replace(OUTSIDE_TOKEN, str(root.parent))

    def materialise(self, root: Path) -> None:
        root.mkdir(parents=True)
        for d in self.dirs:
            (root / d).mkdir(parents=True, exist_ok=True)
        for rel, data in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(self.modes.get(rel, DEFAULT_MODE))
        for rel, target in self.links.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(target)

    @functools.cached_property
    def input_tree(self) -> Tree:
        with tempfile.TemporaryDirectory(prefix="patchtx-diff-in-", dir=_scratch_base()) as tmp:
            root = Path(tmp) / "root"
            self.materialise(root)
            return Tree.snapshot(root)


@dataclass(frozen=True)
class Tree:
    """Files (bytes and mode), directories and symlinks; paths relative to the root. Entries
    outside the root (written through '..' or an absolute path) appear as ``../name``."""

    files: dict[str, bytes]
    modes: dict[str, int]
    dirs: frozenset[str]
    links: dict[str, str]

    @classmethod
    def snapshot(cls, root: Path) -> Tree:
        files: dict[str, bytes] = {}
        modes: dict[str, int] = {}
        dirs: set[str] = set()
        links: dict[str, str] = {}
        base = root.parent
        for folder, dirnames, filenames in os.walk(base):
            for name in dirnames + filenames:
                path = Path(folder) / name
                rel = os.path.relpath(path, root)
                if rel == ".":
                    continue
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode):
                    links[rel] = os.readlink(path)
                elif stat.S_ISDIR(st.st_mode):
                    dirs.add(rel)
                else:
                    files[rel] = path.read_bytes()
                    modes[rel] = stat.S_IMODE(st.st_mode)
        return cls(files, modes, frozenset(dirs), links)

    def describe(self) -> str:
        lines = [f"  {p!r}: {self.files[p]!r} (mode {self.modes[p]:o})" for p in sorted(self.files)]
        lines += [f"  {d!r}/ (dir)" for d in sorted(self.dirs)]
        lines += [f"  {p!r} -> {t!r} (symlink)" for p, t in sorted(self.links.items())]
        return "\n".join(lines) or "  (empty)"


# -- running both --------------------------------------------------------------------------------
def _scratch_base() -> str | None:
    """A RAM-backed folder if there is one (creating and removing thousands of small trees on a
    disk-backed /tmp costs milliseconds per rmdir); ``PATCHTX_DIFF_TMP`` overrides."""
    explicit = os.environ.get("PATCHTX_DIFF_TMP")
    if explicit:
        return explicit
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


class Workdirs:
    """Fresh, separate directories for every run of one case."""

    def __init__(self) -> None:
        self._tmp = tempfile.mkdtemp(prefix="patchtx-diff-", dir=_scratch_base())
        self._count = itertools.count()

    def new_root(self, label: str) -> Path:
        return Path(self._tmp) / f"{next(self._count)}-{label}" / "root"

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)


@dataclass
class CodexOutcome:
    run: CodexRun
    tree: Tree
    root: Path

    @property
    def ok(self) -> bool:
        return self.run.ok

    @property
    def message(self) -> str:
        return self.run.stderr.rstrip("\n").replace(str(self.root), ROOT_TOKEN)


@dataclass(frozen=True)
class Counterfactual:
    """How patchtx is run: by default as it is; each flag restores one Codex behaviour."""

    allow_overwrite: bool = False
    """patchtx's explicit option: Add/Move may replace an existing file."""
    first_match: bool = False
    """patchtx's explicit option: an ambiguous hunk takes its first match."""
    move_to_self_deletes: bool = False
    """A Move onto its own path is planned as Codex executes it: write, then delete the path."""
    strict: bool = False
    """patchtx's explicit option: no repairs (docs/format.md, "Repairs"), Codex's grammar."""

    def names(self) -> list[str]:
        return [name for name, value in vars(self).items() if value]


@dataclass
class PatchtxOutcome:
    tree: Tree
    root: Path
    how: Counterfactual
    plan: Plan | None = None
    error: PatchtxError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def message(self) -> str:
        assert self.error is not None
        return self.error.headline.rstrip("\n").replace(str(self.root), ROOT_TOKEN)


def run_codex_case(case: Case, dirs: Workdirs) -> CodexOutcome:
    root = dirs.new_root("codex")
    case.materialise(root)
    root = root.resolve()
    run = run_codex(case.text_for(root), root)
    return CodexOutcome(run, Tree.snapshot(root), root)


def apply_plan_to_tree(plan: Plan, root: Path) -> None:
    """What a commit makes true, done directly: the test's own, independent of patchtx.txn."""
    for target in plan.targets:
        if target.after is None:
            (root / target.path).unlink()
    for target in plan.targets:
        if target.after is not None:
            path = root / target.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(target.after)
            if target.after_mode is not None:
                path.chmod(target.after_mode)
    for folder in plan.remove_dirs:
        (root / folder).rmdir()


def _same_path(a: str, b: str, root: Path | None = None) -> bool:
    """``a`` and ``b`` are the same path once normalised or, given the ``root``, two spellings of
    one file through a symlinked folder inside it (``s/f.txt`` with ``s -> .``). A path whose
    last component is a link is not counted (that is the symlink row: patchtx refuses it)."""
    if posixpath.normpath(a) == posixpath.normpath(b):
        return True
    if root is None:
        return False
    full_a, full_b = os.path.join(root, a), os.path.join(root, b)
    if os.path.islink(full_a) or os.path.islink(full_b):
        return False
    real = os.path.realpath(full_a)
    return real == os.path.realpath(full_b) and real.startswith(os.path.join(os.path.realpath(root), ""))


def moves_onto_itself(patch: Patch, root: Path) -> bool:
    return any(isinstance(h, UpdateFile) and h.move_to is not None and _same_path(h.path, h.move_to, root)
               for h in patch.hunks)


def move_to_self_as_delete(patch: Patch, root: Path) -> Patch:
    """Codex's Move onto its own path (however spelled) writes the new contents, then removes the
    path."""
    hunks: list[Hunk] = []
    for hunk in patch.hunks:
        if isinstance(hunk, UpdateFile) and hunk.move_to is not None and _same_path(hunk.path,
                                                                                   hunk.move_to, root):
            hunks += [UpdateFile(path=hunk.path, chunks=hunk.chunks, move_to=None, line=hunk.line),
                      DeleteFile(path=hunk.path, line=hunk.line)]
        else:
            hunks.append(hunk)
    return Patch(hunks=tuple(hunks), text=patch.text, environment_id=patch.environment_id)


def run_patchtx_case(case: Case, dirs: Workdirs, how: Counterfactual = Counterfactual(), *,
                     patch: Patch | None = None) -> PatchtxOutcome:
    """Plan the case with patchtx (``patch`` replaces the case's text), then apply the Plan."""
    root = dirs.new_root("patchtx")
    case.materialise(root)
    root = root.resolve()
    outcome = PatchtxOutcome(Tree.snapshot(root), root, how)
    try:
        if patch is None and how.move_to_self_deletes:
            patch = move_to_self_as_delete(parse(case.text_for(root)), root)
        outcome.plan = plan_patch(patch if patch is not None else case.text_for(root), root,
                                  allow_overwrite=how.allow_overwrite, first_match=how.first_match,
                                  strict=how.strict)
    except PatchtxError as exc:
        outcome.error = exc
        return outcome
    apply_plan_to_tree(outcome.plan, root)
    outcome.tree = Tree.snapshot(root)
    return outcome


# -- the counterfactual rewrite: patchtx's placement, the documented rules, switchable to Codex's -----
class _DocumentedText:
    """The view of a file that patchtx's ``rewrite`` reads (texts, endings, BOM, final-newline state
    and ending for new lines), with the two rewrite rules as documented in DESIGN §2, implemented
    here rather than taken from patchtx, each switchable to Codex's rule:

    - final newline: patchtx keeps the file's state; Codex ends every line (so the file) with one;
    - ending of added lines: patchtx uses the most common ending (ties: the first seen); Codex the
      first ending in the file. Both use LF for a file without any line ending.
    """

    def __init__(self, original: TextFile, *, codex_final_newline: bool, codex_ending: bool) -> None:
        self.texts = list(original.texts)
        self.endings = list(original.endings)
        self.bom = original.bom
        self.codex_final_newline = codex_final_newline
        self.codex_ending = codex_ending

    @property
    def ends_with_newline(self) -> bool:
        return self.codex_final_newline or not self.endings or self.endings[-1] != ""

    @property
    def dominant_ending(self) -> str:
        seen = [e for e in self.endings if e]
        if not seen:
            return "\n"
        if self.codex_ending:
            return seen[0]
        counts = Counter(seen)
        best = max(counts.values())
        return next(e for e in seen if counts[e] == best)


FAILED = object()
_LOOSE = str.maketrans({**{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
                        **{c: "'" for c in "\u2018\u2019\u201a\u201b"},
                        **{c: '"' for c in "\u201c\u201d\u201e\u201f"},
                        **{c: " " for c in "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                                         "\u2009\u200a\u202f\u205f\u3000"}})


def _loose(line: str) -> str:
    """Codex's loosest comparison (fourth pass): trimmed, Unicode punctuation and spaces mapped."""
    return line.strip().translate(_LOOSE)


def rewrite_with_rules(before: bytes, hunk: UpdateFile, rules: frozenset[str],
                       first_match: bool) -> bytes | object:
    """patchtx's placement + rewrite of one Update, with the given rules switched to Codex's."""
    try:
        original = decode(before, "<file>")
        placements = Locator(original.texts, "<file>", first_match=first_match).place(hunk.chunks)
    except PatchtxError:
        return FAILED
    def anchored_insertion(chunk_index: int) -> bool:  # only '+' lines, under an @@ anchor
        chunk = hunk.chunks[chunk_index]
        return bool(chunk.anchors) and not chunk.old_lines

    for p in placements:
        anchor = hunk.chunks[p.chunk_index].anchors[-1:] if anchored_insertion(p.chunk_index) else []
        if anchor and not (p.start > 0 and _loose(original.texts[p.start - 1]) == _loose(anchor[0])):
            return FAILED  # patchtx's documented rule: right after the (last) anchor line
    if Allowed.ANCHOR_INSERT in rules:
        end = len(original.texts)
        placements = [type(p)(chunk_index=p.chunk_index, start=end, length=p.length, lines=p.lines)
                      if anchored_insertion(p.chunk_index) else p for p in placements]
        placements.sort(key=lambda p: (p.start, p.chunk_index))
    if Allowed.EOF_ORDER in rules:
        placements = _codex_eof_order(placements, len(original.texts))
    view = _DocumentedText(original, codex_final_newline=Allowed.FINAL_NEWLINE in rules,
                           codex_ending=Allowed.ENDING in rules)
    result = rewrite(view, placements)  # type: ignore[arg-type]  # duck-typed TextFile
    if isinstance(result, tuple):  # newer patchtx also returns the changed line ranges
        result = result[0]
    return result.encode()


def _codex_eof_order(placements: list[Placement], end: int) -> list[Placement]:
    """Codex's order of lines added at the end of the file (docs/format.md; table case X3).

    Codex replaces each run of ``-``/``+`` lines between context lines on its own, sorts the runs
    stably by start and applies them bottom-up, so zero-length runs that all start at the end of the
    file (pure insertions, and a chunk's trailing ``+`` lines right after its last context line when
    the chunk's match ends at the end of the file) land in chunk order. patchtx keeps such a chunk's
    lines right after its context and puts the pure insertion last. Here each such trailing run is
    split off as its own zero-length placement at the end, and those are ordered by chunk."""
    out: list[Placement] = []
    for p in placements:
        kinds = [kind for kind, _ in p.lines]
        tail = len(kinds)
        while tail and kinds[tail - 1] == "+":
            tail -= 1
        if 0 < tail < len(kinds) and kinds[tail - 1] == " " and p.start + p.length == end:
            out.append(Placement(chunk_index=p.chunk_index, start=p.start, length=p.length,
                                 lines=p.lines[:tail]))
            out.append(Placement(chunk_index=p.chunk_index, start=end, length=0, lines=p.lines[tail:]))
        else:
            out.append(p)
    out.sort(key=lambda p: (p.start, p.chunk_index if p.start == end and p.length == 0 else -1))
    return out


def replay(plan: Plan, rules: frozenset[str], first_match: bool) -> dict[str, bytes | None | object]:
    """Re-run the Plan's operations in order, each Update through ``rewrite_with_rules``; returns
    every touched path's final bytes (None: removed; FAILED: a chunk no longer places)."""
    assert plan.patch is not None
    hunks = plan.patch.hunks
    if len(hunks) != len(plan.changes):
        raise HarnessError(f"{len(hunks)} hunks but {len(plan.changes)} planned changes")
    state: dict[str, bytes | None | object] = {}

    def current(rel: str, fallback: bytes | None) -> bytes | None | object:
        return state[rel] if rel in state else fallback

    for hunk, change in zip(hunks, plan.changes, strict=True):
        if change.kind is ChangeKind.ADD:
            state[change.path] = change.after
        elif change.kind is ChangeKind.DELETE:
            state[change.path] = None
        else:
            assert isinstance(hunk, UpdateFile)
            source = change.source or change.path
            before = current(source, change.before)
            state[source] = None
            if isinstance(before, bytes):
                state[change.path] = rewrite_with_rules(before, hunk, rules, first_match)
            else:
                state[change.path] = FAILED
    return state


# -- the verdict ------------------------------------------------------------------------------------
@dataclass
class Verdict:
    labels: list[str] = field(default_factory=list)
    codex_ok: bool = False
    patchtx_ok: bool = False

    def add(self, label: str) -> None:
        if label not in self.labels:
            self.labels.append(label)


def _divergence(case: Case, codex: CodexOutcome, px: PatchtxOutcome, what: str) -> Divergence:
    px_text = ("success" if px.ok else f"error {type(px.error).__name__}: {px.message}")
    options = px.how.names()
    return Divergence(
        f"DIVERGENCE in {case.name}: {what}\n"
        f"--- patch ---\n{case.patch}\n"
        f"--- input tree ---\n{case.input_tree.describe()}\n"
        f"--- codex: exit {codex.run.returncode}; stdout {codex.run.stdout!r}; "
        f"stderr {codex.message!r}\n{codex.tree.describe()}\n"
        f"--- patchtx{' (' + ', '.join(options) + ')' if options else ''}: {px_text}\n"
        f"{px.tree.describe()}"
    )


def check(case: Case, dirs: Workdirs | None = None) -> Verdict:
    """Run ``case`` through both and return the deliberate differences seen; raise Divergence."""
    own = dirs is None
    dirs = dirs or Workdirs()
    try:
        codex = run_codex_case(case, dirs)
        verdict = Verdict(codex_ok=codex.ok)
        _classify(case, codex, dirs, verdict, Counterfactual())
        return verdict
    finally:
        if own:
            dirs.close()


def _classify(case: Case, codex: CodexOutcome, dirs: Workdirs, verdict: Verdict,
              how: Counterfactual) -> None:
    px = run_patchtx_case(case, dirs, how)
    if how == Counterfactual():
        verdict.patchtx_ok = px.ok
    error = px.error
    # Where patchtx refuses or differs by design and has an explicit option (or a plain rewrite
    # of the patch) that restores Codex's behaviour, it must then agree with Codex.
    if px.plan is not None and px.plan.repairs and not how.strict:
        verdict.add(Allowed.REPAIRED)
        _classify(case, codex, dirs, verdict, replace(how, strict=True))
        return
    if not how.move_to_self_deletes and _parses_with_move_to_self(case, px.root):
        verdict.add(Allowed.MOVE_TO_SELF)
        _classify(case, codex, dirs, verdict, replace(how, move_to_self_deletes=True))
        return
    if isinstance(error, FileExistsPatchError) and not how.allow_overwrite \
            and _names_an_existing_file(case, px, error):
        verdict.add(Allowed.OVERWRITE)
        _classify(case, codex, dirs, verdict, replace(how, allow_overwrite=True))
        return
    if isinstance(error, AmbiguousContextError) and error.details.get("ambiguous") == "indentation" \
            and not how.strict:
        verdict.add(Allowed.INDENTATION)
        _classify(case, codex, dirs, verdict, replace(how, strict=True))
        return
    if isinstance(error, AmbiguousContextError) and not how.first_match \
            and len(set(error.details.get("candidate_lines", ()))) >= 2:
        verdict.add(Allowed.AMBIGUOUS)
        _classify(case, codex, dirs, verdict, replace(how, first_match=True))
        return
    if isinstance(error, ContextNotFoundError) and not how.first_match and _has_blank_only_old_side(case):
        verdict.add(Allowed.BLANK_RETRY)
        _classify(case, codex, dirs, verdict, replace(how, first_match=True))
        return
    if isinstance(error, UnsafePathError) and _patch_has_unsafe_path(case):
        verdict.add(Allowed.UNSAFE_PATH)
        return
    if isinstance(error, UnsafePathError):
        refused = _refused_path_label(case, px, error)
        if refused is not None and _codex_accepts_or_fails_there(case, codex, px, dirs, verdict, refused[1]):
            verdict.add(refused[0])
            return
    # (Codex applies it again, or fails on it as a miss, changing nothing)
    if (isinstance(error, AlreadyAppliedError | PartlyAppliedError)
            and (codex.ok or codex.tree == case.input_tree) and _some_change_already_there(case, px)):
        verdict.add(Allowed.APPLIED)
        return
    if isinstance(error, NoChangeError) and (codex.ok or codex.tree == case.input_tree) and (
            codex.ok and _codex_changed_nothing(case, codex, verdict) or _has_no_op_section(case)):
        verdict.add(Allowed.NO_CHANGE)
        return
    if isinstance(error, BinaryFileError) and (any(
            b"\x00" in d and str(error.path or "").endswith("/" + p) for p, d in case.files.items())
            or "\x00" in case.patch):  # an added file's contents hold a NUL: refused as binary
        verdict.add(Allowed.BINARY)
        return
    try:
        if codex.ok and px.ok:
            _compare_success(case, codex, px, verdict)
            _compare_summary(case, codex, px)
        elif not codex.ok and not px.ok:
            _compare_failure(case, codex, px, dirs, verdict)
        elif px.ok:  # Codex failed, patchtx succeeded
            if not _codex_rejected_stacked_anchor(case, codex, px):
                raise _divergence(case, codex, px, "Codex failed, patchtx succeeded")
            verdict.add(Allowed.STACKED)
        else:
            raise _divergence(case, codex, px, "Codex succeeded, patchtx failed")
    except Divergence:
        if not _bom_explains(case, dirs, verdict, how):
            raise


def _some_change_already_there(case: Case, px: PatchtxOutcome) -> bool:
    """An independent look at an already-applied refusal: some Add's file holds exactly its
    content, or some Update's added text, with the lines it keeps around it, stands in its input
    file (plain line-list search, no matching passes)."""
    try:
        hunks = parse(case.text_for(px.root)).hunks
    except PatchtxError:
        return False
    for hunk in hunks:
        data = case.files.get(posixpath.normpath(hunk.path))
        if data is None:
            continue
        if isinstance(hunk, AddFile) and data == hunk.contents.encode():
            return True
        if not isinstance(hunk, UpdateFile):
            continue
        lines = data.decode("utf-8", "replace").lstrip(BOM).splitlines()
        for chunk in hunk.chunks:
            new = [text for kind, text in chunk.lines if kind != "-"]
            if any(kind == "+" for kind, _ in chunk.lines) and any(
                    lines[i:i + len(new)] == new for i in range(len(lines) - len(new) + 1)):
                return True
    return False


def _has_no_op_section(case: Case) -> bool:
    """An independent look at a no_change refusal: some Update of the patch (other than a pure
    rename's one section) has a section whose '+' lines are its '-' lines, or context only."""
    try:
        hunks = parse(case.patch).hunks
    except PatchtxError:
        return False
    return any(
        [t for k, t in chunk.lines if k != "+"] == [t for k, t in chunk.lines if k != "-"]
        for hunk in hunks if isinstance(hunk, UpdateFile)
        and not (hunk.move_to is not None and len(hunk.chunks) == 1) for chunk in hunk.chunks)


def _codex_changed_nothing(case: Case, codex: CodexOutcome, verdict: Verdict) -> bool:
    """Codex's success left every file as it was, but for a final newline it adds to a file
    without one (a rewrite rule patchtx does not share: FINAL_NEWLINE), and no path appeared,
    went or changed mode: the patch changed nothing patchtx would write."""
    inp, out = case.input_tree, codex.tree
    if set(out.files) != set(inp.files) or out.dirs != inp.dirs or out.links != inp.links:
        return False
    if any(out.modes.get(path) != inp.modes.get(path) for path in out.files):
        return False
    newline_added = False
    for path, data in out.files.items():
        before = inp.files[path]
        if data == before:
            continue
        if before and not before.endswith(b"\n") and data in (before + b"\n", before + b"\r\n"):
            newline_added = True
            continue
        return False
    if newline_added:
        verdict.add(Allowed.FINAL_NEWLINE)
    return True


def _names_an_existing_file(case: Case, px: PatchtxOutcome, error: PatchtxError) -> bool:
    """The refused Add/Move destination exists: in the input, or made by an earlier operation."""
    target = posixpath.normpath(str(error.path or ""))
    if target in case.input_tree.files or target in case.input_tree.links:
        return True
    try:
        hunks = parse(case.text_for(px.root)).hunks
    except PatchtxError:
        return False
    made = [h.path for h in hunks if isinstance(h, AddFile)]
    made += [h.move_to for h in hunks if isinstance(h, UpdateFile) and h.move_to is not None]
    return any(_same_path(p, target) for p in made)


def _parses_with_move_to_self(case: Case, root: Path) -> bool:
    try:
        return moves_onto_itself(parse(case.text_for(root)), root)
    except PatchtxError:
        return False


def _has_blank_only_old_side(case: Case) -> bool:
    """Some chunk of the patch has one old line, and it is blank (see matching._find_hunk)."""
    try:
        hunks = parse(case.patch).hunks
    except PatchtxError:
        return False
    return any(chunk.old_lines == [""] for hunk in hunks if isinstance(hunk, UpdateFile)
               for chunk in hunk.chunks)


def _patch_has_unsafe_path(case: Case) -> bool:
    """The patch names a path outside the root: absolute (other than under the root), with a
    ``..`` component, or through a symlink whose target leaves the root."""
    try:
        hunks = parse(case.patch).hunks
    except PatchtxError:
        return False
    for hunk in hunks:
        paths = [hunk.path]
        if isinstance(hunk, UpdateFile) and hunk.move_to is not None:
            paths.append(hunk.move_to)
        for path in paths:
            if path.startswith(ROOT_TOKEN + "/"):
                path = path[len(ROOT_TOKEN) + 1 :]
            if path.startswith(("/", OUTSIDE_TOKEN)) or ".." in path.split("/"):
                return True
            parts = [p for p in path.split("/") if p not in ("", ".")]
            for depth in range(1, len(parts) + 1):
                link = "/".join(parts[:depth])
                if link in case.links and _link_leaves_root(link, case.links[link]):
                    return True
    return False


def _relative(path: str, root: Path) -> str:
    """A patch path as the workspace-relative POSIX path it spells (``""``: the root)."""
    prefix = str(root).rstrip("/") + "/"
    if path.startswith(prefix):
        path = path[len(prefix):]
    return "/".join(p for p in path.split("/") if p not in ("", "."))


def _named_paths(case: Case, root: Path) -> list[tuple[str, str]]:
    """Every path the patch names, as (role, spelled path): role ``add``, ``delete``,
    ``update``, ``move from`` or ``move to``."""
    try:
        hunks = parse(case.text_for(root)).hunks
    except PatchtxError:
        return []
    named: list[tuple[str, str]] = []
    for hunk in hunks:
        if isinstance(hunk, AddFile):
            named.append(("add", hunk.path))
        elif isinstance(hunk, DeleteFile):
            named.append(("delete", hunk.path))
        elif hunk.move_to is None:
            named.append(("update", hunk.path))
        else:
            named += [("move from", hunk.path), ("move to", hunk.move_to)]
    return named


def _resolve_links(case: Case, parts: Sequence[str]) -> list[str] | None:
    """The real root-relative path of ``parts``, every symlink of the input tree followed (as
    realpath does); None if one leaves the root."""
    real: list[str] = []
    pending = list(parts)
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not real:
                return None
            real.pop()
            continue
        target = case.links.get("/".join([*real, part]))
        if target is None:
            real.append(part)
            continue
        hops += 1
        if hops > 40 or os.path.isabs(target):
            return None
        pending = target.split("/") + pending
    return real


def _windows_path(path: str) -> bool:
    return "\\" in path or (len(path) >= 2 and path[1] == ":" and path[0].isascii() and path[0].isalpha())


def _reserved_path(parts: Sequence[str]) -> bool:
    return ".git" in parts or ".patchtx" in parts  # (a nested workspace's state folder too: issue 24)


def _refused_path_label(case: Case, px: PatchtxOutcome, error: UnsafePathError) -> tuple[str, str] | None:
    """patchtx's path refusals of DESIGN §2 / docs/format.md beyond paths that leave the root, by
    the shape of the path: an ``unsafe_path`` error naming a path the patch spells, which is

    - WINDOWS_PATH: with a backslash or a drive-letter prefix (``C:``);
    - RESERVED: with a ``.git`` or a ``.patchtx`` component, as spelled or once
      the input tree's symlinks are followed;
    - SYMLINK_LEAF: the path of an Add, Delete or Move (either end) that is itself a symlink of the
      input tree (parent folders followed) with its target inside the root.

    Returns the label and the root-relative path as spelled (the caller checks Codex's side)."""
    if error.kind != "unsafe_path" or error.path is None:
        return None
    roles = [role for role, spelled in _named_paths(case, px.root) if spelled == error.path]
    rel = _relative(error.path, px.root)
    if not roles or not rel:
        return None
    if _windows_path(error.path):
        return Allowed.WINDOWS_PATH, rel
    parts = rel.split("/")
    parent = _resolve_links(case, parts[:-1])
    if parent is None:
        return None
    real = _resolve_links(case, [*parent, parts[-1]])
    if _reserved_path(parts) or (real is not None and _reserved_path(real)):
        return Allowed.RESERVED, rel
    leaf_is_link = "/".join([*parent, parts[-1]]) in case.links
    if leaf_is_link and real is not None and any(role != "update" for role in roles):
        return Allowed.SYMLINK_LEAF, rel
    return None


_CODEX_PATH_ERRORS = ("Failed to read file to update", "Failed to write file", "Failed to delete file",
                      "Failed to create parent directories for", "Failed to remove original", "Failed to read")


def _codex_accepts_or_fails_there(case: Case, codex: CodexOutcome, px: PatchtxOutcome, dirs: Workdirs,
                                  verdict: Verdict, rel: str) -> bool:
    """Codex's side of a path refusal: Codex succeeded, or Codex failed on that very path (its
    error names it: e.g. deleting a dangling link, updating a missing file inside .git) and
    changed nothing, or only applied the operations before it (Codex is not atomic)."""
    if codex.ok:
        return True
    named = [f"{what} {ROOT_TOKEN}/{rel}" for what in _CODEX_PATH_ERRORS]
    if not any(codex.message == text or codex.message.startswith(text + ": ") for text in named):
        return False
    return codex.tree == case.input_tree or _codex_prefix_explains(case, codex, px, dirs, verdict)


def _link_leaves_root(link: str, target: str) -> bool:
    if os.path.isabs(target):
        return True
    joined = os.path.normpath(os.path.join(os.path.dirname(link), target))
    return joined == ".." or joined.startswith("../")


_STACKED = re.compile(r"^Invalid patch hunk on line (\d+): Unexpected line found in update hunk: '@@ ")


def _codex_rejected_stacked_anchor(case: Case, codex: CodexOutcome, px: PatchtxOutcome) -> bool:
    """Codex's parse error names an ``@@ anchor`` line that directly follows another ``@@`` line
    (the instructions' stacked anchors), Codex changed nothing, and patchtx's parser got past that
    line (it parses the patch, or stops at a later line)."""
    match = _STACKED.match(codex.message)
    if not match or codex.tree != case.input_tree:
        return False
    line = int(match.group(1))
    try:
        lines = unwrap(case.text_for(px.root))
    except PatchtxError:
        return False
    if not 2 <= line <= len(lines):
        return False
    previous, rejected = lines[line - 2].rstrip(), lines[line - 1].rstrip()
    # (patchtx also takes a bare '@@' that closes a stack of anchors)
    if not ((rejected.startswith("@@ ") and (previous == "@@" or previous.startswith("@@ ")))
            or (rejected == "@@" and previous.startswith("@@ "))):
        return False
    try:
        parse(case.text_for(px.root))
    except ParseError as exc:
        return exc.line is not None and exc.line > line
    return True


def _bom_explains(case: Case, dirs: Workdirs, verdict: Verdict, how: Counterfactual) -> bool:
    """patchtx ignores a UTF-8 BOM for matching and keeps it on disk: on the input with every
    BOM removed, Codex and patchtx must agree, and patchtx's result with the BOM may differ from
    its result without it only by the BOM at the start of files (Codex sees the BOM as text of
    the first line, so its matching fails or its line count differs)."""
    bom = BOM.encode()
    with_bom = [p for p, d in case.files.items() if d.startswith(bom)]
    if not with_bom:
        return False
    stripped = Case(case.name + " [BOM stripped]", case.patch,
                    {p: d[len(bom):] if p in with_bom else d for p, d in case.files.items()},
                    case.modes, case.dirs, case.links)
    sub = Verdict()
    try:
        _classify(stripped, run_codex_case(stripped, dirs), dirs, sub, how)
    except Divergence:
        return False
    px_bom = run_patchtx_case(case, dirs, how)
    px_plain = run_patchtx_case(stripped, dirs, how)
    if px_bom.ok != px_plain.ok:
        return False
    if not px_bom.ok:
        return px_bom.message == px_plain.message
    a, b = px_bom.tree, px_plain.tree
    if set(a.files) != set(b.files) or a.dirs != b.dirs or a.links != b.links:
        return False
    if any(a.files[p] not in (b.files[p], bom + b.files[p]) for p in a.files):
        return False
    for label in [*sub.labels, Allowed.BOM]:
        verdict.add(label)
    return True


def _compare_failure(case: Case, codex: CodexOutcome, px: PatchtxOutcome, dirs: Workdirs,
                     verdict: Verdict) -> None:
    inp = case.input_tree
    if px.tree != inp:
        raise _divergence(case, codex, px, "patchtx failed but the tree changed")
    if codex.message != px.message:
        if _codex_rejected_stacked_anchor(case, codex, px):
            verdict.add(Allowed.STACKED)
            return
        raise _divergence(case, codex, px,
                          f"error texts differ:\n  codex:   {codex.message!r}\n  patchtx: {px.message!r}")
    if codex.tree == inp:
        return
    try:
        parse(case.text_for(px.root))
    except PatchtxError as exc:
        raise _divergence(case, codex, px, "Codex changed the tree on a parse error") from exc
    if not _codex_prefix_explains(case, codex, px, dirs, verdict):
        raise _divergence(case, codex, px, "Codex changed the tree, but not as any prefix of the patch")


def _codex_prefix_explains(case: Case, codex: CodexOutcome, px: PatchtxOutcome, dirs: Workdirs,
                           verdict: Verdict) -> bool:
    """Codex failed but left earlier operations applied: its tree must be a proper prefix of the
    patch, applied (by patchtx with Codex's overwrite and first-match behaviour)."""
    try:
        parsed = parse(case.text_for(px.root))
    except PatchtxError:
        return False
    hunks = move_to_self_as_delete(parsed, px.root).hunks if px.how.move_to_self_deletes else parsed.hunks
    codexlike = replace(px.how, allow_overwrite=True, first_match=True, strict=True)
    for k in range(len(hunks) - 1, 0, -1):
        prefix = run_patchtx_case(case, dirs, codexlike, patch=Patch(hunks=tuple(hunks[:k])))
        if not prefix.ok:
            continue
        sub = Verdict()
        try:
            _compare_success(case, codex, prefix, sub)
        except Divergence:
            continue
        verdict.add(Allowed.ATOMIC)
        for label in sub.labels:
            verdict.add(label)
        return True
    return False


def _compare_summary(case: Case, codex: CodexOutcome, px: PatchtxOutcome) -> None:
    """Codex's success summary on stdout (patchtx's drop-in apply_patch prints the same)."""
    if px.how.move_to_self_deletes:
        return  # the rewritten patch has an extra Delete; the summary of the real one is not compared
    assert px.plan is not None
    ours = codex_summary(px.plan).replace(str(px.root), ROOT_TOKEN)
    theirs = codex.run.stdout.replace(str(codex.root), ROOT_TOKEN)
    if ours != theirs:
        raise _divergence(case, codex, px, f"success summaries differ:\n  codex:   {theirs!r}\n"
                                           f"  patchtx: {ours!r}")


def _compare_success(case: Case, codex: CodexOutcome, px: PatchtxOutcome, verdict: Verdict) -> None:
    plan = px.plan
    assert plan is not None and plan.patch is not None
    inp = case.input_tree
    ctree, xtree = codex.tree, px.tree
    replays: dict[frozenset[str], dict[str, bytes | None | object]] = {}
    subsets = [frozenset(c) for n in range(len(REWRITE_RULES) + 1)
               for c in itertools.combinations(REWRITE_RULES, n)]
    for rules in subsets:
        replays[rules] = replay(plan, rules, px.how.first_match)
    for rel in sorted(set(ctree.files) | set(xtree.files)):
        c, x = ctree.files.get(rel), xtree.files.get(rel)
        if c == x:
            continue
        if c is None or x is None:
            raise _divergence(case, codex, px, f"{rel!r} exists in one tree only")
        # A rule difference explains Codex's bytes only if patchtx's own bytes are what its
        # documented rules give (the model with no rule switched), and Codex's are what the model
        # gives with the rule(s) switched to Codex's.
        if replays[frozenset()].get(rel) != x:
            raise _divergence(case, codex, px, f"contents of {rel!r} differ, and patchtx's are not "
                                               f"what its documented rules give:\n  codex:   {c!r}\n"
                                               f"  patchtx: {x!r}\n  rules:   "
                                               f"{replays[frozenset()].get(rel)!r}")
        for rules in subsets[1:]:
            if replays[rules].get(rel) == c:
                for label in REWRITE_RULES:
                    if label in rules:
                        verdict.add(label)
                break
        else:
            raise _divergence(case, codex, px, f"contents of {rel!r} differ:\n  codex:   {c!r}\n"
                                               f"  patchtx: {x!r}")
    for rel in sorted(set(ctree.modes) & set(xtree.modes)):
        if ctree.modes[rel] != xtree.modes[rel]:
            if _mode_kept_on_move(plan, inp, rel, ctree.modes[rel], xtree.modes[rel]):
                verdict.add(Allowed.MODE)
                continue
            raise _divergence(case, codex, px, f"mode of {rel!r}: codex {ctree.modes[rel]:o}, "
                                               f"patchtx {xtree.modes[rel]:o}")
    extra_dirs = ctree.dirs - xtree.dirs
    if extra_dirs:
        # Codex leaves them empty; patchtx removed them (emptied by the patch) or never made them
        # (created and emptied by the patch: a Move into a new folder, then a Delete there).
        explained = {d for d in extra_dirs if d in plan.remove_dirs or d not in inp.dirs}
        if explained != extra_dirs or any(f.startswith(d + "/") for d in extra_dirs
                                          for f in [*ctree.files, *ctree.links]):
            raise _divergence(case, codex, px, f"directories {sorted(extra_dirs)} missing")
        verdict.add(Allowed.EMPTY_DIRS)
    if xtree.dirs - ctree.dirs:
        raise _divergence(case, codex, px, f"directories {sorted(xtree.dirs - ctree.dirs)} extra")
    if ctree.links != xtree.links:
        raise _divergence(case, codex, px, "symlinks differ")


def _mode_kept_on_move(plan: Plan, inp: Tree, rel: str, codex_mode: int, px_mode: int) -> bool:
    """``rel`` holds a file moved there (followed back through the patch's Moves, and Updates and
    overwriting Adds, which keep the mode, to a file of the input), and patchtx kept that file's
    mode where Codex gave it the default mode (or left the one ``rel`` had)."""
    origin: str | None = rel
    moved = False
    for change in reversed(plan.changes):
        if change.path != origin:
            continue
        if change.kind is ChangeKind.MOVE and change.source is not None:
            origin, moved = change.source, True
        elif change.kind is ChangeKind.ADD and change.overwrote is not None:
            continue  # written onto the existing file (allow_overwrite): its mode stays
        elif change.kind is not ChangeKind.UPDATE:
            origin = None  # created or deleted on the way: no mode of the input to keep
            break
    if not moved or origin is None or origin not in inp.modes:
        return False
    return px_mode == inp.modes[origin] and codex_mode in (DEFAULT_MODE, inp.modes.get(rel))
