#!/usr/bin/env python3
"""Profile patchtx on the benchmark workloads: where a run's time goes.

    .venv/bin/python benchmarks/profile.py                    # every workload, full size
    .venv/bin/python benchmarks/profile.py --quick huge-file  # one workload, quick size

For each workload it applies the patch, in a fresh copy of the input tree, with the same command
line the runner times (``patchtx apply --root RUN patch.txt``, or ``apply_patch 'PATCH'`` for the
tiny edit), once in a child process under cProfile (``python -m cProfile``) and once under
``python -X importtime``, and writes ``benchmarks/out/profile-<workload>.txt``: the wall time,
the functions with the most cumulative and own time, and the slowest imports.
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workloads as wl  # noqa: E402

REPO = HERE.parent
PYTHON = REPO / ".venv" / "bin" / "python"
# As in run.py: no PYTHON* variables (PYTHONDONTWRITEBYTECODE would profile the compiler).
ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}

_ENTRY = {
    # The console scripts' targets, run as scripts so cProfile can wrap them.
    "patchtx": "import sys; from patchtx.cli.commands import main; sys.exit(main())",
    "apply_patch": "import sys; from patchtx.cli import apply_patch_main; "
                   "sys.exit(apply_patch_main())",
}


def _argv(work: wl.Workload, folder: Path, run: Path, no_fsync: bool, no_diff: bool = False
          ) -> tuple[str, list[str]]:
    if work.argv_patch and not no_fsync and not no_diff:
        return "apply_patch", [work.codex_patch]
    flags = (["--no-fsync"] if no_fsync else []) + (["--no-diff"] if no_diff else [])
    return "patchtx", ["apply", *flags, "--root", str(run), str(folder / "patch.txt")]


def profile(work: wl.Workload, scratch: Path, out_dir: Path, no_fsync: bool, top: int,
            no_diff: bool = False) -> Path:
    folder = wl.materialize(work, scratch / "workloads")
    flags = f"{' --no-fsync' if no_fsync else ''}{' --no-diff' if no_diff else ''}"
    report: list[str] = [f"# {work.title} ({work.name}), patchtx{flags}", ""]

    def fresh() -> Path:
        run = scratch / "run"
        if run.exists():
            shutil.rmtree(run)
        shutil.copytree(folder / "input", run)
        os.sync()
        return run

    # 1. plain wall time (one warm-up, then one timed run)
    for _ in range(2):
        run = fresh()
        entry, args = _argv(work, folder, run, no_fsync, no_diff)
        start = time.perf_counter()
        subprocess.run([str(PYTHON), "-c", _ENTRY[entry], *args], cwd=run,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        wall = time.perf_counter() - start
    report.append(f"wall time without a profiler: {wall:.3f} s")

    # 2. cProfile
    run = fresh()
    entry, args = _argv(work, folder, run, no_fsync, no_diff)
    script = scratch / f"{entry}_entry.py"
    script.write_text(_ENTRY[entry] + "\n")
    stats_file = scratch / "profile.pstats"
    subprocess.run([str(PYTHON), "-m", "cProfile", "-o", str(stats_file), str(script), *args],
                   cwd=run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    import io

    for key, title in (("cumulative", "cumulative time"), ("tottime", "own time")):
        buffer = io.StringIO()
        stats = pstats.Stats(str(stats_file), stream=buffer)
        stats.strip_dirs().sort_stats(key).print_stats(top)
        text = buffer.getvalue()
        body = text[text.find("   ncalls"):] if "   ncalls" in text else text
        total = next((ln.strip() for ln in text.splitlines() if "function calls" in ln), "")
        report += ["", f"## cProfile, top {top} by {title} ({total})", "", "```", body.rstrip(),
                   "```"]

    # 3. import time
    run = fresh()
    entry, args = _argv(work, folder, run, no_fsync, no_diff)
    imports = subprocess.run([str(PYTHON), "-X", "importtime", "-c", _ENTRY[entry], *args],
                             cwd=run, capture_output=True, text=True, env=ENV).stderr
    rows = []
    for line in imports.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            self_us, cumulative, name = line.split(":", 1)[1].split("|", 2)
            rows.append((int(cumulative), int(self_us), name.rstrip()[1:]))
    top_level = [r for r in rows if not r[2].startswith(" ")]
    total_us = sum(r[0] for r in top_level)
    report += ["", f"## imports: {total_us / 1000:.1f} ms in all (top-level modules); slowest "
               "cumulative", "", "```"]
    report += [f"{c / 1000:8.1f} ms  {n}" for c, _s, n in sorted(rows, reverse=True)[:top]]
    report.append("```")
    shutil.rmtree(scratch / "run", ignore_errors=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"profile-{work.name}{flags.replace(' --', '-')}.txt"
    path.write_text("\n".join(report) + "\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", help="workload names (default: all main ones)")
    parser.add_argument("--quick", action="store_true", help="the --quick sizes")
    parser.add_argument("--no-fsync", action="store_true")
    parser.add_argument("--no-diff", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()
    works = [w for w in wl.suite(quick=args.quick) if w.group == "main"]
    if args.workloads:
        works = [w for w in works if w.name in args.workloads]
    scratch = Path(tempfile.mkdtemp(prefix="patchtx-profile-"))
    try:
        for w in works:
            path = profile(w, scratch, args.out, args.no_fsync, args.top, args.no_diff)
            print(path.read_text())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
