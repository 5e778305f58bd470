"""The tiny edit through the command line, as run.py times it, against other checkouts in one loop.

Each run is a whole ``apply_patch 'PATCH'`` process (the console script pip wrote, which imports
``re`` first) in a fresh copy of the tiny-edit tree, so that its first transaction also creates
``.patchtx/``; ``python -c pass`` runs in the same loop. Several checkouts (their ``src`` folders,
put first on ``PYTHONPATH``) are run round-robin, so that a change is measured against the code
before it while the machine does the same thing to both:

    .venv/bin/python benchmarks/tiny_edit.py --checkout src --checkout /path/to/main/src --runs 40

With ``--patchtx-apply`` each run is ``patchtx apply FILE`` instead (the patch in a file outside
the tree): the command a person types, with its defaults (the syntax guard warns).

The table shows wall and CPU time (user + system, from ``wait4``) of the process, minimum and
median in milliseconds, and the median's ratio to ``python -c pass``. Every run is checked: the
tree must end as the workload expects.
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
import workloads as wl  # noqa: E402

REPO = HERE.parent
BIN = REPO / ".venv" / "bin"


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process, which must succeed."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    assert child.stderr is not None
    error = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[0]} failed in {cwd}:\n{error}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", action="append", default=[], metavar="SRC",
                        help="a src folder to import patchtx from (repeat to compare; default: src)")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per checkout (default: 30)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "patchtx-tiny-edit",
                        help="scratch folder (default: $TMPDIR/patchtx-tiny-edit)")
    parser.add_argument("--patchtx-apply", action="store_true",
                        help="time `patchtx apply FILE` instead of `apply_patch 'PATCH'`")
    args = parser.parse_args()
    checkouts = [str(Path(c).resolve()) for c in (args.checkout or ["src"])]
    work = wl.tiny()
    shutil.rmtree(args.workdir, ignore_errors=True)
    folder = wl.materialize(work, args.workdir)
    patch = work.codex_patch
    patch_file = args.workdir / "tiny.patch"
    patch_file.write_text(patch)
    # As run.py: no PYTHON* variables (PYTHONDONTWRITEBYTECODE would time the compiler).
    plain = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    copies = 0

    def fresh() -> Path:
        nonlocal copies
        copies += 1
        tree = args.workdir / "runs" / f"r{copies:05d}"
        shutil.copytree(folder / "input", tree)
        os.sync()  # the copy is on disk before the clock starts, as a real tree would be
        return tree

    def edit(checkout: str) -> tuple[float, float]:
        tree = fresh()
        argv = ([str(BIN / "patchtx"), "apply", str(patch_file)] if args.patchtx_apply
                else [str(BIN / "apply_patch"), patch])
        timing = _timed(argv, tree, {**plain, "PYTHONPATH": checkout})
        problems = wl.compare_trees(tree, work.expected)
        if problems:
            raise SystemExit(f"{checkout}: wrong result in {tree}: {problems}")
        return timing

    samples: dict[str, list[tuple[float, float]]] = {c: [] for c in [*checkouts, "python -c pass"]}
    for checkout in checkouts:  # warm-up: bytecode caches, the page cache
        edit(checkout)
    for _ in range(args.runs):
        for checkout in checkouts:
            samples[checkout].append(edit(checkout))
        samples["python -c pass"].append(_timed([str(BIN / "python"), "-c", "pass"], args.workdir, plain))
    # Deleted last: the inode allocator skips recently freed inodes (see run.py's Runner).
    shutil.rmtree(args.workdir)

    floor = statistics.median(wall for wall, _ in samples["python -c pass"])
    floor_cpu = statistics.median(cpu for _, cpu in samples["python -c pass"])
    print(f"{'':40} {'wall min':>9} {'median':>8} {'CPU min':>8} {'median':>8} {'ratio':>6} {'CPU ratio':>9}")
    for name, runs in samples.items():
        walls = [wall * 1e3 for wall, _ in runs]
        cpus = [cpu * 1e3 for _, cpu in runs]
        print(f"{name[-40:]:40} {min(walls):9.2f} {statistics.median(walls):8.2f} {min(cpus):8.2f} "
              f"{statistics.median(cpus):8.2f} {statistics.median(walls) / floor / 1e3:6.2f} "
              f"{statistics.median(cpus) / floor_cpu / 1e3:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
