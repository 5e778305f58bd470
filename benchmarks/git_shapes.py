"""Real history as every shape of patch git makes: each commit of a local repository as 8 git
patches, applied with patchtx and with ``git apply`` to the right tree in scratch folders.

    .venv/bin/python benchmarks/git_shapes.py --repo PATH [--count 50] [--skip 0] [--binary] [-v]

``--repo`` is a repository on disk (a work tree or a bare git folder; nothing is fetched). For the
newest ``--count`` commits that have one parent (after ``--skip``), the shapes are:

=============  ===============================================  ======================================
shape          the patch                                        applied to, with
=============  ===============================================  ======================================
``-M``         ``git diff -M P C``                              P's tree
``-M -C``      ``git diff -M -C P C``                           P's tree
``--binary``   ``git diff --binary P C``                        P's tree
``-U0``        ``git diff -U0 P C``                             P's tree, ``--unidiff-zero``
``-U1``        ``git diff -U1 P C``                             P's tree
``--no-prefix`` ``git diff --no-prefix P C``                    P's tree, ``-p0``
``-R``         ``git diff P C``                                 C's tree, ``-R``
``format-patch`` ``git format-patch -1 --stdout C``             P's tree
=============  ===============================================  ======================================

Only the paths the commit touches are put in the trees (checked out of the repository's objects:
bytes, the executable bit, symbolic links). Each applier's answer is ``right`` (exit 0 and every
touched path as the other side of the commit has it), ``refused`` (a non-zero exit; for patchtx a
``PatchtxError``, ``torn`` if it changed the tree) or ``wrong`` (exit 0 with another tree). The
table is printed per shape and in total; ``-v`` lists every case that is not right.
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

SHAPES: dict[str, tuple[list[str], list[str], bool]] = {
    # name: (git diff options, apply options, applied to the commit's tree: -R)
    "-M": (["-M"], [], False),
    "-M -C": (["-M", "-C"], [], False),
    "--binary": (["--binary"], [], False),
    "-U0": (["-U0"], ["--unidiff-zero"], False),
    "-U1": (["-U1"], [], False),
    "--no-prefix": (["--no-prefix"], ["-p0"], False),
    "-R": ([], ["-R"], True),
    "format-patch": ([], [], False),
}
OUTCOMES = ("right", "refused", "wrong", "torn")
Tree = dict[str, tuple[bytes, int]]
"""path -> (bytes, or a link's target; 0o755 / 0o644 / 0o120000)"""


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    return subprocess.run(["git", f"--git-dir={repo}", "-c", "core.quotepath=false", *args],
                          check=True, capture_output=True, env=env).stdout


def _git_dir(repo: Path) -> Path:
    found = subprocess.run(["git", "-C", str(repo), "rev-parse", "--absolute-git-dir"],
                           check=True, capture_output=True, text=True).stdout.strip()
    return Path(found)


def commits(repo: Path, count: int, skip: int, binary: bool = False) -> list[tuple[str, str]]:
    """(parent, commit) of the newest ``count`` commits with one parent, after ``skip``;
    ``binary``: only those that change a binary file (``git diff --numstat`` says ``-``)."""
    out = _git(repo, "rev-list", "--no-merges", "--parents", f"--skip={skip}", "HEAD").decode()
    pairs = []
    for line in out.split("\n"):
        fields = line.split()
        if len(fields) != 2:
            continue
        if binary and b"-\t-\t" not in _git(repo, "diff", "--numstat", fields[1], fields[0]):
            continue
        pairs.append((fields[1], fields[0]))
        if len(pairs) == count:
            break
    return pairs


def touched(repo: Path, parent: str, commit: str) -> list[str]:
    names = _git(repo, "diff", "--no-renames", "--name-only", "-z", parent, commit)
    return [name.decode("utf-8", "surrogateescape") for name in names.split(b"\0") if name]


def checkout(repo: Path, commit: str, paths: list[str], into: Path, scratch: Path) -> None:
    """The ``paths`` of ``commit`` that exist in it, written under ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_INDEX_FILE": str(scratch / "index")}
    _git(repo, "read-tree", commit, env=env)
    present = set(_git(repo, "ls-files", "-z", env=env).decode("utf-8", "surrogateescape").split("\0"))
    wanted = [path for path in paths if path in present]
    if wanted:
        subprocess.run(["git", f"--git-dir={repo}", f"--work-tree={into}", "checkout-index", "-z",
                        "--stdin", "-f"], input="\0".join(wanted).encode("utf-8", "surrogateescape"),
                       env=env, check=True, capture_output=True)
    (scratch / "index").unlink()


def read_tree(root: Path) -> Tree:
    out: Tree = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".patchtx", ".git")]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            full = Path(folder, name)
            info = full.lstat()
            rel = full.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                out[rel] = (os.readlink(full).encode("utf-8", "surrogateescape"), 0o120000)
            else:
                out[rel] = (full.read_bytes(), 0o755 if info.st_mode & 0o100 else 0o644)
    return out


def run_patchtx(patch: bytes, root: Path, options: list[str]) -> str:
    from patchtx import apply_patch
    from patchtx.errors import PatchtxError

    try:
        apply_patch(patch.decode("utf-8", "surrogateescape"), root,
                    strip=0 if "-p0" in options else None, reverse="-R" in options,
                    unidiff_zero="--unidiff-zero" in options, durable=False, history_count=0)
    except PatchtxError as error:
        return f"refused {error.kind}: {error.message[:160]}"
    return ""


def run_git(patch: bytes, root: Path, options: list[str]) -> str:
    (root.parent / "p.diff").write_bytes(patch)
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(root.parent), "LC_ALL": "C"}
    done = subprocess.run(["git", "apply", *options, str(root.parent / "p.diff")], cwd=root, env=env,
                          capture_output=True)
    return "" if done.returncode == 0 else "refused " + done.stderr.decode("utf-8", "replace")[:160]


APPLIERS = {"patchtx": run_patchtx, "git apply": run_git}


def make_patch(repo: Path, parent: str, commit: str, shape: str) -> bytes:
    diff_options = SHAPES[shape][0]
    if shape == "format-patch":
        return _git(repo, "format-patch", "-1", "--stdout", commit)
    return _git(repo, "diff", *diff_options, parent, commit)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--skip", type=int, default=0)
    parser.add_argument("--binary", action="store_true",
                        help="only commits that change a binary file")
    parser.add_argument("-v", action="store_true", dest="verbose")
    args = parser.parse_args(argv)
    repo = _git_dir(args.repo)
    counts = {name: {shape: Counter[str]() for shape in SHAPES} for name in APPLIERS}
    pairs = commits(repo, args.count, args.skip, args.binary)
    with tempfile.TemporaryDirectory() as temp:
        scratch = Path(temp)
        for parent, commit in pairs:
            paths = touched(repo, parent, commit)
            trees: dict[str, Tree] = {}
            for side, rev in (("parent", parent), ("commit", commit)):
                checkout(repo, rev, paths, scratch / side, scratch)
                trees[side] = read_tree(scratch / side)
            for shape, (_, options, reverse) in SHAPES.items():
                patch = make_patch(repo, parent, commit, shape)
                base, expected = ("commit", "parent") if reverse else ("parent", "commit")
                for name, run in APPLIERS.items():
                    work = scratch / "work"
                    root = work / "tree"
                    shutil.copytree(scratch / base, root, symlinks=True)
                    why = run(patch, root, options)
                    tree = read_tree(root)
                    shutil.rmtree(work)
                    if why:
                        result = "refused" if tree == trees[base] else "torn"
                    else:
                        result = "right" if tree == trees[expected] else "wrong"
                    counts[name][shape][result] += 1
                    if args.verbose and result != "right":
                        print(f"  {name:9} {shape:12} {commit[:10]} {result}: {why.strip()[:200]}")
            for side in ("parent", "commit"):
                shutil.rmtree(scratch / side)
    print(f"{args.repo}: {len(pairs)} commits x {len(SHAPES)} shapes")
    print(f"{'shape':14}" + "".join(f"{name + ' ' + kind:>20}" for name in APPLIERS
                                     for kind in ("right", "refused", "wrong")))
    for shape in [*SHAPES, "total"]:
        row = f"{shape:14}"
        for name in APPLIERS:
            got = (sum(counts[name].values(), Counter[str]()) if shape == "total"
                   else counts[name][shape])
            row += "".join(f"{got[kind] + (got['torn'] if kind == 'wrong' else 0):>20}"
                           for kind in ("right", "refused", "wrong"))
        print(row)
    torn = sum(c["torn"] for shapes in counts.values() for c in shapes.values())
    print(f"(wrong counts torn trees: {torn})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
