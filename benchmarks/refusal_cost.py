"""A refusal's time against Codex's on the same input (issue 38, item 8: bounded loose passes).

Each shape is a file of typographic punctuation (curly quotes, dashes, ellipses, no-break spaces:
what Codex's last pass folds) and a patch with one hunk that the file does not hold, built so that
a search comparing the hunk at every start does the most work. Both appliers refuse it; the time
to the refusal is measured, each as a whole process (patchtx's CLI, ``patchtx apply --root DIR
patch.txt``; Codex's ``apply_patch`` with the patch on stdin), round-robin, and every run checked:
a non-zero exit and the file unchanged. Several checkouts (``--checkout SRC``, their ``src``
folders put first on ``PYTHONPATH``) run in the same loop, so a change is measured against the
code before it while the machine does the same thing to all:

    .venv/bin/python benchmarks/refusal_cost.py                     # 100,000 lines, 3,000-line hunk
    .venv/bin/python benchmarks/refusal_cost.py --lines 10000 --hunk 300 --checkout src \\
        --checkout /path/to/main/src

Shapes (``--only``):

- ``loose``: the file is one typographic line repeated; the hunk's kept lines are its ASCII
  spelling (found in the last pass only), its removed line is nowhere: every start matches all of
  the hunk but its last line. Codex's own search is quadratic here (it compares the hunk at every
  start, normalising both lines of every comparison).
- ``exact``: the same, the kept lines written as the file has them (found in the first pass).
- ``periodic``: the file cycles through five typographic lines, the hunk through their spellings.
- ``trials``: every line of the hunk stands in the file in the last pass, the hunk as a whole
  nowhere: the repair step tries each of its first 40 context lines as a lost '+' line.
- ``first``: the hunk's first line is nowhere (every start fails at once: a linear search for
  Codex too).

An applier slower than ``--slow-cap`` seconds on its first run is not run again on that shape; a
run is stopped after ``--timeout`` seconds and shown as ``>``. Medians of wall and CPU time (user +
system, from ``wait4``), and the ratio of each to Codex's.
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

LINE = "\u201cWell\u2014I don\u2019t know\u2026\u201d \u2013 \u2018maybe\u2019\u00a0\u2212 1"
ASCII = "\"Well-I don't know\u2026\" - 'maybe' - 1"  # LINE as Codex's last pass reads it
CYCLE = ["\u201c\u2026\u201d \u2014 \u201cyes\u201d", "\u2014 \u2014 \u2014", "\u2018a\u2019 \u2013 b",
         "\u00a0\u2026\u00a0x", "\u201e\u201f\u2010\u2011"]
ASCII_CYCLE = ['"\u2026" - "yes"', "- - -", "'a' - b", "\u2026 x", '""--']


def _patch(kept: list[str], removed: str, *, first: list[str] | None = None) -> str:
    body = "\n".join([*(" " + line for line in first or []), *(" " + line for line in kept),
                      f"-{removed}", "+added"])
    return f"*** Begin Patch\n*** Update File: f.txt\n@@\n{body}\n*** End Patch\n"


def shape(name: str, n: int, m: int) -> tuple[list[str], str]:
    """A file of ``n`` lines and a patch whose hunk has ``m`` old lines, which both refuse."""
    if name == "loose":
        return [LINE] * n, _patch([ASCII] * (m - 1), "nowhere")
    if name == "exact":
        return [LINE] * n, _patch([LINE] * (m - 1), "nowhere")
    if name == "periodic":
        return ([CYCLE[i % len(CYCLE)] for i in range(n)],
                _patch([ASCII_CYCLE[i % len(CYCLE)] for i in range(m - 1)], "nowhere"))
    if name == "trials":
        lines = [LINE] * n
        lines[m // 2] = "Z\u2014"
        return lines, _patch([ASCII] * (m - 1), "Z-")
    if name == "first":
        return [LINE] * n, _patch([ASCII] * (m - 2), LINE, first=["nowhere"])
    raise SystemExit(f"unknown shape {name}")


SHAPES = ["loose", "exact", "periodic", "trials", "first"]


def _timed(argv: list[str], cwd: Path, env: dict[str, str], stdin: Path | None,
           timeout: float) -> tuple[float, float, int] | None:
    """(wall, CPU, exit code) of one child process, CPU being user + system from ``wait4``; None
    if it ran past ``timeout`` (then it is killed)."""
    started = time.perf_counter()
    with open(stdin or os.devnull, "rb") as given:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=given, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid == child.pid:
            wall = time.perf_counter() - started
            child.returncode = os.waitstatus_to_exitcode(status)  # (reaped here, not by Popen)
            return wall, usage.ru_utime + usage.ru_stime, child.returncode
        if time.perf_counter() - started > timeout:
            child.kill()
            child.wait()
            return None
        time.sleep(0.005)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000, help="file lines (default 100,000)")
    parser.add_argument("--hunk", type=int, default=3000, help="the hunk's old lines (default 3,000)")
    parser.add_argument("--only", nargs="+", choices=SHAPES, default=SHAPES, help="shapes to run")
    parser.add_argument("--checkout", action="append", default=[], metavar="SRC",
                        help="a src folder to import patchtx from (repeat to compare; default: src)")
    parser.add_argument("--codex", help="Codex's apply_patch (default: as benchmarks/run.py finds it)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per applier (default 3)")
    parser.add_argument("--slow-cap", type=float, default=20.0,
                        help="an applier slower than this (s) on its first run is run once (default 20)")
    parser.add_argument("--timeout", type=float, default=900.0, help="a run is stopped after this (s)")
    args = parser.parse_args()
    codex = find_codex(args.codex)
    if codex is None:
        raise SystemExit("Codex's apply_patch is not installed: bash scripts/install-codex-reference.sh")
    checkouts = [str(Path(c).resolve()) for c in (args.checkout or [str(REPO / "src")])]
    # As run.py: no PYTHON* variables (PYTHONDONTWRITEBYTECODE would time the compiler).
    plain = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    appliers: dict[str, tuple[list[str], dict[str, str], bool]] = {
        "codex": ([str(codex)], plain, True)}
    for checkout in checkouts:
        appliers[f"patchtx {checkout}"] = ([str(BIN / "patchtx"), "apply", "--root", ".", "patch.txt"],
                                           {**plain, "PYTHONPATH": checkout}, False)
    print(f"{args.lines:,} file lines, a {args.hunk:,}-line hunk; load average at start "
          f"{os.getloadavg()[0]:.2f}")
    work = Path(tempfile.mkdtemp(prefix="patchtx-refusal-"))
    try:
        for name in args.only:
            lines, patch = shape(name, args.lines, args.hunk)
            folder = work / name
            folder.mkdir()
            data = ("\n".join(lines) + "\n").encode()
            (folder / "f.txt").write_bytes(data)
            (folder / "patch.txt").write_text(patch, encoding="utf-8")
            samples: dict[str, list[tuple[float, float] | None]] = {key: [] for key in appliers}
            slow: set[str] = set()
            for run in range(args.runs):
                for key, (argv, env, on_stdin) in appliers.items():
                    if key in slow:
                        continue
                    timing = _timed(argv, folder, env, folder / "patch.txt" if on_stdin else None,
                                    args.timeout)
                    if timing is not None:
                        wall, cpu, code = timing
                        if code == 0 or (folder / "f.txt").read_bytes() != data:
                            raise SystemExit(f"{key} did not refuse {name} with the file unchanged")
                        samples[key].append((wall, cpu))
                        if run == 0 and wall > args.slow_cap:
                            slow.add(key)
                    else:
                        samples[key].append(None)
                        slow.add(key)
            _report(name, samples, args.timeout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


def _report(name: str, samples: dict[str, list[tuple[float, float] | None]], timeout: float) -> None:
    def medians(key: str) -> tuple[float, float, bool]:
        """(wall, CPU, whether a run was stopped: then the wall time is a lower bound)."""
        runs = samples[key]
        done = [run for run in runs if run is not None]
        if not done:
            return timeout, timeout, True
        return (statistics.median(w for w, _ in done), statistics.median(c for _, c in done),
                len(done) < len(runs))

    codex_wall, codex_cpu, codex_cut = medians("codex")
    print(f"\n{name}: {'':34} {'runs':>4} {'wall s':>9} {'CPU s':>9} {'wall/Codex':>11} {'CPU/Codex':>10}")
    for key, runs in samples.items():
        wall, cpu, cut = medians(key)
        mark = ">" if cut else " "
        print(f"  {key[-40:]:40} {len(runs):4d} {mark}{wall:8.2f} {mark}{cpu:8.2f} "
              f"{wall / codex_wall:10.3g}{'?' if codex_cut else ' '} {cpu / max(codex_cpu, 1e-9):9.3g}")


if __name__ == "__main__":
    sys.exit(main())
