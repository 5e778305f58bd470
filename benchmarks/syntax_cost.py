"""What the syntax guard costs: one patch that edits many files, applied with the guard off and
with ``--syntax refuse``, interleaved runs, as a ratio in one run and against the parser's own time.

Two trees:

- ``REPO ...``: the repositories' files of the guard's languages (up to 64 KiB each), copied into
  numbered folders until the tree holds ``--files`` files; the patch adds a comment line at the end
  of each (JSON files, which have no comments, are left out). The many-files workload of run.py is
  made of source-like lines that are not valid Python (every file starts indented), so there each
  parse stops at line 1; this is the honest case, files that parse.
- ``--python N`` (issue 38's case): N Python files of 30 to 50 KB, the running Python's own
  standard library (real code, present wherever Python is), copied into numbered folders; the patch
  changes one line of each (an import line gets a comment). ``--broken`` appends a syntax error to
  every file before and after, so that the guard must parse both versions. Beside the apply, the
  time of one ``ast.parse`` of each changed file in this process (the best of 3): the guard's cost
  is the difference between the two applies, and its goal is at most 1.2x that parse.

- ``--locate``: no apply; the time the guard takes to locate errors, at two sizes each (issue 38:
  what was quadratic), in this process, CPU: the walk over the errors of one line of a Rust file
  holding 50,000 and 100,000 (beside the grammar's own parse of it), and the lines a patch wrote
  in 85,000 and 170,000 repeated lines with one broken. Each pair's ratio is about 2 when the work
  grows with the input, 4 when it grows with its square. (tests/plan/syntax/test_guard_cost.py counts
  the same work without a clock.)

    .venv/bin/python benchmarks/syntax_cost.py /work/.mirror/pallets+click/repo \\
        /work/.mirror/sindresorhus+ky/repo /work/.mirror/spf13+cobra/repo --files 1000
    .venv/bin/python benchmarks/syntax_cost.py --python 100 --runs 7
    .venv/bin/python benchmarks/syntax_cost.py --locate
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from patchtx.plan.syntax import language_of

COMMENT = {"python": "#", "toml": "#", "yaml": "#", "bash": "#", "ruby": "#"}
BROKEN = b"\ndef broken(:\n"


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


def standard_library(low: int = 30_000, high: int = 50_000) -> list[tuple[str, bytes]]:
    """The running Python's standard library modules of ``low`` to ``high`` bytes that parse and
    have an import line to change."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts or not low <= path.stat().st_size <= high:
            continue
        data = path.read_bytes()
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        if re.search(rb"^import \w+$", data, re.M):
            found.append((path.relative_to(root).as_posix(), data))
    return found


def edited(name: str, data: bytes) -> bytes:
    """The file as the patch leaves it: an import line commented (Python), or a comment line added."""
    if language_of(name) == "python":
        line = re.search(rb"^import \w+$", data, re.M)
        if line is not None:
            return data[:line.end()] + b"  # edited" + data[line.end():]
    marker = COMMENT.get(language_of(name) or "", "//")
    return data + f"{marker} edited\n".encode()


def build(folder: Path, files: list[tuple[str, bytes]], count: int,
          broken: bool = False) -> tuple[Path, Path, int, list[bytes]]:
    tree = folder / "input"
    diff = []
    total = 0
    afters = []
    for index in range(count):
        name, data = files[index % len(files)]
        if broken:
            data += BROKEN
        path = f"copy{index // len(files):02d}/{name}"
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_bytes(data)
        total += len(data)
        after = edited(name, data)
        afters.append(after)
        old = data.decode("utf-8", "surrogateescape").splitlines(keepends=True)
        new = after.decode("utf-8", "surrogateescape").splitlines(keepends=True)
        diff.append(f"diff --git a/{path} b/{path}\n")
        diff.extend(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=3))
    patch = folder / "patch.diff"
    patch.write_text("".join(diff), encoding="utf-8", errors="surrogateescape")
    return tree, patch, total, afters


def parse_time(afters: list[bytes]) -> tuple[float, float]:
    """One ast.parse of each changed file: wall and CPU time, each the best of 5 rounds (errors
    included: a file that does not parse costs its parse and the parser's second pass for the
    message)."""
    wall = cpu = float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(5):
            started, started_cpu = time.perf_counter(), time.process_time()
            for data in afters:
                try:
                    ast.parse(data)
                except SyntaxError:
                    pass
            wall = min(wall, time.perf_counter() - started)
            cpu = min(cpu, time.process_time() - started_cpu)
    return wall, cpu


