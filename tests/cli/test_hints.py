"""Issue 42 item 6 (part): an empty patch input gets git apply's words, "No valid patches in
input", on patchtx apply; the apply_patch drop-in keeps Codex's message (parity)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PATCHTX = str(Path(sys.executable).parent / "patchtx")


@pytest.mark.parametrize("given", ["", "\n  \n"])
def test_an_empty_patch_is_no_valid_patches_in_input(tmp_path: Path, given: str) -> None:
    done = subprocess.run([PATCHTX, "apply", "-"], cwd=tmp_path, input=given, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("patchtx: error [parse_error]: No valid patches in input")
    assert "End Patch'" not in done.stderr.split("Give", 1)[0]
    assert "Nothing was changed." in done.stderr
