"""Reproducible benchmark workloads: an input tree, the expected tree, and the same change written
as a Codex ``*** Begin Patch`` patch and as a git-style unified diff.

Everything is generated from a seed with :class:`random.Random`, so the same parameters give the
same bytes on every machine (``Workload.fingerprint`` is a hash of all of it).

Rules every workload follows, so that every applier should produce the same tree:

- every file ends with a newline (Codex adds one when it is missing; patchtx keeps the state);
- every edited line is unique in the whole tree, and every hunk contains one, so no hunk is
  ambiguous (patchtx refuses ambiguous hunks; Codex takes the first match);
- no hunk is a pure insertion (Codex and patchtx place those differently under an ``@@`` anchor);
- nothing is added or moved onto an existing path (patchtx refuses overwrites by default);
- no delete or move empties a directory (patchtx removes emptied directories, Codex leaves them);
- lines have no trailing whitespace and are ASCII (no fuzzy matching pass is needed).

A *miss* workload has an expected tree equal to its input: the applier must fail, report the
error, and leave the tree unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

GENERATOR_VERSION = 3
CONTEXT = 3  # context lines around each change, in both formats

_WORDS = (
    "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega vector matrix buffer "
    "cursor window frame packet stream record ledger parser lexer token symbol scope module "
    "handle socket channel signal worker queue batch shard cache index table column schema "
    "commit branch merge rebase patch hunk chunk anchor offset length weight margin border"
).split()

_COMMON_LINES = ("", "", "", "        return result", "    pass", "        else:", "    }")


@dataclass(frozen=True)
class Edit:
    """Replace ``len(old)`` lines starting at 0-based line ``start`` with ``new``."""

    start: int
    old: tuple[str, ...]
    new: tuple[str, ...]


@dataclass
class FileOp:
    kind: str  # "add" | "delete" | "update"
    path: str
    move_to: str | None = None
    edits: list[Edit] = field(default_factory=list)
    lines: list[str] | None = None  # add: the new file's lines; update/delete: the old lines


@dataclass
class Workload:
    name: str
    title: str
    description: str
    params: dict[str, object]
    input: dict[str, bytes]
    expected: dict[str, bytes]
    codex_patch: str
    unified_diff: str
    ops: list[FileOp]
    expect_failure: bool = False
    argv_patch: bool = False
    """Pass the Codex patch as the one command-line argument (the agent case) instead of a file."""
    group: str = "main"
    """"main" workloads are in the table and the targets; "sweep" ones feed the plot."""
    appliers: tuple[str, ...] | None = None
    """The keys of the appliers timed on it (None: every applier)."""

    @property
    def files_touched(self) -> int:
        """Paths the patch changes (a move counts its source and its destination)."""
        return sum(2 if op.move_to else 1 for op in self.ops)

    @property
    def operations(self) -> int:
        return len(self.ops)

    @property
    def hunks(self) -> int:
        return sum(max(1, len(op.edits)) for op in self.ops)

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for tree in (self.input, self.expected):
            for path in sorted(tree):
                digest.update(path.encode() + b"\0" + hashlib.sha256(tree[path]).digest())
        digest.update(self.codex_patch.encode())
        digest.update(self.unified_diff.encode())
        return digest.hexdigest()[:16]

    def summary(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "params": self.params,
            "group": self.group,
            "expect_failure": self.expect_failure,
            "argv_patch": self.argv_patch,
            "input_files": len(self.input),
            "input_bytes": sum(len(b) for b in self.input.values()),
            "operations": self.operations,
            "files_touched": self.files_touched,
            "hunks": self.hunks,
            "patch_bytes": len(self.codex_patch.encode()),
            "diff_bytes": len(self.unified_diff.encode()),
            "fingerprint": self.fingerprint(),
            "generator_version": GENERATOR_VERSION,
        }


# -- content --------------------------------------------------------------------------------------


class _Lines:
    """Makes source-like lines; every 'unique' line contains a serial number used nowhere else."""

    def __init__(self, rng: random.Random, tag: str) -> None:
        self.rng = rng
        self.tag = tag
        self.serial = 0

    def unique(self, marker: str = "v") -> str:
        self.serial += 1
        r = self.rng
        a, b, c = r.choice(_WORDS), r.choice(_WORDS), r.choice(_WORDS)
        n = self.serial
        style = r.randrange(4)
        if style == 0:
            return f"    {a}_{marker}{self.tag}_{n} = {b}_helper({n % 97}, \"{c}\")"
        if style == 1:
            return f"        if {a}.{b}_{marker}{self.tag}_{n} > {r.randrange(10_000)}:"
        if style == 2:
            return f"    # {a} {b} {c}: note {marker}{self.tag}-{n}"
        return f"    result_{marker}{self.tag}_{n} = {a}({b}, {c}) + {r.randrange(1000)}"

    def body(self, count: int) -> list[str]:
        """``count`` lines: mostly unique, with blank and repeated lines as real code has."""
        out: list[str] = []
        for i in range(count):
            if i % 9 == 4:
                out.append("")
            elif self.rng.random() < 0.06:
                out.append(self.rng.choice(_COMMON_LINES))
            else:
                out.append(self.unique())
        if out:
            # A file ends with a real line: some appliers (apply-patch-py, codex-apply-patch)
            # drop a trailing blank line when they rewrite a file.
            out[-1] = self.unique()
        return out


def _is_unique_line(line: str) -> bool:
    return line not in _COMMON_LINES


def _encode(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode() if lines else b""


def _pick_edits(rng: random.Random, lines: list[str], count: int, gen: _Lines,
                window: tuple[int, int] | None = None) -> list[Edit]:
    """``count`` non-overlapping edits, each at a unique line, far enough apart that their
    context never overlaps (so each Codex chunk and each unified hunk stays separate)."""
    n = len(lines)
    lo, hi = window or (CONTEXT + 1, n - CONTEXT - 3)
    span = (hi - lo) // count
    assert span >= 2 * CONTEXT + 4, "file too short for that many edits"
    edits: list[Edit] = []
    for k in range(count):
        a = lo + k * span
        b = a + span - (2 * CONTEXT + 3)
        for _ in range(200):
            start = rng.randrange(a, max(a + 1, b))
            if _is_unique_line(lines[start]):
                break
        else:
            raise AssertionError("no unique line to edit")
        old_len = 1 if rng.random() < 0.7 else 2
        if not all(_is_unique_line(x) for x in lines[start : start + old_len]):
            old_len = 1
        new_len = rng.choice((1, 1, 2, 3))
        new = tuple(gen.unique("e") for _ in range(new_len))
        edits.append(Edit(start, tuple(lines[start : start + old_len]), new))
    return edits


def _apply_edits(lines: list[str], edits: list[Edit]) -> list[str]:
    out: list[str] = []
    cursor = 0
    for e in sorted(edits, key=lambda e: e.start):
        assert list(lines[e.start : e.start + len(e.old)]) == list(e.old)
        out.extend(lines[cursor : e.start])
        out.extend(e.new)
        cursor = e.start + len(e.old)
    out.extend(lines[cursor:])
    return out


# -- the two patch formats ------------------------------------------------------------------------


def _codex_chunks(lines: list[str], edits: list[Edit]) -> list[str]:
    out: list[str] = []
    for e in sorted(edits, key=lambda e: e.start):
        out.append("@@")
        before = lines[max(0, e.start - CONTEXT) : e.start]
        after = lines[e.start + len(e.old) : e.start + len(e.old) + CONTEXT]
        out.extend(" " + x for x in before)
        out.extend("-" + x for x in e.old)
        out.extend("+" + x for x in e.new)
        out.extend(" " + x for x in after)
    return out


def codex_patch(ops: Iterable[FileOp]) -> str:
    out = ["*** Begin Patch"]
    for op in ops:
        if op.kind == "add":
            out.append(f"*** Add File: {op.path}")
            out.extend("+" + x for x in op.lines or [])
        elif op.kind == "delete":
            out.append(f"*** Delete File: {op.path}")
        else:
            out.append(f"*** Update File: {op.path}")
            if op.move_to:
                out.append(f"*** Move to: {op.move_to}")
            out.extend(_codex_chunks(op.lines or [], op.edits))
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


def _range(start: int, count: int) -> str:
    # Unified diff ranges are 1-based; an empty range names the line before it.
    if count == 0:
        return f"{start},0"
    return f"{start + 1}" if count == 1 else f"{start + 1},{count}"


def _unified_hunks(lines: list[str], edits: list[Edit]) -> list[str]:
    """Hunks with CONTEXT lines around each edit, merging edits whose context touches."""
    out: list[str] = []
    ordered = sorted(edits, key=lambda e: e.start)
    groups: list[list[Edit]] = []
    for e in ordered:
        if groups:
            last = groups[-1][-1]
            if e.start - (last.start + len(last.old)) <= 2 * CONTEXT:
                groups[-1].append(e)
                continue
        groups.append([e])
    delta = 0
    for group in groups:
        first, last = group[0], group[-1]
        start = max(0, first.start - CONTEXT)
        end = min(len(lines), last.start + len(last.old) + CONTEXT)
        body: list[str] = []
        cursor = start
        new_count = 0
        for e in group:
            body.extend(" " + x for x in lines[cursor : e.start])
            new_count += e.start - cursor
            body.extend("-" + x for x in e.old)
            body.extend("+" + x for x in e.new)
            new_count += len(e.new)
            cursor = e.start + len(e.old)
        body.extend(" " + x for x in lines[cursor:end])
        new_count += end - cursor
        old_count = end - start
        out.append(f"@@ -{_range(start, old_count)} +{_range(start + delta, new_count)} @@")
        out.extend(body)
        delta += new_count - old_count
    return out


def unified_diff(ops: Iterable[FileOp]) -> str:
    """A git-style diff (``diff --git`` headers, ``rename from/to``), for git apply and patch -p1."""
    out: list[str] = []
    for op in ops:
        if op.kind == "add":
            lines = op.lines or []
            out += [f"diff --git a/{op.path} b/{op.path}", "new file mode 100644",
                    "--- /dev/null", f"+++ b/{op.path}", f"@@ -0,0 +{_range(0, len(lines))} @@"]
            out.extend("+" + x for x in lines)
        elif op.kind == "delete":
            lines = op.lines or []
            out += [f"diff --git a/{op.path} b/{op.path}", "deleted file mode 100644",
                    f"--- a/{op.path}", "+++ /dev/null", f"@@ -{_range(0, len(lines))} +0,0 @@"]
            out.extend("-" + x for x in lines)
        else:
            dest = op.move_to or op.path
            out.append(f"diff --git a/{op.path} b/{dest}")
            if op.move_to:
                out += ["similarity index 90%", f"rename from {op.path}", f"rename to {dest}"]
            out += [f"--- a/{op.path}", f"+++ b/{dest}"]
            out.extend(_unified_hunks(op.lines or [], op.edits))
    return "\n".join(out) + "\n"


def _finish(name: str, title: str, description: str, params: dict[str, object],
            tree: dict[str, list[str]], ops: list[FileOp], **kw: object) -> Workload:
    expected = {p: list(v) for p, v in tree.items()}
    for op in ops:
        if op.kind == "add":
            assert op.path not in expected, op.path
            expected[op.path] = list(op.lines or [])
        elif op.kind == "delete":
            op.lines = tree[op.path]
            del expected[op.path]
        else:
            op.lines = tree[op.path]
            new = _apply_edits(tree[op.path], op.edits)
            if op.move_to:
                assert op.move_to not in expected, op.move_to
                del expected[op.path]
                expected[op.move_to] = new
            else:
                expected[op.path] = new
    if kw.get("expect_failure"):
        expected = {p: list(v) for p, v in tree.items()}
    _check_no_emptied_dirs(tree, expected)
    return Workload(
        name=name, title=title, description=description, params=params,
        input={p: _encode(v) for p, v in tree.items()},
        expected={p: _encode(v) for p, v in expected.items()},
        codex_patch=codex_patch(ops), unified_diff=unified_diff(ops), ops=ops,
        **kw,  # type: ignore[arg-type]
    )


def _dirs_of(paths: Iterable[str]) -> set[str]:
    dirs: set[str] = set()
    for p in paths:
        parts = p.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return dirs


def _check_no_emptied_dirs(before: dict[str, list[str]], after: dict[str, list[str]]) -> None:
    emptied = _dirs_of(before) - _dirs_of(after)
    assert not emptied, f"workload would empty directories: {sorted(emptied)[:5]}"


# -- the workloads --------------------------------------------------------------------------------


def many_files(tree_files: int = 2000, updates: int = 1000, adds: int = 50, deletes: int = 50,
               moves: int = 20, hunks_per_file: int = 3, seed: int = 7, name: str = "many-files",
               group: str = "main", file_lines: tuple[int, int] = (120, 200),
               title: str | None = None) -> Workload:
    """A tree of source files (``file_lines`` lines each: ~8 KB by default) in 20-file packages;
    one patch updating ``updates`` of them (``hunks_per_file`` hunks each), adding, deleting, and
    moving files with one edit each."""
    rng = random.Random(seed)
    gen = _Lines(rng, "m")
    per_dir = 20
    tree: dict[str, list[str]] = {}
    for i in range(tree_files):
        path = f"src/pkg_{i // per_dir:03d}/module_{i:05d}.py"
        tree[path] = gen.body(rng.randrange(*file_lines))
    paths = sorted(tree)
    assert updates + deletes + moves <= tree_files
    chosen = rng.sample(paths, updates + deletes + moves)
    to_update = sorted(chosen[:updates])
    to_delete = sorted(chosen[updates : updates + deletes])
    to_move = sorted(chosen[updates + deletes :])
    # Never empty a directory: keep at least one untouched-or-updated file in each.
    ops: list[FileOp] = []
    for p in to_update:
        ops.append(FileOp("update", p, edits=_pick_edits(rng, tree[p], hunks_per_file, gen)))
    for j in range(adds):
        d = rng.randrange(max(1, tree_files // per_dir))
        path = f"src/pkg_{d:03d}/added_{j:04d}.py" if j % 2 else f"src/added/new_{j:04d}.py"
        ops.append(FileOp("add", path, lines=gen.body(rng.randrange(20, 60))))
    for p in to_delete:
        ops.append(FileOp("delete", p))
    for p in to_move:
        dest = "moved/" + p.split("/", 1)[1]
        ops.append(FileOp("update", p, move_to=dest, edits=_pick_edits(rng, tree[p], 1, gen)))
    _keep_dirs_nonempty(tree, ops)
    return _finish(
        name, title or f"many files ({updates} updated)",
        f"{tree_files}-file tree; the patch updates {updates} files ({hunks_per_file} hunks each), "
        f"adds {adds}, deletes {deletes}, moves {moves} with one edit each",
        {"tree_files": tree_files, "updates": updates, "adds": adds, "deletes": deletes,
         "moves": moves, "hunks_per_file": hunks_per_file, "seed": seed},
        tree, ops, group=group,
    )


def codemod(tree_files: int = 20_000, updates: int = 10_000, seed: int = 13,
            name: str = "codemod") -> Workload:
    """A codemod: a 20,000-file tree of small files (~2 KB), one hunk in each of 10,000 of them,
    nothing added, deleted or moved."""
    work = many_files(tree_files=tree_files, updates=updates, adds=0, deletes=0, moves=0,
                      hunks_per_file=1, seed=seed, name=name, file_lines=(30, 70),
                      title=f"codemod ({tree_files:,} files, {updates:,} updated)")
    # The goal compares patchtx with Codex (time and peak memory) and git apply (the moonshot);
    # every copy of the tree is 20,000 files, so the other appliers are left out.
    work.appliers = ("patchtx", "patchtx-nodiff", "patchtx-nofsync", "codex", "git-apply")
    return work


def _keep_dirs_nonempty(tree: dict[str, list[str]], ops: list[FileOp]) -> None:
    leaving = {op.path for op in ops if op.kind == "delete" or op.move_to}
    staying = {p.rsplit("/", 1)[0] for p in tree if p not in leaving}
    for d in {p.rsplit("/", 1)[0] for p in tree} - staying:
        raise AssertionError(f"seed empties {d}; choose another seed")


def huge_file(lines: int = 200_000, hunks: int = 2000, seed: int = 11,
              name: str = "huge-file") -> Workload:
    """One source file of ``lines`` lines (plus a neighbour), ``hunks`` hunks spread evenly."""
    rng = random.Random(seed)
    gen = _Lines(rng, "h")
    big = gen.body(lines)
    tree = {"big/huge_module.py": big, "big/README.txt": gen.body(10)}
    ops = [FileOp("update", "big/huge_module.py", edits=_pick_edits(rng, big, hunks, gen))]
    return _finish(name, f"huge file ({lines:,} lines, {hunks:,} hunks)",
                   f"one {lines:,}-line file; the patch has {hunks:,} hunks spread through it",
                   {"lines": lines, "hunks": hunks, "seed": seed}, tree, ops)


def drifted_file(lines: int = 200_000, hunks: int = 2000, drift: int = 37, seed: int = 11,
                 name: str = "drifted-file") -> Workload:
    """The huge file with ``drift`` lines added at its top since the diff was made: every hunk's
    stated line is off by ``drift``, so each unified-diff applier searches for every hunk (as
    for a diff made against an older version). The Codex patch, placed by content, is the same."""
    work = huge_file(lines, hunks, seed, name)
    path = "big/huge_module.py"
    top = _encode([f"# drifted {i}" for i in range(drift)])
    work.input = {**work.input, path: top + work.input[path]}
    work.expected = {**work.expected, path: top + work.expected[path]}
    work.title = f"drifted file ({lines:,} lines, {hunks:,} hunks, {drift} lines off)"
    work.description = (f"the huge file with {drift} lines added at its top after the diff was "
                        "made: every hunk's stated line is off, and found by search")
    work.params = {**work.params, "drift": drift}
    return work


def miss(lines: int = 200_000, seed: int = 11, name: str = "miss") -> Workload:
    """The huge file, and one hunk whose removed line matches nowhere (one character differs from
    the real line near 3/4 of the file): every applier must fail and leave the tree unchanged."""
    rng = random.Random(seed)
    gen = _Lines(rng, "h")
    big = gen.body(lines)
    tree = {"big/huge_module.py": big, "big/README.txt": gen.body(10)}
    target = (lines * 3) // 4
    while not _is_unique_line(big[target]) or not big[target].strip():
        target += 1
    real = big[target]
    typo = real.replace("_", "-", 1) if "_" in real else real + "!"
    assert typo not in big
    edit = Edit(target, (typo,), (gen.unique("e"),))
    op = FileOp("update", "big/huge_module.py", edits=[edit])
    op.lines = big[:target] + [typo] + big[target + 1 :]  # the diffs show the typo as removed
    work = _finish(name, f"miss ({lines:,}-line file)",
                   f"one hunk in the {lines:,}-line file whose removed line differs by one character "
                   "from the file: time to the error (hints included); the tree must stay unchanged",
                   {"lines": lines, "seed": seed, "target_line": target + 1},
                   tree, [], expect_failure=True)
    work.ops = [op]
    work.codex_patch = codex_patch([op])
    work.unified_diff = unified_diff([op])
    op.lines = big
    return work


def tiny(tree_files: int = 50, seed: int = 5, name: str = "tiny-edit") -> Workload:
    """The agent case: one hunk replacing one line in a small tree, the patch passed as argv."""
    rng = random.Random(seed)
    gen = _Lines(rng, "t")
    tree = {f"app/module_{i:03d}.py": gen.body(rng.randrange(60, 120)) for i in range(tree_files)}
    path = f"app/module_{min(7, tree_files - 1):03d}.py"
    lines = tree[path]
    edits = _pick_edits(rng, lines, 1, gen)
    edits = [Edit(edits[0].start, edits[0].old[:1], edits[0].new[:1])]
    ops = [FileOp("update", path, edits=edits)]
    return _finish(name, "tiny edit (agent case)",
                   f"{tree_files}-file tree; one hunk replacing one line, the patch passed as the "
                   "command-line argument (apply_patch 'PATCH')",
                   {"tree_files": tree_files, "seed": seed}, tree, ops, argv_patch=True)


def sweep(sizes: Iterable[int] = (10, 100), seed: int = 7) -> list[Workload]:
    """The many-files shape at smaller sizes (tree = 2 x updated, 5% adds and deletes, 2% moves)."""
    out = []
    for n in sizes:
        out.append(many_files(tree_files=2 * n, updates=n, adds=max(1, n // 20),
                              deletes=max(1, n // 20), moves=max(1, n // 50), seed=seed + n,
                              name=f"sweep-{n}", group="sweep"))
    return out


def suite(quick: bool = False) -> list[Workload]:
    """The workloads of a run: full size, or a smaller ``--quick`` version of each."""
    if quick:
        return [
            many_files(tree_files=200, updates=100, adds=5, deletes=5, moves=2),
            huge_file(lines=20_000, hunks=200),
            drifted_file(lines=20_000, hunks=200),
            tiny(),
            miss(lines=20_000),
            codemod(tree_files=2_000, updates=1_000),
            *sweep((10,)),
        ]
    return [many_files(), huge_file(), drifted_file(), tiny(), miss(), codemod(), *sweep((10, 100))]


# -- on disk --------------------------------------------------------------------------------------


def write_tree(root: Path, tree: dict[str, bytes]) -> None:
    for rel, data in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def materialize(work: Workload, folder: Path) -> Path:
    """Write ``input/``, ``expected/``, ``patch.txt``, ``patch.diff`` and ``workload.json`` into
    ``folder/<name>``; reuse what is there if its fingerprint matches."""
    target = folder / work.name
    meta_path = target / "workload.json"
    summary = work.summary()
    if meta_path.exists():
        try:
            if json.loads(meta_path.read_text()).get("fingerprint") == summary["fingerprint"]:
                return target
        except (OSError, ValueError):
            pass
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    write_tree(target / "input", work.input)
    write_tree(target / "expected", work.expected)
    (target / "patch.txt").write_text(work.codex_patch)
    (target / "patch.diff").write_text(work.unified_diff)
    meta_path.write_text(json.dumps(summary, indent=2) + "\n")
    return target


def read_tree(root: Path, ignore: tuple[str, ...] = (".patchtx",)) -> tuple[dict[str, bytes],
                                                                          set[str], set[str]]:
    """(files -> bytes, directories, executable files) under ``root``, skipping ``ignore`` at the
    top level."""
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    executable: set[str] = set()
    for current, subdirs, names in os.walk(root):
        rel_dir = os.path.relpath(current, root)
        if rel_dir == ".":
            subdirs[:] = [d for d in subdirs if d not in ignore]
            names = [n for n in names if n not in ignore]
        else:
            dirs.add(rel_dir.replace(os.sep, "/"))
        for n in names:
            full = os.path.join(current, n)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            with open(full, "rb") as handle:
                files[rel] = handle.read()
            if os.stat(full).st_mode & 0o111:
                executable.add(rel)
    return files, dirs, executable


def compare_trees(actual: Path, expected: dict[str, bytes]) -> list[str]:
    """Differences between the tree at ``actual`` and ``expected`` (file set, bytes, directories,
    executable bits); empty when they agree byte for byte."""
    files, dirs, executable = read_tree(actual)
    problems: list[str] = []
    missing = sorted(set(expected) - set(files))
    extra = sorted(set(files) - set(expected))
    differ = sorted(p for p in set(files) & set(expected) if files[p] != expected[p])
    if missing:
        problems.append(f"{len(missing)} missing (e.g. {missing[0]})")
    if extra:
        problems.append(f"{len(extra)} unexpected (e.g. {extra[0]})")
    if differ:
        problems.append(f"{len(differ)} differ (e.g. {differ[0]})")
    extra_dirs = sorted(dirs - _dirs_of(expected))
    if extra_dirs:
        problems.append(f"{len(extra_dirs)} unexpected directories (e.g. {extra_dirs[0]})")
    if executable:
        problems.append(f"{len(executable)} files became executable")
    return problems