def best_cpu(work: Callable[..., object], *args: object) -> float:
    """The least CPU time of 3 calls of ``work(*args)``."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        work(*args)
        best = min(best, time.process_time() - started)
    return best


def locate() -> dict[str, dict[str, float]]:
    """``--locate``: CPU seconds at each size, and the ratio of the larger to the smaller."""
    from patchtx.plan import syntax  # (here: the other modes only run patchtx as a command)

    out: dict[str, dict[str, float]] = {}
    parser = syntax._tree_sitter_parser("rust")
    if parser is None:
        raise SystemExit("--locate needs the tree-sitter grammars: pip install -e '.[syntax]'")
    walk: dict[int, float] = {}
    for errors in (50_000, 100_000):
        data = b"fn f() {" + b" 1 +;" * errors + b"}\n"
        parse = best_cpu(parser.parse, data)
        whole = best_cpu(syntax._tree_sitter_errors, parser, data)
        walk[errors] = max(whole - parse, 0.0)
        out[f"errors on one Rust line: {errors:,}"] = {"grammar_parse_cpu": round(parse, 4),
                                                       "walk_cpu": round(walk[errors], 4)}
    out["errors on one Rust line: walk 100,000 / 50,000"] = {"ratio": round(walk[100_000] / walk[50_000], 2)}
    written: dict[int, float] = {}
    for lines in (85_000, 170_000):
        before = b"x = 1\n" * lines
        after = before.split(b"\n")
        after[lines * 53 // 100] = b"x = (1"
        joined = b"\n".join(after)
        written[lines] = best_cpu(syntax._written_lines, before, joined)
        out[f"lines written, {lines:,} repeated lines"] = {"cpu": round(written[lines], 4)}
    out["lines written: 170,000 / 85,000"] = {"ratio": round(written[170_000] / written[85_000], 2)}
    return out


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
    parser.add_argument("repos", nargs="*")
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--python", type=int, metavar="N", help="N standard-library Python files (issue 38)")
    parser.add_argument("--broken", action="store_true", help="every file ends with a syntax error")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--locate", action="store_true", help="the time to locate errors, at two sizes")
    args = parser.parse_args()
    if args.locate:
        json.dump({**locate(), "load_average": os.getloadavg()}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    if args.python:
        files, count = standard_library(), args.python
    elif args.repos:
        files, count = sources(args.repos), args.files
    else:
        parser.error("name repositories or --python N")
    patchtx = str(Path(sys.executable).parent / "patchtx")
    with tempfile.TemporaryDirectory(prefix="patchtx-syntax-cost-") as scratch:
        folder = Path(scratch)
        tree, patch, size, afters = build(folder, files, count, args.broken)
        modes: dict[str, list[tuple[float, float]]] = {"off": [], "refuse": []}
        works = []
        for run in range(args.runs + 1):  # copies first: no tree is deleted before a timed run
            for mode in modes:
                works.append(folder / f"run-{mode}-{run}")
                shutil.copytree(tree, works[-1])
        os.sync()
        for run in range(args.runs + 1):  # the first round warms the caches and is not counted
            for mode in modes:
                result = timed([patchtx, "apply", "--no-fsync", "--no-diff", "--syntax", mode, "--root",
                                str(folder / f"run-{mode}-{run}"), str(patch)])
                if run:
                    modes[mode].append(result)
        wall = {m: statistics.median(r[0] for r in runs) for m, runs in modes.items()}
        cpu = {m: statistics.median(r[1] for r in runs) for m, runs in modes.items()}
        languages: dict[str, int] = {}
        for index in range(count):
            language = language_of(files[index % len(files)][0]) or "?"
            languages[language] = languages.get(language, 0) + 1
        parse = parse_time(afters) if args.python else None
    out = {"files": count, "bytes": size, "distinct_sources": len(files), "languages": languages,
           "broken": args.broken, "runs": args.runs, "wall_median": wall, "cpu_median": cpu,
           "wall_ratio": round(wall["refuse"] / wall["off"], 3), "cpu_ratio": round(cpu["refuse"] / cpu["off"], 3)}
    if parse is not None:
        out["ast_parse_wall"], out["ast_parse_cpu"] = round(parse[0], 4), round(parse[1], 4)
        out["guard_wall"] = round(wall["refuse"] - wall["off"], 4)
        out["guard_cpu"] = round(cpu["refuse"] - cpu["off"], 4)
        out["guard_wall_over_parse"] = round((wall["refuse"] - wall["off"]) / parse[0], 3)
        out["guard_cpu_over_parse"] = round((cpu["refuse"] - cpu["off"]) / parse[1], 3)
    out["load_average"] = os.getloadavg()
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
