#!/usr/bin/env python3
"""Time patchtx and its peers on reproducible workloads; write a table (Markdown, JSON) and a plot.

    .venv/bin/python benchmarks/run.py            # full run (~6 min here) -> benchmarks/results/
    .venv/bin/python benchmarks/run.py --quick    # small sizes, 2 runs (~1 min) -> benchmarks/out/

Each applier runs as a whole process (fork/exec to exit) in a fresh copy of the input tree; the
copy (and an ``os.sync()`` so the copy's dirty pages do not land on the applier's fsyncs) is not
timed. After one warm-up run per applier, the timed runs go round-robin over the appliers so that
drift on the machine spreads over all of them; the table shows the median. Every run's final tree
is compared with the expected tree byte for byte (file set, bytes, directories, executable bits;
patchtx's own ``.patchtx/`` state folder is ignored); for the miss, the applier must exit non-zero
and leave the tree unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import svgplot  # noqa: E402
import warm  # noqa: E402
import workloads as wl  # noqa: E402
from appliers import (  # noqa: E402
    REPO,
    Applier,
    Invocation,
    all_appliers,
    ensure_peers_venv,
    find_codex,
    install_codex,
    peer_versions,
)

MIB = 1024 * 1024
SMALL_TREE_BYTES = 1_000_000
SHORT_RUN_SECONDS = 0.5
GNU_TIME = "/usr/bin/time"
WARM_CALLS = 30
"""Timed calls per running process (after warm.WARM_UP untimed ones)."""


def child_environment() -> tuple[dict[str, str], list[str]]:
    """The environment the appliers run in: ours minus PYTHON* variables, which a user's shell
    does not normally set and which change what is measured (PYTHONDONTWRITEBYTECODE makes every
    run compile patchtx from source; PYTHONUNBUFFERED makes every write a system call)."""
    dropped = sorted(k for k in os.environ if k.startswith("PYTHON"))
    return {k: v for k, v in os.environ.items() if k not in dropped}, dropped


CHILD_ENV, DROPPED_ENV = child_environment()


@dataclass
class Sample:
    seconds: float
    returncode: int
    cpu_seconds: float
    """user + system CPU time of the child (less sensitive than wall time to a busy machine)."""
    ok: bool
    problems: list[str]
    timed_out: bool = False
    maxrss_kib: int | None = None
    """Only for the warm-up run, measured by GNU time (see Runner.sample)."""


@dataclass
class Cell:
    applier: Applier
    samples: list[Sample] = field(default_factory=list)
    warmup: Sample | None = None
    stderr_head: str = ""
    note: str = ""
    skip_rest: bool = False

    @property
    def ok(self) -> bool:
        checked = ([self.warmup] if self.warmup else []) + self.samples
        return bool(checked) and all(s.ok for s in checked)

    @property
    def timed_out(self) -> bool:
        return any(s.timed_out for s in ([self.warmup] if self.warmup else []) + self.samples)

    @property
    def times(self) -> list[float]:
        return [s.seconds for s in self.samples] or ([self.warmup.seconds] if self.warmup else [])

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def cpu_median(self) -> float | None:
        cpu = [s.cpu_seconds for s in self.samples] or (
            [self.warmup.cpu_seconds] if self.warmup else [])
        return statistics.median(cpu) if cpu else None

    @property
    def maxrss_mib(self) -> float | None:
        rss = self.warmup.maxrss_kib if self.warmup else None
        return rss / 1024 if rss is not None else None


# -- running one process --------------------------------------------------------------------------


def timed(inv: Invocation, cwd: Path, out: Path, err: Path, timeout: float
          ) -> tuple[float, int, float, bool]:
    """Run to exit; (wall seconds, exit code, CPU seconds of the child, timed out)."""
    env = {**CHILD_ENV, **inv.env}
    stdin = open(inv.stdin, "rb") if inv.stdin else subprocess.DEVNULL
    try:
        with open(out, "wb") as fo, open(err, "wb") as fe:
            start = time.perf_counter()
            # Its own process group, so that the time limit also ends what it started (the
            # applier under GNU time or strace).
            proc = subprocess.Popen(inv.argv, cwd=cwd, stdin=stdin, stdout=fo, stderr=fe, env=env,
                                    process_group=0)
            killer = threading.Timer(timeout, _kill_group, (proc.pid,))
            killer.start()
            _pid, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - start
            killer.cancel()
    finally:
        if inv.stdin:
            stdin.close()  # type: ignore[union-attr]
    proc.returncode = os.waitstatus_to_exitcode(status)
    timed_out = proc.returncode < 0 and elapsed >= timeout
    return elapsed, proc.returncode, usage.ru_utime + usage.ru_stime, timed_out


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


RECENTLY_DELETED_WINDOW = 35.0
"""Seconds a freed inode stays "recently deleted" (ext4 without a journal: 30 s), plus margin."""
TRASH_BUDGET = 4 << 30
"""Bytes of finished run trees kept before they are deleted (and the window waited out)."""


class Runner:
    """Fresh copies of a workload's input tree, one per run, and their disposal.

    Every copy a workload's runs need is made before its first run (``prepare``), then synced
    once; nothing is deleted while a workload is timed: finished trees are moved aside and deleted
    between workloads, when they pass a budget, followed by a pause. On ext4 without a journal
    (this machine's work folder) the inode allocator skips every inode freed in the last ~30 s,
    reading its inode-table block to find out, so right after the previous run's 2,000-file tree
    was deleted each file creation took ~0.3-0.5 ms instead of ~20 us (`perf`:
    ``recently_deleted`` under ``find_inode_bit``). That penalised appliers that create files
    (patchtx's temporary files, git apply, GNU patch) and not those that overwrite in place, for a
    reason that belongs to the benchmark, not to them: the many-files ratio swung 0.8-2.1x
    between loops that deleted each copy before the next run.
    """

    def __init__(self, workdir: Path, timeout: float) -> None:
        self.workdir = workdir
        self.timeout = timeout
        self.counter = 0
        self.trash = workdir / "trash"
        self.trash_bytes = 0
        self.ready: dict[Path, list[Path]] = {}
        """Copies made in advance, by workload folder."""

    def _copy(self, folder: Path) -> Path:
        self.counter += 1
        run = self.workdir / "runs" / f"r{self.counter:05d}" / "tree"
        run.parent.mkdir(parents=True)
        shutil.copytree(folder / "input", run, symlinks=True)
        return run

    def prepare(self, folder: Path, count: int) -> None:
        """Copy the workload's tree ``count`` times now, before its first timed run, after
        deleting what the runs before left if it passed the budget (then waiting)."""
        if self.trash_bytes > TRASH_BUDGET:
            self.empty_trash(settle=True)
        self.ready[folder] = [self._copy(folder) for _ in range(count)]
        os.sync()  # the copies are on disk before the clock starts, as a real tree would be

    def fresh_copy(self, folder: Path) -> Path:
        """A copy made by ``prepare``, else a new one."""
        if self.ready.get(folder):
            return self.ready[folder].pop(0)
        run = self._copy(folder)
        os.sync()
        return run

    def unused(self, folder: Path) -> None:
        """Set aside the copies ``prepare`` made that no run took."""
        for run in self.ready.pop(folder, []):
            self.discard(run.parent)

    def discard(self, path: Path) -> None:
        """Move a finished run's folder aside (a rename frees no inode); see the class docstring."""
        self.trash.mkdir(parents=True, exist_ok=True)
        self.trash_bytes += sum(f.stat().st_size for f in path.rglob("*") if f.is_file()
                                and not f.is_symlink())
        path.rename(self.trash / path.name)

    def empty_trash(self, *, settle: bool) -> None:
        if self.trash.exists():
            shutil.rmtree(self.trash)
            self.trash_bytes = 0
            if settle:
                print(f"waiting {RECENTLY_DELETED_WINDOW:.0f} s after deleting finished runs "
                      "(see Runner)", file=sys.stderr)
                time.sleep(RECENTLY_DELETED_WINDOW)

    def sample(self, work: wl.Workload, folder: Path, applier: Applier, cell: Cell,
               measure_rss: bool = False) -> Sample:
        """One run in a fresh copy, checked. With ``measure_rss`` (the untimed warm-up) the
        applier runs under GNU time, whose small process forks it: the max RSS that wait4
        reports for a child forked from this (large) runner starts at the runner's own RSS."""
        run = self.fresh_copy(folder)
        inv = applier.build(work, folder, run)
        out, err = run.parent / "stdout", run.parent / "stderr"
        rss_file = run.parent / "rss"
        if measure_rss and os.access(GNU_TIME, os.X_OK):
            inv = Invocation([GNU_TIME, "-f", "%M", "-o", str(rss_file), "--", *inv.argv],
                             inv.stdin, inv.env)
        seconds, rc, cpu, timed_out = timed(inv, run, out, err, self.timeout)
        rss = None
        if rss_file.exists():
            try:
                rss = int(rss_file.read_text().strip().splitlines()[-1])
            except (ValueError, IndexError):
                rss = None
        if applier.baseline:
            problems = [] if rc == 0 else [f"exit {rc}"]
        else:
            problems = wl.compare_trees(run, work.expected)
            if work.expect_failure and rc == 0:
                problems.insert(0, "exit 0: the patch was reported as applied")
            elif not work.expect_failure and rc != 0:
                problems.insert(0, f"exit {rc}")
        if timed_out:
            # Killed at the time limit: slow, not wrong; the tree is not judged.
            problems = []
        if not cell.stderr_head:
            text = err.read_text(errors="replace").strip()
            cell.stderr_head = text[:1500]
        self.discard(run.parent)
        return Sample(seconds, rc, cpu, not problems, problems, timed_out, rss)

    def strace_fsyncs(self, work: wl.Workload, folder: Path, applier: Applier
                      ) -> dict[str, object] | None:
        """Count fsync/fdatasync/syncfs calls under ``strace -f -c`` in two untimed runs: the
        first transaction in a fresh copy (which also creates patchtx's ``.patchtx/`` state
        folder), and a later one (the same, with the ``.patchtx/`` the first run left)."""
        if not shutil.which("strace"):
            return None
        state = self.workdir / "state-from-first-run"
        shutil.rmtree(state, ignore_errors=True)
        result: dict[str, object] = {}
        for phase in ("first", "later"):
            run = self.fresh_copy(folder)
            if phase == "later" and state.exists():
                shutil.copytree(state, run / ".patchtx")
                os.sync()
            inv = applier.build(work, folder, run)
            summary = run.parent / "strace.txt"
            argv = ["strace", "-f", "-c", "-e", "trace=fsync,fdatasync,syncfs", "-o",
                    str(summary), "--", *inv.argv]
            timed(Invocation(argv, inv.stdin, inv.env), run, run.parent / "out",
                  run.parent / "err", self.timeout * 2)
            counts = {"fsync": 0, "fdatasync": 0, "syncfs": 0}
            for line in summary.read_text().splitlines():
                parts = line.split()
                if parts and parts[-1] in counts and len(parts) >= 5:
                    counts[parts[-1]] = int(parts[3])
            counts["total"] = counts["fsync"] + counts["fdatasync"] + counts["syncfs"]
            result[phase] = counts
            if phase == "first" and (run / ".patchtx").is_dir():
                shutil.copytree(run / ".patchtx", state)
            self.discard(run.parent)
        shutil.rmtree(state, ignore_errors=True)
        result["total"] = result["first"]["total"]  # type: ignore[index]
        return result


# -- environment ----------------------------------------------------------------------------------


def _first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) \
        else "unknown"


def _filesystem_of(path: Path) -> str:
    best, fstype = "", "unknown"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            mount = parts[1]
            if str(path).startswith(mount.rstrip("/") + "/") or str(path) == mount:
                if len(mount) >= len(best):
                    best, fstype = mount, parts[2]
    except OSError:
        pass
    return fstype


def _src_dirty() -> bool:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return bool(out.strip())


def environment(codex: Path | None, workdir: Path) -> dict[str, object]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    venv_python = REPO / ".venv" / "bin" / "python"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": f"{platform.system()} {platform.release()} {platform.machine()}",
        "cpu": cpu,
        "cores": os.cpu_count(),
        "workdir": str(workdir),
        "workdir_filesystem": _filesystem_of(workdir),
        "python": _first_line([str(venv_python), "--version"]),
        "patchtx": _first_line([str(venv_python), "-c",
                                "import importlib.metadata as m; print(m.version('patchtx'))"]),
        "patchtx_commit": _first_line(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
        + (" + uncommitted changes in src/" if _src_dirty() else ""),
        "codex": _first_line([str(codex.resolve()), "--version"]) if codex else "not installed",
        "git": _first_line(["git", "--version"]),
        "gnu_patch": _first_line(["patch", "--version"]),
        "strace": _first_line(["strace", "-V"]) if shutil.which("strace") else "not installed",
        "peers": peer_versions(),
        "load_average_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "dropped_env": DROPPED_ENV,
    }


# -- report ---------------------------------------------------------------------------------------


def _fmt_s(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _calls(f: dict[str, object] | None) -> str:
    """Durability calls: "first / later" transaction in the tree."""
    if f is None:
        return "–"
    text = f"{f['first']['total']} / {f['later']['total']}"  # type: ignore[index]
    return text + (" (on --no-diff)" if f.get("counted_on") else "")


def _cell_time(cell: Cell | None) -> str:
    """The median, or "> limit" for a process killed at the time limit (a lower bound)."""
    if cell is None or cell.median is None:
        return "–"
    return f"> {cell.median:.0f}" if cell.timed_out else _fmt_s(cell.median)


def _cpu_note(mine: Cell | None, theirs: Cell | None) -> str:
    if not mine or not theirs or mine.timed_out:
        return ""
    r = _ratio(mine.cpu_median, theirs.cpu_median)
    return "" if r is None else f"; CPU time {r:.2f}x"


def _nodiff_note(cells: dict[str, Cell], key: str, theirs: Cell | None) -> str:
    """Beside a patchtx figure, the same patch with the other way of reporting (diffs or not)."""
    other_key, words = {"patchtx": ("patchtx-nodiff", "with --no-diff"),
                        "patchtx-nodiff": ("patchtx", "printing the diffs")}.get(key, ("", ""))
    other = cells.get(other_key)
    if other is None or theirs is None:
        return ""
    r = _ratio(other.median, theirs.median)
    return "" if r is None else f"; {words} {_cell_time(other)} s, {r:.2f}x"


def evaluate_targets(results: dict[str, dict[str, Cell]], works: dict[str, wl.Workload],
                     fsyncs: dict[str, dict[str, dict[str, int] | None]],
                     warm: dict[str, float] | None = None) -> list[dict[str, object]]:
    targets: list[dict[str, object]] = []

    def med(w: str, a: str) -> float | None:
        cell = results.get(w, {}).get(a)
        return cell.median if cell else None

    def ratio_target(name: str, w: str, a: str, ref: str, limit: float) -> None:
        r = _ratio(med(w, a), med(w, ref))
        cells = results.get(w, {})
        mine, theirs = cells.get(a), cells.get(ref)
        bound = " (killed at the time limit: a lower bound)" if mine and mine.timed_out else ""
        targets.append({"target": name, "limit": limit, "measured": r,
                        "unit": "x", "met": None if r is None else r <= limit,
                        "lower_bound": bool(bound),
                        "cpu_ratio": _ratio(mine.cpu_median if mine else None,
                                            theirs.cpu_median if theirs else None),
                        "detail": f"{_cell_time(mine)} s vs {_cell_time(theirs)} s{bound}"
                                  + _cpu_note(mine, theirs) + _nodiff_note(cells, a, theirs)})

    # The goals users feel (DESIGN.md section 8), then the guards (start-up is not a goal).
    ratio_target("goal: many files, durable <= 1.0x Codex", "many-files", "patchtx", "codex", 1.0)
    ratio_target("goal: many files, --no-fsync <= 0.6x Codex", "many-files", "patchtx-nofsync",
                 "codex", 0.6)
    ratio_target("goal: huge file, --no-diff (like for like) <= 1.0x Codex", "huge-file",
                 "patchtx-nodiff", "codex", 1.0)
    ratio_target("goal: codemod (20,000 files, 10,000 updated), --no-diff <= 1.0x Codex", "codemod",
                 "patchtx-nodiff", "codex", 1.0)
    codemod = results.get("codemod", {})
    mine_cell, codex_cell = codemod.get("patchtx-nodiff"), codemod.get("codex")
    if mine_cell and codex_cell and mine_cell.maxrss_mib is not None and codex_cell.maxrss_mib:
        memory = mine_cell.maxrss_mib / codex_cell.maxrss_mib
        git_cell = codemod.get("git-apply")
        git_rss = f"; git apply {git_cell.maxrss_mib:.0f} MiB" if git_cell and git_cell.maxrss_mib else ""
        targets.append({"target": "goal: codemod peak memory <= 1.0x Codex's", "limit": 1.0,
                        "measured": memory, "unit": "x", "met": memory <= 1.0,
                        "detail": f"max RSS {mine_cell.maxrss_mib:.0f} MiB vs {codex_cell.maxrss_mib:.0f}"
                                  f" MiB{git_rss} (GNU time, warm-up run)"})
    ratio_target("goal: the syntax guard on many files <= 1.2x patchtx", "many-files", "patchtx-syntax",
                 "patchtx", 1.2)
    ratio_target("goal: miss <= 1.0x Codex's time to its error", "miss", "patchtx", "codex", 1.0)
    ratio_target("guard: tiny edit <= 3.5x python -c pass", "tiny-edit", "patchtx", "python-pass", 3.5)
    codex_tiny = med("tiny-edit", "codex")
    for key, name, limit in (
            ("mcp_minimal", "guard: tiny edit per call to a running patchtx mcp (minimal JSON-RPC "
                            "client) <= 0.75x Codex", 0.75),
            ("library", "guard: tiny edit per call through the library (warm) <= 0.5x Codex", 0.5)):
        per_call = (warm or {}).get(key)
        r = _ratio(per_call, codex_tiny)
        sdk = (warm or {}).get("mcp") if key == "mcp_minimal" else None
        floor = (warm or {}).get("mcp_floor") if key == "mcp_minimal" else None
        targets.append({"target": name, "limit": limit, "measured": r, "unit": "x",
                        "met": None if r is None else r <= limit,
                        "detail": f"{_fmt_s(per_call)} s per durable call (median of "
                                  f"{WARM_CALLS}) vs one run of Codex's binary {_fmt_s(codex_tiny)} s"
                                  + ("" if sdk is None else f"; through the official MCP client "
                                     f"{_fmt_s(sdk)} s, its round trip alone (a canned answer of the "
                                     f"same shape) {_fmt_s(floor)} s (issue 39: reported, not counted)")})
    cell = results.get("many-files", {}).get("patchtx")
    if cell and cell.maxrss_mib is not None:
        targets.append({"target": "peak memory (many files) <= 150 MiB", "limit": 150,
                        "measured": cell.maxrss_mib, "unit": "MiB",
                        "met": cell.maxrss_mib <= 150,
                        "detail": "max RSS of the patchtx process (GNU time, warm-up run)"})
    counts = fsyncs.get("many-files", {}).get("patchtx")
    if counts is not None and "many-files" in works:
        touched = works["many-files"].files_touched
        first, later = counts["first"], counts["later"]  # type: ignore[index]
        targets.append({"target": "fsyncs per transaction <= files touched + 4", "limit": touched + 4,
                        "measured": later["total"], "unit": "calls",
                        "met": later["total"] <= touched + 4,
                        "detail": f"many files: {later['fsync']} fsync + {later['fdatasync']} "
                                  f"fdatasync + {later['syncfs']} syncfs; {first['total']} in the "
                                  f"first transaction of a tree, which also creates .patchtx/; "
                                  f"{touched} paths touched; every workload in the table below"})
    return targets


def write_reports(out_dir: Path, env: dict[str, object], works: list[wl.Workload],
                  results: dict[str, dict[str, Cell]], appliers: list[Applier],
                  fsyncs: dict[str, dict[str, dict[str, int] | None]],
                  targets: list[dict[str, object]], args: argparse.Namespace, elapsed: float) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    mode = "quick" if args.quick else "full"
    command = ".venv/bin/python benchmarks/run.py" + (" --quick" if args.quick else "")

    # JSON
    data = {
        "mode": mode, "command": command, "runs": args.runs, "warmup": 1,
        "elapsed_seconds": round(elapsed, 1), "environment": env,
        "appliers": [{"key": a.key, "label": a.label, "description": a.description,
                      "unavailable": a.unavailable} for a in appliers],
        "workloads": [],
        "targets": targets,
    }
    for w in works:
        entry = w.summary()
        entry["results"] = {}
        for key, cell in results.get(w.name, {}).items():
            codex = results[w.name].get("codex")
            entry["results"][key] = {
                "label": cell.applier.label,
                "median_s": cell.median,
                "min_s": min(cell.times) if cell.times else None,
                "max_s": max(cell.times) if cell.times else None,
                "times_s": [round(t, 5) for t in cell.times],
                "warmup_s": cell.warmup.seconds if cell.warmup else None,
                "x_codex": _ratio(cell.median, codex.median if codex else None),
                "cpu_median_s": cell.cpu_median,
                "max_rss_mib": cell.maxrss_mib,
                "correct": cell.ok,
                "problems": sorted({p for s in ([cell.warmup] if cell.warmup else []) + cell.samples
                                    for p in s.problems}),
                "note": cell.note,
                "stderr_head": cell.stderr_head if w.expect_failure else None,
                "fsyncs": fsyncs.get(w.name, {}).get(key),
            }
        data["workloads"].append(entry)
    (out_dir / "results.json").write_text(json.dumps(data, indent=2) + "\n")

    # Markdown
    main = [w for w in works if w.group == "main"]
    used = [a for a in appliers if any(a.key in results.get(w.name, {}) for w in works)]
    md: list[str] = [f"# patchtx benchmarks ({mode} run)", ""]
    md += [f"Reproduce: `{command}` (from the repository root; see benchmarks/README.md). "
           f"Median wall time of {args.runs} runs after 1 warm-up ({3 * args.runs} for runs under "
           f"{SHORT_RUN_SECONDS:g} s on a tree under 1 MB: the tiny edit and the 10-file sweep), each "
           f"a whole process in a fresh copy of the tree; every result checked byte for byte against "
           f"the expected tree. "
           f"This run took {elapsed / 60:.1f} min.", ""]
    md += ["Machine: " + f"{env['cpu']}, {env['cores']} cores, {env['machine']}; work folder on "
           f"{env['workdir_filesystem']}; load average (1, 5, 15 min) {env['load_average_start']} at "
           f"the start, {env['load_average_end']} at the end. patchtx {env['patchtx']} ({env['patchtx_commit']}) on "
           f"{env['python']}; {env['codex']}; {env['git']}; {env['gnu_patch']}; peers: "
           + ", ".join(f"{k} {v}" for k, v in dict(env["peers"]).items()) + ".", ""]  # type: ignore[call-overload]
    md += ["## Median time (seconds; ratio to Codex in brackets)", ""]
    header = "| applier | " + " | ".join(w.title for w in main) + " |"
    md += [header, "|---|" + "---:|" * len(main)]
    for a in used:
        row = [a.label]
        for w in main:
            cell = results.get(w.name, {}).get(a.key)
            if cell is None or cell.median is None:
                row.append("–")
                continue
            codex = results[w.name].get("codex")
            r = _ratio(cell.median, codex.median if codex else None)
            text = _cell_time(cell) + (f" ({'> ' if cell.timed_out else ''}{r:.2f}×)"
                                       if r is not None and a.key != "codex" else "")
            if not cell.ok:
                text += " ✗"
            row.append(text)
        md.append("| " + " | ".join(row) + " |")
    md += ["", "✗ = the result was wrong (details below). Workloads:", ""]
    for w in works:
        s = w.summary()
        md.append(f"- **{w.title}** (`{w.name}`): {w.description}. Patch {s['patch_bytes']:,} "
                  f"bytes ({s['operations']} operations, {s['hunks']} hunks, "
                  f"{s['files_touched']} paths touched); tree {s['input_files']} files, "
                  f"{s['input_bytes']:,} bytes; fingerprint `{s['fingerprint']}`.")
    md += ["", "## Targets", "", "| target | measured | limit | met |", "|---|---:|---:|---|"]
    for t in targets:
        m = t["measured"]
        unit = t["unit"]
        shown = "–" if m is None else (("> " if t.get("lower_bound") else "") + f"{m:.2f}{unit}"
                                       if unit.startswith("x")  # type: ignore[union-attr]
                                       else f"{m:.1f} {unit}" if isinstance(m, float)
                                       else f"{m} {unit}")
        met = {True: "yes", False: "**no**", None: "not measured"}[t["met"]]  # type: ignore[index]
        md.append(f"| {t['target']} | {shown} ({t['detail']}) | {t['limit']} | {met} |")
    rows = [(w, fsyncs.get(w.name, {}).get("patchtx")) for w in works]
    rows = [(w, f) for w, f in rows if f is not None and not w.expect_failure]
    if rows:
        md += ["", "Durability calls of `patchtx` (durable) per transaction, against files touched "
               "+ 4:", "", "| workload | paths touched | limit | first transaction in the tree | "
               "later transactions | within the limit |", "|---|---:|---:|---:|---:|---|"]
        for w, f in rows:
            first = f["first"]["total"]  # type: ignore[index]
            later = f["later"]["total"]  # type: ignore[index]
            limit = w.files_touched + 4
            within = ("yes" if later <= limit else "**no**") + (
                "" if first <= limit else f" (first: **no**, {first - limit} over)")
            md.append(f"| {w.title} | {w.files_touched} | {limit} | {first} | {later} | {within} |")
    md += ["", "## Details", ""]
    for w in works:
        md += [f"### {w.title}", "", "| applier | median s | min–max s | runs | × Codex | CPU s "
               "| max RSS MiB | durability calls | result |",
               "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        codex = results.get(w.name, {}).get("codex")
        for key, cell in results.get(w.name, {}).items():
            r = _ratio(cell.median, codex.median if codex else None)
            f = fsyncs.get(w.name, {}).get(key)
            problems = sorted({p for s in ([cell.warmup] if cell.warmup else []) + cell.samples
                               for p in s.problems})
            result = "ok" if cell.ok else "✗ " + "; ".join(problems)
            if cell.applier.baseline:
                result = "baseline (not checked)"
            elif cell.timed_out:
                result = f"killed at the time limit ({args.timeout:g} s)"
            if cell.note:
                result += f" ({cell.note})"
            md.append(f"| {cell.applier.label} | {_cell_time(cell)} | "
                      f"{_fmt_s(min(cell.times))}–{_fmt_s(max(cell.times))} | {len(cell.times)} | "
                      f"{'–' if r is None else f'{r:.2f}'} | {_fmt_s(cell.cpu_median)} | "
                      f"{'–' if cell.maxrss_mib is None else f'{cell.maxrss_mib:.0f}'} | "
                      f"{_calls(f)} | {result} |")
        if w.expect_failure:
            md += ["", "What each applier said (first lines of stderr):", ""]
            for cell in results.get(w.name, {}).values():
                head = "\n".join(cell.stderr_head.splitlines()[:6])
                md += [f"- {cell.applier.label}:", "", "  ```", *("  " + x for x in
                                                                 head.splitlines()), "  ```"]
        md.append("")
    missing = [a for a in appliers if a.unavailable]
    if missing:
        md += ["## Not measured", ""] + [f"- {a.label}: {a.unavailable}" for a in missing] + [""]
    md += ["## Appliers", ""] + [f"- **{a.label}**: {a.description}" for a in appliers] + [""]
    md += ["Durability calls: fsync + fdatasync + syncfs counted by `strace -f -c -e "
           "trace=fsync,fdatasync,syncfs` in two extra, untimed runs: the first transaction in a "
           "fresh copy (it also creates `.patchtx/`) / a later one (with the `.patchtx/` the first "
           "left). Max RSS: GNU time's %M for "
           "the warm-up run. CPU: user + system time of the child (wait4), median. Appliers run "
           "with the runner's environment minus "
           + (", ".join(f"`{k}`" for k in DROPPED_ENV) or "nothing") + ".", ""]
    (out_dir / "results.md").write_text("\n".join(md))

    # Plot: the many-files shape at every size (sweep workloads and many-files itself).
    shape = [w for w in works if w.group == "sweep" or w.name == "many-files"]
    series = []
    for a in used:
        pts = []
        for w in shape:
            cell = results.get(w.name, {}).get(a.key)
            if cell and cell.median is not None and cell.ok:
                pts.append((float(len(w.codex_patch.encode())), cell.median))
        if pts:
            series.append((a.label, pts))
    sizes = ", ".join(str(w.params["updates"]) for w in sorted(shape, key=lambda w: len(w.codex_patch)))
    svg = svgplot.loglog(
        series, title=f"Time to apply vs patch size (many-files shape: {sizes} files updated)",
        xlabel="patch size (Codex format; git apply and patch get the equivalent unified diff)",
        ylabel="median wall time per process",
        notes=[f"{mode} run, {env['date']}; {env['cpu']}, {env['cores']} cores; "
               f"median of {args.runs} runs after a warm-up ({3 * args.runs} for runs under "
               f"{SHORT_RUN_SECONDS:g} s on a tree under 1 MB)", "Reproduce: " + command],
        bold=frozenset(a.label for a in used if a.key.startswith("patchtx") or a.key == "codex"))
    (out_dir / "time-vs-patch-size.svg").write_text(svg)


# -- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and 2 timed runs; writes to benchmarks/out/")
    parser.add_argument("--runs", type=int, help="timed runs per applier (default 5; quick 2)")
    parser.add_argument("--only", nargs="*", metavar="WORKLOAD", help="run only these workloads")
    parser.add_argument("--appliers", nargs="*", metavar="KEY", help="run only these appliers")
    parser.add_argument("--out", type=Path, help="report folder (default benchmarks/results, or "
                        "benchmarks/out with --quick)")
    parser.add_argument("--workdir", type=Path, help="scratch folder for workloads and runs "
                        "(default: a folder in the system temp dir; must not be tmpfs for the "
                        "fsync numbers to mean anything)")
    parser.add_argument("--codex", help="path of Codex's apply_patch (default: "
                        "$PATCHTX_CODEX_APPLY_PATCH, then the install script's cache)")
    parser.add_argument("--no-install", action="store_true",
                        help="do not install missing peers (Python venv, Codex binary)")
    parser.add_argument("--slow-cap", type=float, default=20.0, metavar="SECONDS",
                        help="an applier whose warm-up takes longer is timed once (default 20)")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="kill a run after this long; shown as '> SECONDS' (default 30)")
    parser.add_argument("--keep", action="store_true", help="keep the generated workloads")
    args = parser.parse_args(argv)
    if args.runs is None:
        args.runs = 2 if args.quick else 5
    out_dir = args.out or (HERE / ("out" if args.quick else "results"))
    workdir = (args.workdir or Path(tempfile.gettempdir()) / "patchtx-bench").resolve()
    if str(workdir).startswith(str(REPO) + os.sep):
        print("note: git apply runs outside any repository; GIT_CEILING_DIRECTORIES keeps it "
              "from the patchtx repository", file=sys.stderr)
    started = time.perf_counter()
    load_at_start = " ".join(f"{x:.2f}" for x in os.getloadavg())

    codex = find_codex(args.codex)
    if not args.no_install:
        if codex is None:
            print("installing the Codex reference binary ...", file=sys.stderr)
            codex = install_codex()
        problem = ensure_peers_venv()
        if problem:
            print(problem, file=sys.stderr)
    appliers = all_appliers(codex)
    if args.appliers:
        appliers = [a for a in appliers if a.key in args.appliers]
    for a in appliers:
        if a.unavailable:
            print(f"skipping {a.label}: {a.unavailable}", file=sys.stderr)

    print("generating workloads ...", file=sys.stderr)
    works = wl.suite(quick=args.quick)
    if args.only:
        works = [w for w in works if w.name in args.only]
    folders = {w.name: wl.materialize(w, workdir / "workloads") for w in works}
    runner = Runner(workdir, args.timeout)
    if (workdir / "runs").exists():  # left by an interrupted run: delete it, then let it settle
        runner.trash.mkdir(parents=True, exist_ok=True)
        (workdir / "runs").rename(runner.trash / "leftover-runs")
    runner.empty_trash(settle=True)
    results: dict[str, dict[str, Cell]] = {}
    fsyncs: dict[str, dict[str, dict[str, int] | None]] = {}

    for w in works:
        folder = folders[w.name]
        here = [a for a in appliers if a.runs_on(w) and not a.unavailable]
        cells = {a.key: Cell(a) for a in here}
        results[w.name] = cells
        # Short runs on a small tree are cheap and noisy in relative terms: time them 3x as often.
        small = sum(len(b) for b in w.input.values()) < SMALL_TREE_BYTES
        most = args.runs * (3 if small else 1)
        counted = sum(1 for key in ("patchtx", "patchtx-nofsync") if key in cells)
        print(f"[{w.name}] copying the tree for every run", file=sys.stderr)
        runner.prepare(folder, len(here) * (1 + most) + 2 * counted)
        print(f"[{w.name}] warm-up", file=sys.stderr)
        for a in here:
            cell = cells[a.key]
            cell.warmup = runner.sample(w, folder, a, cell, measure_rss=True)
            if cell.warmup.seconds > args.slow_cap or cell.warmup.timed_out:
                cell.skip_rest = True
                cell.note = ("" if cell.warmup.timed_out else
                             f"timed once: the warm-up took {cell.warmup.seconds:.0f} s")
        wanted = {a.key: args.runs * (3 if small and cells[a.key].warmup is not None
                                      and cells[a.key].warmup.seconds < SHORT_RUN_SECONDS
                                      else 1) for a in here}
        for r in range(max(wanted.values(), default=0)):
            order = here[r % len(here):] + here[: r % len(here)]
            for a in order:
                cell = cells[a.key]
                if not cell.skip_rest and len(cell.samples) < wanted[a.key]:
                    cell.samples.append(runner.sample(w, folder, a, cell))
        line = ", ".join(f"{c.applier.key} {_fmt_s(c.median)}{'' if c.ok else ' WRONG'}"
                         for c in cells.values())
        print(f"[{w.name}] {line}", file=sys.stderr)
        fsyncs[w.name] = {}
        for key in ("patchtx", "patchtx-nofsync"):
            if key not in cells:
                continue
            # The count does not depend on what is printed: for a run killed at the time limit
            # (rendering diffs), count the --no-diff run's calls instead and say so.
            source = key
            if cells[key].timed_out:
                source = "patchtx-nodiff" if key == "patchtx" and "patchtx-nodiff" in cells else ""
            if source:
                counts = runner.strace_fsyncs(w, folder, cells[source].applier)
                if counts is not None and source != key:
                    counts["counted_on"] = source  # type: ignore[assignment]
                fsyncs[w.name][key] = counts
        runner.unused(folder)

    warm_results: dict[str, float] = {}
    if "tiny-edit" in folders and not args.appliers:
        print("[tiny-edit] per call in a running process (library, patchtx mcp)", file=sys.stderr)
        for key, measure in (("library", lambda t: warm.library_per_call(
                                  t, WARM_CALLS, str(REPO / ".venv" / "bin" / "python"))),
                             ("mcp", lambda t: warm.mcp_per_call(
                                  t, WARM_CALLS, str(REPO / ".venv" / "bin" / "patchtx"))),
                             ("mcp_minimal", lambda t: warm.mcp_minimal_per_call(
                                  t, WARM_CALLS, str(REPO / ".venv" / "bin" / "patchtx"))),
                             ("mcp_floor", lambda t: warm.mcp_floor_per_call(
                                  t, WARM_CALLS, str(REPO / ".venv" / "bin" / "python")))):
            tree = runner.fresh_copy(folders["tiny-edit"])
            times = measure(tree)
            if key != "mcp_floor" and not warm.check(tree, WARM_CALLS):
                print(f"WRONG RESULTS: warm {key}", file=sys.stderr)
                return 1
            warm_results[key] = statistics.median(times)
            runner.discard(tree.parent)

    env = environment(codex, workdir)
    env["load_average_start"] = load_at_start
    targets = evaluate_targets(results, {w.name: w for w in works}, fsyncs, warm_results)
    elapsed = time.perf_counter() - started
    write_reports(out_dir, env, works, results, appliers, fsyncs, targets, args, elapsed)
    runner.empty_trash(settle=False)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    print((out_dir / "results.md").read_text())
    wrong = [(w, k) for w, cells in results.items() for k, c in cells.items() if not c.ok]
    if wrong:
        print(f"WRONG RESULTS: {wrong}", file=sys.stderr)
    return 1 if any(k.startswith("patchtx") for _, k in wrong) else 0


if __name__ == "__main__":
    sys.exit(main())
