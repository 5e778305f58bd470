"""What the syntax guard costs on real code: one patch that edits many real files, applied with the
guard off and with ``--syntax refuse``, interleaved runs, as a ratio in one run.

The many-files workload of run.py is made of source-like lines that are not valid Python (every
file starts indented), so there each parse stops at line 1 and the guard costs next to nothing;
this measures the honest case, files that parse. The tree is the repositories' files of the guard's
languages (up to 64 KiB each), copied into numbered folders until it holds ``--files`` files; the
patch adds a comment line at the end of each (JSON files, which have no comments, are left out).

    .venv/bin/python benchmarks/syntax_cost.py /work/.mirror/pallets+click/repo \\
        /work/.mirror/sindresorhus+ky/repo /work/.mirror/spf13+cobra/repo --files 1000
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from patchtx.syntax import language_of

COMMENT = {"python": "#", "toml": "#", "yaml": "#", "bash": "#", "ruby": "#"}


def sources(repos: list[str]) -> list[tuple[str, bytes]]:
    found = []
    for repo in repos:
        names = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True,
                               text=True, check=True).stdout.split("\n")
        for name in names:
            language = language_of(name)
            if language is None or language == "json":
                continue
            data = subprocess.run(["git", "-C", repo, "show", f"HEAD:{name}"], capture_output=True).stdout
            if 0 < len(data) <= 64 * 1024 and data.endswith(b"\n"):
                found.append((f"{Path(repo).parent.name}/{name}", data))
    return found


def build(folder: Path, files: list[tuple[str, bytes]], count: int) -> tuple[Path, Path, int]:
    tree = folder / "input"
    diff = []
    total = 0
    for index in range(count):
        name, data = files[index % len(files)]
        path = f"copy{index // len(files):02d}/{name}"
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_bytes(data)
        total += len(data)
        marker = COMMENT.get(language_of(name) or "", "//")
        old = data.decode("utf-8", "replace").splitlines(keepends=True)
        new = [*old, f"{marker} edited\n"]
        diff.append(f"diff --git a/{path} b/{path}\n")
        diff.extend(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=3))
    patch = folder / "patch.diff"
    patch.write_text("".join(diff), encoding="utf-8", errors="surrogateescape")
    return tree, patch, total


def timed(command: list[str]) -> tuple[float, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    files = sources(args.repos)
    patchtx = str(Path(sys.executable).parent / "patchtx")
    with tempfile.TemporaryDirectory(prefix="patchtx-syntax-cost-") as scratch:
        folder = Path(scratch)
        tree, patch, size = build(folder, files, args.files)
        modes = {"off": [], "refuse": []}
        for run in range(args.runs + 1):  # the first round warms the caches and is not counted
            for mode in modes:
                work = folder / f"run-{mode}-{run}"
                shutil.copytree(tree, work)
                os.sync()
                result = timed([patchtx, "apply", "--no-fsync", "--no-diff", "--syntax", mode, "--root",
                                str(work), str(patch)])
                if run:
                    modes[mode].append(result)
        wall = {m: statistics.median(r[0] for r in runs) for m, runs in modes.items()}
        cpu = {m: statistics.median(r[1] for r in runs) for m, runs in modes.items()}
        languages: dict[str, int] = {}
        for name, _ in files[:args.files]:
            languages[language_of(name) or "?"] = languages.get(language_of(name) or "?", 0) + 1
    json.dump({"files": args.files, "bytes": size, "distinct_sources": len(files), "languages": languages,
               "runs": args.runs, "wall_median": wall, "cpu_median": cpu,
               "wall_ratio": round(wall["refuse"] / wall["off"], 3),
               "cpu_ratio": round(cpu["refuse"] / cpu["off"], 3),
               "load_average": os.getloadavg()}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
