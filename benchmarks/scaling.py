"""How the time of one patch grows with its hunks, per format (issue 39, item 2).

One file of ``4 N`` lines and one patch of ``N`` one-line hunks (one context line each side), at
two sizes four times apart (``--sizes 5000 20000``), in three formats, each beside a reference in
the same run:

- ``codex``: a ``*** Begin Patch`` patch, patchtx's CLI (``patchtx apply --root DIR patch.txt``)
  beside Codex's ``apply_patch`` (patch on stdin; found as benchmarks/appliers.py finds it);
- ``unified``: a unified diff, patchtx beside ``git apply``;
- ``blocks``: SEARCH/REPLACE blocks, patchtx alone (no reference applies them), with the Codex
  patch of the same hunks through patchtx as its yardstick.

Every applier runs as a whole process in a fresh copy of the tree (copied, and ``os.sync()``,
before the clock starts), round-robin, and every run is checked byte for byte against the expected
file. Finished runs are moved aside and deleted at the end (benchmarks/README.md, "Method").
Printed: the median wall time of each applier at each size, patchtx's ratio to its reference at
each size, and the **growth**: (time at the large size / time at the small one) / (size ratio),
1.0 for linear, 4.0 for quadratic at a size ratio of 4.

    .venv/bin/python benchmarks/scaling.py                  # 5,000 and 20,000 hunks, 3 runs
    .venv/bin/python benchmarks/scaling.py --sizes 500 2000 --runs 1   # quick
    .venv/bin/python benchmarks/scaling.py --refused        # the last hunk stale: a refusal's growth
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from appliers import find_codex  # noqa: E402

REPO = HERE.parent
BIN = REPO / ".venv" / "bin"
FORMATS = ("codex", "unified", "blocks")


def workload(n: int, refused: bool = False) -> tuple[str, str, dict[str, str]]:
    """(old file, new file, patch text per format) for ``n`` hunks; ``refused``: the last hunk's
    removed line is not in the file, so every applier refuses the patch (the new file is the old)."""
    lines = [f"line {i} of the file" for i in range(4 * n)]
    new = list(lines)
    codex, unified, blocks = ["*** Begin Patch", "*** Update File: f.txt"], \
        ["--- a/f.txt", "+++ b/f.txt"], []
    for k in range(n):
        i = 4 * k + 1
        new[i] = f"changed {i}"
        old = "stale line" if refused and k == n - 1 else lines[i]
        codex += ["@@", f" {lines[i - 1]}", f"-{old}", f"+{new[i]}", f" {lines[i + 1]}"]
        unified += [f"@@ -{i},3 +{i},3 @@", f" {lines[i - 1]}", f"-{old}", f"+{new[i]}",
                    f" {lines[i + 1]}"]
        blocks += ["f.txt", "<<<<<<< SEARCH", lines[i - 1], old, "=======", lines[i - 1],
                   new[i], ">>>>>>> REPLACE", ""]
    if refused:
        new = lines
    codex.append("*** End Patch")
    text = "".join(line + "\n" for line in lines)
    return text, "".join(line + "\n" for line in new), {
        "codex": "\n".join(codex) + "\n", "unified": "\n".join(unified) + "\n",
        "blocks": "\n".join(blocks) + "\n"}


def appliers(fmt: str, codex: Path | None, fsync: bool) -> list[tuple[str, list[str] | None, str]]:
    """(name, argv or None when missing, patch file) for one format: patchtx first, then its
    reference."""
    flags = [] if fsync else ["--no-fsync"]
    ours = [str(BIN / "patchtx"), "apply", *flags, "--root", "."]
    if fmt == "codex":
        return [("patchtx", [*ours, "patch.codex"], "patch.codex"),
                ("codex", [str(codex)] if codex else None, "patch.codex")]
    if fmt == "unified":
        return [("patchtx", [*ours, "patch.diff"], "patch.diff"),
                ("git apply", ["git", "apply", "patch.diff"], "patch.diff")]
    return [("patchtx", [*ours, "patch.blocks"], "patch.blocks"),
            ("patchtx codex", [*ours, "patch.codex"], "patch.codex")]


def run_once(argv: list[str], cwd: Path, stdin: Path | None, refused: bool = False) -> float:
    started = time.perf_counter()
    with open(stdin or os.devnull, "rb") as given:
        done = subprocess.run(argv, cwd=cwd, stdin=given, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False,
                              env={**os.environ, "GIT_CEILING_DIRECTORIES": str(cwd.parent)})
    wall = time.perf_counter() - started
    if (done.returncode != 0) != refused:
        raise SystemExit(f"{argv[0]} failed in {cwd}: {done.stderr.decode(errors='replace')[:400]}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[5000, 20000], metavar=("SMALL", "LARGE"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=FORMATS, default=list(FORMATS))
    parser.add_argument("--codex", help="the Codex apply_patch symlink (default: as run.py finds it)")
    parser.add_argument("--no-fsync", action="store_true", help="patchtx with --no-fsync")
    parser.add_argument("--workdir", default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--refused", action="store_true",
                        help="the last hunk stale: the time to refuse the patch (every applier must)")
    args = parser.parse_args()
    codex = find_codex(args.codex)
    scratch = Path(tempfile.mkdtemp(prefix="patchtx-scaling-", dir=args.workdir))
    done = scratch / "done"
    done.mkdir()
    times: dict[tuple[str, str, int], list[float]] = {}
    try:
        trees = {}
        for n in args.sizes:
            old, new, patches = workload(n, args.refused)
            source = scratch / f"source-{n}"
            source.mkdir()
            (source / "f.txt").write_text(old)
            for fmt, suffix in (("codex", "codex"), ("unified", "diff"), ("blocks", "blocks")):
                (scratch / f"patch-{n}.{suffix}").write_text(patches[fmt])
            trees[n] = (source, new.encode())
        count = 0
        for run in range(args.runs + 1):  # the first round warms up (bytecode, page cache)
            for n in args.sizes:
                source, expected = trees[n]
                for fmt in args.only:
                    for name, argv, patch in appliers(fmt, codex, not args.no_fsync):
                        if argv is None:
                            continue
                        count += 1
                        tree = scratch / f"run-{count}"
                        shutil.copytree(source, tree)
                        shutil.copy(scratch / f"patch-{n}.{patch.split('.')[1]}", tree / patch)
                        os.sync()
                        wall = run_once(argv, tree, tree / patch if name == "codex" else None, args.refused)
                        if (tree / "f.txt").read_bytes() != expected:
                            raise SystemExit(f"{name} on {fmt} at {n} hunks wrote another file ({tree})")
                        if run:
                            times.setdefault((fmt, name, n), []).append(wall)
                        tree.rename(done / tree.name)
        small, large = args.sizes
        print(f"load average {os.getloadavg()[0]:.2f}; runs {args.runs}; sizes {small} and {large}"
              f" hunks; patchtx {'--no-fsync' if args.no_fsync else 'durable'}"
              f"{'; the last hunk stale: every patch refused' if args.refused else ''}")
        print(f"{'format':8s} {'applier':14s} {small:>9d} {large:>9d}  growth  ratio at {small} / {large}")
        for fmt in args.only:
            rows = [(name, argv) for name, argv, _ in appliers(fmt, codex, not args.no_fsync)]
            reference = rows[1][0] if rows[1][1] is not None else None
            for name, argv in rows:
                if argv is None:
                    print(f"{fmt:8s} {name:14s} not found (scripts/install-codex-reference.sh)")
                    continue
                a, b = (statistics.median(times[fmt, name, n]) for n in (small, large))
                growth = (b / a) / (large / small)
                ratio = ""
                if name == "patchtx" and reference is not None:
                    ra, rb = (statistics.median(times[fmt, reference, n]) for n in (small, large))
                    ratio = f"{a / ra:.2f}x / {b / rb:.2f}x {reference}"
                print(f"{fmt:8s} {name:14s} {a:8.3f}s {b:8.3f}s  {growth:5.2f}   {ratio}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
