"""Finding and running the reference Codex ``apply_patch`` binary for the differential tests.

The reference is the released codex multitool from the npm package ``@openai/codex`` (version
``CODEX_VERSION``); invoked under the name ``apply_patch`` it behaves as Codex's apply_patch (arg0
dispatch). ``scripts/install-codex-reference.sh`` installs it into a cache folder outside the
repository and prints the path of the ``apply_patch`` symlink.

Lookup order: the environment variable ``PATCHTX_CODEX_APPLY_PATCH`` (the ``apply_patch`` symlink,
or the ``codex`` binary itself, for which a symlink is made in a temporary folder), then the install
that ``scripts/test.sh`` runs while the other tests run (``PATCHTX_CODEX_INSTALLING``: a folder
where it writes ``path``, ``log`` and, once done, ``status``; the first lookup waits for it), then
the cache folder ``${PATCHTX_CODEX_CACHE:-${XDG_CACHE_HOME:-~/.cache}/patchtx-codex}/<version>/bin/apply_patch``.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CODEX_VERSION = os.environ.get("PATCHTX_CODEX_VERSION", "0.169.0")
ENV_BINARY = "PATCHTX_CODEX_APPLY_PATCH"
ENV_DISABLE = "PATCHTX_NO_CODEX"
ENV_INSTALLING = "PATCHTX_CODEX_INSTALLING"
INSTALL_WAIT = 900.0
"""Seconds the differential tests wait for scripts/test.sh's install of the reference at most."""
INSTALL_SCRIPT = "scripts/install-codex-reference.sh"
ARG0_NAMES = ("apply_patch", "applypatch")

INSTALL_HELP = (
    f"The differential tests need the reference Codex binary (npm @openai/codex@{CODEX_VERSION}). "
    f"Install it with `bash {INSTALL_SCRIPT}` (npm; a 160 MB download, 404 MB on disk, 12 to 77 s "
    "the first time; it prints the path) and, if "
    f"you installed it somewhere else, point {ENV_BINARY} at the printed `apply_patch` path. "
    f"To run the rest of the suite without it, set {ENV_DISABLE}=1 (the differential tests are then "
    "deselected, and say so)."
)


class CodexNotFound(RuntimeError):
    pass


def cache_dir() -> Path:
    explicit = os.environ.get("PATCHTX_CODEX_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "patchtx-codex"


def _as_apply_patch(path: Path) -> Path:
    """The codex multitool dispatches on argv[0]: make sure it is invoked as ``apply_patch``."""
    if path.name in ARG0_NAMES:
        return path
    folder = Path(tempfile.mkdtemp(prefix="patchtx-codex-link-"))
    atexit.register(shutil.rmtree, folder, True)
    link = folder / "apply_patch"
    link.symlink_to(path.resolve())
    return link


class InstallFailed(CodexNotFound):
    """scripts/test.sh's install of the reference failed (no npm, no network): the message says why."""


def install_done() -> bool:
    """Whether the install scripts/test.sh started (``ENV_INSTALLING``) has finished, if any."""
    folder = os.environ.get(ENV_INSTALLING)
    return not folder or os.path.exists(os.path.join(folder, "status"))


def _installed(folder: Path) -> Path:
    """Wait for scripts/test.sh's install of the reference (in the background since the suite
    started), then its ``apply_patch``; InstallFailed with the install's last line otherwise."""
    deadline = time.monotonic() + INSTALL_WAIT
    while not (folder / "status").exists():
        if time.monotonic() > deadline:
            raise InstallFailed(f"{INSTALL_SCRIPT} did not finish in {INSTALL_WAIT:.0f} s")
        time.sleep(0.2)
    if (folder / "status").read_text().strip() == "0":
        return Path((folder / "path").read_text().strip())
    lines = [line for line in (folder / "log").read_text(errors="replace").splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() and "complete log" not in line]
    raise InstallFailed(("; ".join(errors[:2]) or (lines[-1] if lines else f"{INSTALL_SCRIPT} failed"))[:300])


@functools.cache
def find_codex_apply_patch() -> Path:
    """Return the ``apply_patch`` executable of the reference Codex; raise CodexNotFound."""
    explicit = os.environ.get(ENV_BINARY)
    if not explicit and os.environ.get(ENV_INSTALLING):
        explicit = str(_installed(Path(os.environ[ENV_INSTALLING])))
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise CodexNotFound(f"{ENV_BINARY}={explicit} is not an executable file. {INSTALL_HELP}")
        return _as_apply_patch(path)
    candidate = cache_dir() / CODEX_VERSION / "bin" / "apply_patch"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    raise CodexNotFound(f"No Codex binary at {candidate} and {ENV_BINARY} is not set. {INSTALL_HELP}")


@functools.cache
def codex_version() -> str:
    """The version the binary reports (``codex --version`` prints ``codex-cli 0.169.0``)."""
    native = find_codex_apply_patch().resolve()
    out = subprocess.run([str(native), "--version"], capture_output=True, text=True, timeout=30,
                         check=False)
    return out.stdout.strip().split()[-1] if out.stdout.strip() else ""


@dataclass(frozen=True)
class CodexRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run_codex(patch: str, cwd: str | os.PathLike[str], *, timeout: float = 30.0) -> CodexRun:
    """Run Codex's apply_patch with the patch as argv[1] in ``cwd`` (line endings preserved)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.fspath(cwd),
           "LC_ALL": "C.UTF-8", "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS": "1"}
    proc = subprocess.run([str(find_codex_apply_patch()), patch], cwd=cwd, env=env,
                          capture_output=True, timeout=timeout, check=False)
    return CodexRun(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                    proc.stderr.decode("utf-8", "replace"))
