"""Where one ``patchtx apply`` spends its time, stage by stage, in fresh processes.

Each run is a new interpreter (as the command line runs), in a fresh copy of the workload's tree,
timing with ``perf_counter`` what ``patchtx apply`` does in turn: import the library, read the
patch, the options, parse, plan, commit (durable), render the diffs, write them out; and the
process's CPU time. A patch that fails (the ``miss`` workload) is timed up to its error: planning,
hints included, and the error's text. No profiler runs, so small calls are not inflated. Several checkouts (their
``src`` folders) are run in turn, round-robin, so that a change is measured against the code
before it in the same loop:

    .venv/bin/python benchmarks/stages.py huge-file
    .venv/bin/python benchmarks/stages.py miss --checkout src --checkout /path/to/other/checkout/src
    .venv/bin/python benchmarks/stages.py huge-file --format diff --runs 9 \\
        --checkout src --checkout /path/to/other/checkout/src

The table shows the minimum and the median of each stage over the runs (milliseconds).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads  # noqa: E402

_CHILD = r"""
import time
started = time.perf_counter()
import gc, json, os, sys
gc.disable()  # as the patchtx command does
clock = time.perf_counter
patch_file, root = sys.argv[1:3]
stages = {}
at = clock()
from patchtx.api import commit_plan, parse_patches, plan_parsed
from patchtx.errors import PatchtxError
from patchtx.workspace.policy import options_for
from patchtx.render import diff_texts
stages["import"] = clock() - at
at = clock(); text = open(patch_file, encoding="utf-8").read(); stages["read patch"] = clock() - at
at = clock(); plan_options, commit_options = options_for(root, {}); stages["options"] = clock() - at
at = clock(); parsed = parse_patches([text], plan_options); stages["parse"] = clock() - at
at = clock()
try:
    planned = plan_parsed(parsed, root, plan_options)
except PatchtxError as error:  # the miss: planning ends in the error, hints included
    stages["plan"] = clock() - at
    at = clock(); report = error.message; stages["error text"] = clock() - at
else:
    stages["plan"] = clock() - at
    at = clock(); commit_plan(planned, commit_options); stages["commit"] = clock() - at
    at = clock(); report = "".join(diff_texts(planned)); stages["diff"] = clock() - at
at = clock()
with open(os.devnull, "w", encoding="utf-8") as out:
    out.write(report)
stages["write out"] = clock() - at
stages["total (after start-up)"] = clock() - started
stages["CPU (whole process)"] = time.process_time()
sys.stderr.write(json.dumps(stages))
"""


def _workload(name: str) -> workloads.Workload:
    for work in workloads.suite():
        if work.name == name:
            return work
    raise SystemExit(f"no workload {name!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", help="a workload of workloads.py (huge-file, drifted-file, ...)")
    parser.add_argument("--format", choices=("codex", "diff"), default="codex",
                        help="the Codex patch or the git-style unified diff (default: codex)")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per checkout (default: 7)")
    parser.add_argument("--checkout", action="append", default=[], metavar="SRC",
                        help="a src folder to import patchtx from (repeat to compare; default: the "
                             "installed patchtx)")
    args = parser.parse_args()
    work = _workload(args.workload)
    checkouts = args.checkout or [""]
    # The session's PYTHON* variables are left out, as benchmarks/run.py leaves them out: without
    # bytecode writes every module would be compiled from source.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    times: dict[str, dict[str, list[float]]] = {c: {} for c in checkouts}
    with tempfile.TemporaryDirectory(prefix="patchtx-stages-") as scratch:
        folder = Path(scratch)
        workloads.write_tree(folder / "input", work.input)
        patch_file = folder / ("patch.txt" if args.format == "codex" else "patch.diff")
        patch_file.write_text(work.codex_patch if args.format == "codex" else work.unified_diff,
                              encoding="utf-8")
        for run in range(args.runs + 1):  # the first round warms the bytecode caches
            for checkout in checkouts:
                tree = folder / f"run-{run}-{checkouts.index(checkout)}"
                shutil.copytree(folder / "input", tree)
                os.sync()  # the copy's writes are not the commit's to flush
                env = dict(environment, PYTHONPATH=str(Path(checkout).resolve())) if checkout else environment
                done = subprocess.run([sys.executable, "-c", _CHILD, str(patch_file), str(tree)],
                                      env=env, capture_output=True, text=True, check=False)
                if done.returncode:
                    raise SystemExit(f"the run failed:\n{done.stderr}")
                if run:
                    for stage, seconds in json.loads(done.stderr).items():
                        times[checkout].setdefault(stage, []).append(seconds)
    names = [c or "installed" for c in checkouts]
    print(f"{work.name} ({args.format}), {args.runs} runs; ms, min / median")
    print(f"{'stage':24}" + "".join(f"{name[-22:]:>24}" for name in names))
    for stage in times[checkouts[0]]:
        cells = [times[c][stage] for c in checkouts]
        print(f"{stage:24}" + "".join(
            f"{min(v) * 1000:12.1f} / {statistics.median(v) * 1000:7.1f}" for v in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
