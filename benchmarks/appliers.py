"""The appliers compared by the runner, each run as a whole process in a fresh copy of the tree.

An applier turns (workload, run directory) into a command line, an optional file for stdin and
extra environment. Codex-format appliers get the patch on stdin, except for a workload marked
``argv_patch`` (the agent case), where the patch is the one command-line argument as Codex's
``apply_patch 'PATCH'`` takes it. ``git apply``, GNU ``patch`` and patchtx's ``-diff`` appliers get
the equivalent unified diff.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from workloads import Workload

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEERS_VENV = HERE / ".peers-venv"
PEERS_DIR = HERE / "peers"
CODEX_VERSION = os.environ.get("PATCHTX_CODEX_VERSION", "0.169.0")


@dataclass
class Invocation:
    argv: list[str]
    stdin: Path | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Applier:
    key: str
    label: str
    build: Callable[[Workload, Path, Path], Invocation]
    """(workload, workload folder with patch.txt/patch.diff, run directory) -> Invocation."""
    description: str
    only: tuple[str, ...] | None = None
    """Workload names this applier runs on (None: every workload)."""
    baseline: bool = False
    """A reference process (python -c pass): timed, its tree not checked."""
    python_peer: bool = False
    unavailable: str | None = None

    def runs_on(self, work: Workload) -> bool:
        return ((self.only is None or work.name in self.only)
                and (work.appliers is None or self.key in work.appliers))


def _venv_bin(name: str) -> Path:
    return REPO / ".venv" / "bin" / name


def find_codex(explicit: str | None = None) -> Path | None:
    """The Codex ``apply_patch`` (the codex multitool under that name): --codex, then
    $PATCHTX_CODEX_APPLY_PATCH, then the cache folder scripts/install-codex-reference.sh uses."""
    candidates = [explicit, os.environ.get("PATCHTX_CODEX_APPLY_PATCH")]
    cache = os.environ.get("PATCHTX_CODEX_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "patchtx-codex")
    candidates.append(os.path.join(cache, CODEX_VERSION, "bin", "apply_patch"))
    for c in candidates:
        if c and os.access(c, os.X_OK):
            path = Path(c)
            if path.name not in ("apply_patch", "applypatch"):
                return None  # the multitool dispatches on argv[0]; pass the apply_patch symlink
            return path
    return None


def install_codex() -> Path | None:
    script = REPO / "scripts" / "install-codex-reference.sh"
    if not script.exists():
        return None
    run = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        return None
    return Path(run.stdout.strip().splitlines()[-1])


def ensure_peers_venv() -> str | None:
    """Create benchmarks/.peers-venv with the pinned Python peers; return an error or None."""
    python = PEERS_VENV / "bin" / "python"
    marker = PEERS_VENV / ".installed"
    requirements = (HERE / "peers-requirements.txt").read_text()
    if marker.exists() and marker.read_text() == requirements:
        return None
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
        # apply-patch-py declares Requires-Python >=3.13 (see peers-requirements.txt).
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--ignore-requires-python", "-r", str(HERE / "peers-requirements.txt")],
                       check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"could not install the Python peers: {exc}"
    marker.write_text(requirements)
    return None


def peer_versions() -> dict[str, str]:
    python = PEERS_VENV / "bin" / "python"
    if not python.exists():
        return {}
    code = ("import importlib.metadata as m\n"
            "for n in ('apply-patch-py','codex-apply-patch','openai-agents'):\n"
            "    try: print(n, m.version(n))\n"
            "    except m.PackageNotFoundError: pass\n")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def _codex_format(argv: list[str], env: dict[str, str] | None = None
                  ) -> Callable[[Workload, Path, Path], Invocation]:
    def build(work: Workload, folder: Path, run: Path) -> Invocation:
        if work.argv_patch:
            return Invocation([*argv, work.codex_patch], env=dict(env or {}))
        return Invocation(list(argv), stdin=folder / "patch.txt", env=dict(env or {}))

    return build


def all_appliers(codex: Path | None) -> list[Applier]:
    peers_python = str(PEERS_VENV / "bin" / "python")
    peers_missing = None if (PEERS_VENV / "bin" / "python").exists() else \
        "benchmarks/.peers-venv is missing (run without --no-install)"

    def patchtx(durable: bool, *extra: str) -> Callable[[Workload, Path, Path], Invocation]:
        def build(work: Workload, folder: Path, run: Path) -> Invocation:
            if durable and work.argv_patch and not extra:
                return Invocation([str(_venv_bin("apply_patch")), work.codex_patch])
            flags = ([] if durable else ["--no-fsync"]) + list(extra)
            return Invocation([str(_venv_bin("patchtx")), "apply", *flags, "--root", str(run),
                               str(folder / "patch.txt")])

        return build

    def patchtx_diff(durable: bool) -> Callable[[Workload, Path, Path], Invocation]:
        def build(work: Workload, folder: Path, run: Path) -> Invocation:
            flags = [] if durable else ["--no-fsync"]
            return Invocation([str(_venv_bin("patchtx")), "apply", *flags, "--root", str(run),
                               str(folder / "patch.diff")])

        return build

    def git_apply(work: Workload, folder: Path, run: Path) -> Invocation:
        # Outside any repository git apply works like patch; the ceiling keeps it from finding
        # a repository above the run directory.
        return Invocation(["git", "apply", str(folder / "patch.diff")],
                          env={"GIT_CEILING_DIRECTORIES": str(run.parent)})

    def gnu_patch(work: Workload, folder: Path, run: Path) -> Invocation:
        return Invocation(["patch", "-p1", "--batch", "--silent", "--no-backup-if-mismatch",
                           "--reject-file=-", "-i", str(folder / "patch.diff")])

    return [
        Applier("patchtx", "patchtx (durable)", patchtx(True),
                "`patchtx apply --root RUN patch.txt` (default: durable, fsync/syncfs); for the tiny "
                "edit, the drop-in `apply_patch 'PATCH'`"),
        Applier("patchtx-nofsync", "patchtx --no-fsync", patchtx(False),
                "`patchtx apply --no-fsync --root RUN patch.txt`: same transaction and journal, no "
                "durability calls"),
        Applier("patchtx-nodiff", "patchtx --no-diff", patchtx(True, "--no-diff"),
                "`patchtx apply --no-diff --root RUN patch.txt`: durable, printing the summary "
                "without the unified diffs that `patchtx apply` prints by default (Codex prints "
                "only a summary)", only=("many-files", "huge-file", "codemod", "sweep-10", "sweep-100")),
        Applier("patchtx-syntax", "patchtx --syntax warn", patchtx(True, "--syntax", "warn"),
                "`patchtx apply --syntax warn --root RUN patch.txt`: durable, with the syntax guard "
                "parsing every file written (the guard's cost, against `patchtx`; warn, since the "
                "workload's source-like lines are not valid Python and refuse would refuse them)",
                only=("many-files", "sweep-10", "sweep-100")),
        Applier("patchtx-diff", "patchtx, git diff input", patchtx_diff(True),
                "`patchtx apply --root RUN patch.diff`: the same git-style unified diff that git "
                "apply and GNU patch get, as one durable transaction"),
        Applier("patchtx-diff-nofsync", "patchtx --no-fsync, git diff input", patchtx_diff(False),
                "`patchtx apply --no-fsync --root RUN patch.diff`: the unified diff, no durability "
                "calls (like git apply and GNU patch)"),
        Applier("codex", f"Codex apply_patch {CODEX_VERSION}",
                _codex_format([str(codex)] if codex else []),
                "the reference Rust binary (npm @openai/codex, the codex multitool invoked as "
                "`apply_patch`), patch on stdin (argv for the tiny edit); no fsync",
                unavailable=None if codex else "the Codex binary is not installed "
                "(bash scripts/install-codex-reference.sh)"),
        Applier("git-apply", "git apply", git_apply,
                "`git apply patch.diff` on the equivalent git-style unified diff, outside a "
                "repository (all-or-nothing in memory, then writes; no fsync)",
                unavailable=None if shutil.which("git") else "git is not installed"),
        Applier("gnu-patch", "GNU patch -p1", gnu_patch,
                "`patch -p1 --batch --silent --no-backup-if-mismatch --reject-file=- -i "
                "patch.diff` (file by file, no fsync)",
                unavailable=None if shutil.which("patch") else "patch is not installed"),
        Applier("apply-patch-py", "apply-patch-py", _codex_format(
                    [str(PEERS_VENV / "bin" / "apply-patch-py")]),
                "PyPI apply-patch-py: its console script `apply-patch-py` (patch on stdin or argv)",
                python_peer=True, unavailable=peers_missing),
        Applier("codex-apply-patch", "codex-apply-patch (PyO3)", _codex_format(
                    [peers_python, str(PEERS_DIR / "codex_apply_patch_cli.py")]),
                "PyPI codex-apply-patch (Codex's Rust code as a Python extension): "
                "`codex_apply_patch.apply_patch(text)` in peers/codex_apply_patch_cli.py",
                python_peer=True, unavailable=peers_missing),
        Applier("agents-apply-diff", "openai-agents apply_diff (module)", _codex_format(
                    [peers_python, str(PEERS_DIR / "agents_apply_diff_cli.py")],
                    env={"PEER_AGENTS_MODULE_ONLY": "1"}),
                "PyPI openai-agents: its V4A `apply_diff` per file, wrapped in "
                "peers/agents_apply_diff_cli.py; loads only agents/apply_diff.py",
                python_peer=True, unavailable=peers_missing),
        Applier("agents-sdk", "openai-agents apply_diff (SDK import)", _codex_format(
                    [peers_python, str(PEERS_DIR / "agents_apply_diff_cli.py")]),
                "the same wrapper importing the function as documented, `from agents import "
                "apply_diff` (loads the whole SDK); tiny edit only, as it adds the same import "
                "time to every workload",
                only=("tiny-edit",), python_peer=True, unavailable=peers_missing),
        Applier("python-pass", "python -c pass (baseline)",
                lambda work, folder, run: Invocation([str(_venv_bin("python")), "-c", "pass"]),
                "the interpreter patchtx runs on (.venv/bin/python), starting and doing nothing: "
                "the floor for any Python applier",
                only=("tiny-edit",), baseline=True),
    ]
