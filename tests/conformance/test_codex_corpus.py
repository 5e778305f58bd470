"""Codex's own scenario corpus, run through the installed console scripts as Codex's runner does.

The runner (a copy of shared/conformance/run_codex_scenarios.py) checks the final tree byte for
byte and the exit status, and knows the scenarios where patchtx deliberately differs (010, 011:
overwrite refused by default; 015: nothing applied when a later operation fails).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


def test_every_codex_scenario_passes() -> None:
    apply_patch = BIN / "apply_patch"
    patchtx = BIN / "patchtx"
    assert apply_patch.exists() and patchtx.exists(), "install the package: pip install -e ."
    run = subprocess.run(
        [sys.executable, str(HERE / "run_codex_scenarios.py"), "--apply-patch", str(apply_patch),
         "--overwrite", f"{patchtx} apply --allow-overwrite -", "--scenarios",
         str(HERE / "codex-scenarios")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    last = run.stdout.strip().splitlines()[-1]
    assert run.returncode == 0, run.stdout + run.stderr
    assert last == "codex scenarios: 27/27 passed", last


def test_codex_stdout_and_stderr_texts(tmp_path: Path) -> None:
    """The success summary and the verbatim Codex error line reach an agent unchanged."""
    (tmp_path / "modify.txt").write_text("line1\nline2\n")
    patch = ("*** Begin Patch\n*** Add File: nested/new.txt\n+created\n*** Update File: modify.txt\n"
             "@@\n-line2\n+changed\n*** End Patch\n")
    ok = subprocess.run([str(BIN / "apply_patch"), patch], cwd=tmp_path, capture_output=True, text=True)
    assert (ok.returncode, ok.stderr) == (0, "")
    assert ok.stdout == "Success. Updated the following files:\nA nested/new.txt\nM modify.txt\n"
    bad = subprocess.run([str(BIN / "apply_patch"), patch.replace("+created", "+again")], cwd=tmp_path,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("Refusing to add nested/new.txt: the file already exists")
    assert "Nothing was changed." in bad.stderr
