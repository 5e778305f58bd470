"""Measure commit() on a many-file plan (not a test; run: .venv/bin/python benchmarks/commit.py).

1,070 paths touched: 1,000 updated 8 KB files, 50 added, 20 deleted, across 40 folders.
Prints the best and median wall time of N runs for each mode, the median CPU time (less sensitive
to other load on the machine), and the fsync/syncfs calls counted.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from patchtx.model import PathTarget, Plan
from patchtx.txn import commit
from patchtx.txn.fsops import FileSystemOps


def build(root: Path) -> Plan:
    if root.exists():
        shutil.rmtree(root)
    targets = []
    for i in range(1020):
        path = root / f"pkg{i % 40}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        old = os.urandom(4096).hex().encode()  # 8 KB
        path.write_bytes(old)
        rel = str(path.relative_to(root))
        if i < 1000:
            targets.append(PathTarget(rel, old, old[:-10] + b"patched!!\n", 0o644, 0o644))
        else:
            targets.append(PathTarget(rel, old, None, 0o644, None))
    for i in range(50):
        targets.append(PathTarget(f"pkg{i % 40}/new{i}.py", None, os.urandom(4096).hex().encode()))
    (root / ".patchtx" / "journal").mkdir(parents=True)
    (root / ".patchtx" / ".gitignore").write_bytes(b"*\n")
    return Plan(str(root), (), tuple(sorted(targets, key=lambda t: t.path)))


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    base = Path(tempfile.mkdtemp(prefix="patchtx-bench-", dir=os.environ.get("BENCH_DIR")))
    try:
        for label, durable, syncfs in [
            ("durable (fsync each small barrier, syncfs for big ones)", True, True),
            ("durable, syncfs disabled (threaded fsyncs)", True, False),
            ("durable=False", False, True),
        ]:
            times, cpu, fsyncs = [], [], set()
            for _ in range(runs):
                plan = build(base / "ws")
                os.sync()  # start every run from a clean page cache state
                fs = FileSystemOps(allow_syncfs=syncfs)
                started, started_cpu = time.perf_counter(), time.process_time()
                report = commit(plan, durable=durable, fs=fs)
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
                fsyncs.add(report.fsyncs)
            print(
                f"{label}: wall best {min(times) * 1000:.0f} ms, median {statistics.median(times) * 1000:.0f} ms;"
                f" CPU median {statistics.median(cpu) * 1000:.0f} ms;"
                f" fsync calls {sorted(fsyncs)} for {len(plan.targets)} paths"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
